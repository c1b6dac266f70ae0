package clipfold

import (
	"context"
	"sync"
)

// convLocks is one lock per conversation id: a compaction holds its
// conversation's from reading the stored history to the commit, so the
// compactions of one conversation on one Compactor take turns (each reads
// what the one before committed: none conflicts with another) while other
// conversations' go on beside them. An entry lives while a call holds or
// waits for it. The zero value is ready to use.
type convLocks struct {
	mu sync.Mutex
	m  map[string]*convLock
}

type convLock struct {
	token chan struct{} // full while the lock is held
	users int           // calls holding or waiting for it
}

// lock takes the lock of conversation id, waiting at most until ctx is
// done, and returns its release (which may be called more than once).
func (l *convLocks) lock(ctx context.Context, id string) (release func(), err error) {
	l.mu.Lock()
	e := l.m[id]
	if e == nil {
		if l.m == nil {
			l.m = map[string]*convLock{}
		}
		e = &convLock{token: make(chan struct{}, 1)}
		l.m[id] = e
	}
	e.users++
	l.mu.Unlock()
	leave := func() {
		l.mu.Lock()
		if e.users--; e.users == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
	select {
	case e.token <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-e.token
			leave()
		})
	}, nil
}

// held is how many conversations have a lock held or waited for (tests).
func (l *convLocks) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
