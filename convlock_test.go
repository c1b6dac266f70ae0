package clipfold

import (
	"context"
	"testing"
	"time"
)

// One conversation's lock is taken in turn, another's beside it; a wait
// ends with its context; entries go away with their last user.
func TestConvLocks(t *testing.T) {
	var l convLocks
	ctx := context.Background()
	release, err := l.lock(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := l.lock(ctx, "c2") // another conversation: no wait
	if err != nil {
		t.Fatal(err)
	}
	other()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := l.lock(short, "c1"); err != context.DeadlineExceeded {
		t.Fatalf("a wait past its context: %v, want %v", err, context.DeadlineExceeded)
	}
	got := make(chan func())
	go func() {
		r, err := l.lock(ctx, "c1")
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("c1's lock was taken twice")
	case <-time.After(20 * time.Millisecond):
	}
	release()
	release() // twice is once
	second := <-got
	if n := l.held(); n != 1 {
		t.Fatalf("%d conversations held, want 1", n)
	}
	second()
	if n := l.held(); n != 0 {
		t.Fatalf("%d conversations held after every release, want 0", n)
	}
}
