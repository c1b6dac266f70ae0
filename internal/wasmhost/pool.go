package wasmhost

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
type Pool = PoolOf[*Instance]

// NewPool makes a pool of at most size instances of rt.
func NewPool(rt *Runtime, size int) *Pool { return NewPoolOf(size, rt.NewInstance) }

// Caller is what a pool holds: an instance of the plug-in.
type Caller interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
	Close(ctx context.Context) error
}

// PoolOf is Pool for any kind of instance; newInstance makes one.
type PoolOf[I Caller] struct {
	newInstance func(context.Context) (I, error)
	free        chan I
	sem         chan struct{}
}

// NewPoolOf makes a pool of at most size instances made by newInstance.
func NewPoolOf[I Caller](size int, newInstance func(context.Context) (I, error)) *PoolOf[I] {
	if size < 1 {
		size = 1
	}
	return &PoolOf[I]{newInstance: newInstance, free: make(chan I, size), sem: make(chan struct{}, size)}
}

// Get returns an idle instance, making one if the pool has room, or waits
// for one to be put back.
func (p *PoolOf[I]) Get(ctx context.Context) (I, error) {
	select {
	case in := <-p.free:
		return in, nil
	default:
	}
	select {
	case in := <-p.free:
		return in, nil
	case p.sem <- struct{}{}:
		in, err := p.newInstance(ctx)
		if err != nil {
			<-p.sem
			var zero I
			return zero, err
		}
		return in, nil
	case <-ctx.Done():
		var zero I
		return zero, ctx.Err()
	}
}

// Put returns an instance to the pool.
func (p *PoolOf[I]) Put(in I) {
	select {
	case p.free <- in:
	default:
		// More instances than room: should not happen; close the spare.
		_ = in.Close(context.Background())
		<-p.sem
	}
}

// Call runs export on a pooled instance.
func (p *PoolOf[I]) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	in, err := p.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("clipfold: pool: %w", err)
	}
	defer p.Put(in)
	return in.Call(ctx, export, input)
}

// Close closes the idle instances. Instances still out are closed with
// the Runtime.
func (p *PoolOf[I]) Close(ctx context.Context) {
	for {
		select {
		case in := <-p.free:
			_ = in.Close(ctx)
		default:
			return
		}
	}
}
