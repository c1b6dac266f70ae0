package harness

import (
	"context"
	"fmt"
)

// Pool hands plug-in instances to goroutines: an instance is not safe for
// concurrent use, but one compiled Runtime can feed many, so N goroutines
// can compact N conversations in parallel. Instances are made lazily, up
// to Size, and reused; the circuit-breaker state of an instance travels
// with it, so a host that wants one breaker per conversation should route
// a conversation to the same instance or keep the pool at size 1.
type Pool struct {
	rt   *Runtime
	free chan *Instance
	sem  chan struct{}
}

// NewPool makes a pool of at most size instances of rt.
func NewPool(rt *Runtime, size int) *Pool {
	if size < 1 {
		size = 1
	}
	return &Pool{rt: rt, free: make(chan *Instance, size), sem: make(chan struct{}, size)}
}

// Get returns an idle instance, making one if the pool has room, or waits
// for one to be put back.
func (p *Pool) Get(ctx context.Context) (*Instance, error) {
	select {
	case in := <-p.free:
		return in, nil
	default:
	}
	select {
	case in := <-p.free:
		return in, nil
	case p.sem <- struct{}{}:
		in, err := p.rt.NewInstance(ctx)
		if err != nil {
			<-p.sem
			return nil, err
		}
		return in, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Put returns an instance to the pool.
func (p *Pool) Put(in *Instance) {
	select {
	case p.free <- in:
	default:
		// More instances than room: should not happen; close the spare.
		_ = in.Close(context.Background())
		<-p.sem
	}
}

// Call runs export on a pooled instance.
func (p *Pool) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	in, err := p.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("clipfold: pool: %w", err)
	}
	defer p.Put(in)
	return in.Call(ctx, export, input)
}

// Close closes the idle instances. Instances still out are closed with
// the Runtime.
func (p *Pool) Close(ctx context.Context) {
	for {
		select {
		case in := <-p.free:
			_ = in.Close(ctx)
		default:
			return
		}
	}
}
