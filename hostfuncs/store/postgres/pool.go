package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultMaxConns is the default size of the store's connection pool.
const DefaultMaxConns = 10

// connPool is a minimal pool of pgx connections.
//
// Why not pgxpool: it needs github.com/jackc/puddle/v2, which the module's
// go.sum does not list, and this package may not change go.mod. The store
// only needs "give me an idle connection or dial one, up to a bound", which
// is this. Swapping in pgxpool later touches only this file and the few
// call sites of acquire/release.
type connPool struct {
	cfg  *pgx.ConnConfig
	slot chan struct{}  // one token per live (or dialing) connection
	idle chan *pgx.Conn // connections ready for use

	mu     sync.Mutex
	closed bool
}

var errPoolClosed = errors.New("store is closed")

func newConnPool(cfg *pgx.ConnConfig, maxConns int) *connPool {
	if maxConns < 1 {
		maxConns = DefaultMaxConns
	}
	return &connPool{cfg: cfg, slot: make(chan struct{}, maxConns), idle: make(chan *pgx.Conn, maxConns)}
}

func (p *connPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// acquire returns an idle connection, or dials a new one while fewer than
// maxConns exist, or waits for one to be released.
func (p *connPool) acquire(ctx context.Context) (*pgx.Conn, error) {
	for {
		if p.isClosed() {
			return nil, errPoolClosed
		}
		select {
		case c := <-p.idle:
			if c.IsClosed() {
				<-p.slot
				continue
			}
			return c, nil
		default:
		}
		select {
		case c := <-p.idle:
			if c.IsClosed() {
				<-p.slot
				continue
			}
			return c, nil
		case p.slot <- struct{}{}:
			c, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
			if err != nil {
				<-p.slot
				return nil, fmt.Errorf("connecting: %w", err)
			}
			return c, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a connection: %w", ctx.Err())
		}
	}
}

// release gives c back. A connection that is closed, or not idle on the
// server (a transaction left open by a failure), is discarded rather than
// handed to the next caller in an unknown state.
func (p *connPool) release(c *pgx.Conn) {
	healthy := !c.IsClosed() && !c.PgConn().IsBusy() && c.PgConn().TxStatus() == 'I'
	p.mu.Lock()
	if healthy && !p.closed {
		p.idle <- c // never blocks: idle has room for every slot
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = c.Close(ctx)
	cancel()
	<-p.slot
}

// close closes the idle connections; busy ones are closed when released.
func (p *connPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case c := <-p.idle:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = c.Close(ctx)
			cancel()
			<-p.slot
		default:
			return
		}
	}
}

// with runs fn on a pooled connection.
func (p *connPool) with(ctx context.Context, fn func(c *pgx.Conn) error) error {
	c, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer p.release(c)
	return fn(c)
}
