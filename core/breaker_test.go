package core

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestBreakerKeyIsACopy: the conversation id usually views the call's
// input; the breaker must not keep (or see changes to) those bytes.
func TestBreakerKeyIsACopy(t *testing.T) {
	buf := []byte("conv-1")
	view := unsafe.String(&buf[0], len(buf))
	var b Breakers
	b.fail(view, time.Unix(0, 0))
	copy(buf, "conv-2") // the buffer is reused for another input
	if got := b.Failures("conv-1"); got != 1 {
		t.Fatalf("Failures(conv-1) = %d after the input's bytes changed, want 1", got)
	}
	if got := b.Failures("conv-2"); got != 0 {
		t.Fatalf("Failures(conv-2) = %d, want 0", got)
	}
}

// lostRace is an archive whose every commit finds that another compaction
// of the conversation committed first.
type lostRace struct{ memArchive }

func (*lostRace) Commit(*Commit) error {
	return &Error{Code: ErrConflict.Code, Msg: `conversation "c": remove_message_ids no longer exist: ["m0"]`}
}

// TestBreakerCountsOnlyFailuresOfSummarizing: commit_conflict (another
// compaction won) and no_gain never count toward the breaker, however many
// in a row, nor reset it; every other failure does.
func TestBreakerCountsOnlyFailuresOfSummarizing(t *testing.T) {
	c := DefaultConfig()
	c.KeepRecent, c.MaxConsecutiveFailures, c.MaxSummaryTokens = 4, 3, 50
	clock := &testClock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	breakers := &Breakers{}
	llm := &fullLLM{}
	run := func(mem interface {
		Memory
		Committer
	}, hist []Message, cfg Config) CompressResult {
		t.Helper()
		clock.t = clock.t.Add(time.Second)
		return Compress(&CompressInput{ConversationID: "c", History: hist, Config: cfg, OperationID: "op"},
			Ports{LLM: llm, Memory: mem, Committer: mem, Clock: clock, Breakers: breakers})
	}
	want := func(res CompressResult, code string, failures int) {
		t.Helper()
		if !res.Failed || res.FailureCode != code || res.ConsecutiveFailures != failures {
			t.Fatalf("got failed=%v %s (%s), %d consecutive failures; want %s, %d",
				res.Failed, res.FailureCode, res.FailureMessage, res.ConsecutiveFailures, code, failures)
		}
	}
	// Short messages and summaries of the whole max_tokens: never a gain.
	tiny := plainHistory(12)
	for i := range tiny {
		tiny[i].Content = "ok " + strconv.Itoa(i)
	}
	for i := 0; i < 10; i++ {
		res := run(&lostRace{}, plainHistory(12), c)
		want(res, FailConflict, 0)
		if !strings.HasPrefix(res.FailureMessage, "another compaction of this conversation won") ||
			!strings.Contains(res.FailureMessage, "no longer exist") {
			t.Fatalf("commit_conflict message %q", res.FailureMessage)
		}
		want(run(&memArchive{}, tiny, c), FailNoGain, 0)
	}
	// Failures of summarizing count; a lost race or no gain between them
	// neither adds to the count nor resets it.
	llm.fail = true
	want(run(&memArchive{}, plainHistory(12), c), FailLLM, 1)
	llm.fail = false
	want(run(&lostRace{}, plainHistory(12), c), FailConflict, 1)
	want(run(&memArchive{}, tiny, c), FailNoGain, 1)
	llm.fail = true
	want(run(&memArchive{}, plainHistory(12), c), FailLLM, 2)
	want(run(&memArchive{}, plainHistory(12), c), FailLLM, 3)
	want(run(&memArchive{}, plainHistory(12), c), FailBreakerOpen, 3)
	// A success closes it.
	llm.fail = false
	clock.t = clock.t.Add(time.Duration(c.BreakerCooldownMs) * time.Millisecond)
	if res := run(&memArchive{}, plainHistory(12), c); res.Failed || res.ConsecutiveFailures != 0 {
		t.Fatalf("one probe after the cooldown: failed=%v %s, %d", res.Failed, res.FailureMessage, res.ConsecutiveFailures)
	}
}
