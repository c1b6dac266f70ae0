package core

import (
	"strings"
	"time"
)

// Breakers is the per-conversation circuit breaker of
// docs/spec.md#circuit-breaker. It lives as long as the plug-in instance (or
// the Go host's compactor): after MaxConsecutiveFailures failed compactions in
// a row, compress fails fast with breaker_open and calls nothing until the
// cooldown has passed; then one probe runs, whose success closes the breaker
// and whose failure re-opens it. Not every failure counts (countsForBreaker).
// The zero value is ready to use.
type Breakers struct {
	m map[string]*breaker
}

type breaker struct {
	failures int
	openedAt time.Time // when the last counted failure happened
}

// Failures returns the conversation's count of consecutive failures.
func (b *Breakers) Failures(conv string) int {
	if s := b.m[conv]; s != nil {
		return s.failures
	}
	return 0
}

// allow reports whether a compaction may run now. An open breaker whose
// cooldown has passed lets one probe through, whose outcome is recorded
// like any other.
func (b *Breakers) allow(conv string, now time.Time, c *Config) bool {
	s := b.m[conv]
	if s == nil || s.failures < c.MaxConsecutiveFailures {
		return true
	}
	return now.Sub(s.openedAt) >= time.Duration(c.BreakerCooldownMs)*time.Millisecond
}

func (b *Breakers) fail(conv string, now time.Time) {
	if b.m == nil {
		b.m = map[string]*breaker{}
	}
	s := b.m[conv]
	if s == nil {
		s = &breaker{}
		// A copy: conv is usually a view into the call's input, which the
		// map would otherwise keep alive (and the plug-in reuses small
		// staged inputs' buffers).
		b.m[strings.Clone(conv)] = s
	}
	s.failures++
	s.openedAt = now
}

func (b *Breakers) succeed(conv string) { delete(b.m, conv) }

// countsForBreaker reports whether a failed compaction counts toward the
// breaker: every failure code does but breaker_open (the breaker's own
// answer), commit_conflict (another compaction of the conversation
// committed first: it won, nothing is unhealthy) and no_gain (the history
// is already as small as a compaction makes it). Counting them opened the
// breaker on callers that only raced each other, and then refused every
// compaction for the cooldown.
func countsForBreaker(code string) bool {
	return code != FailBreakerOpen && code != FailConflict && code != FailNoGain
}
