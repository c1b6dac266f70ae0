package chaos_test

import (
	"bytes"
	"crypto/rand"
	"math/big"
	"net/http/httptest"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/clipfold/clipfold/internal/fakellm"
	"github.com/stretchr/testify/require"
)

// TestKillAheadSQLite kills `clipfold run --ahead` (SIGKILL, at a random
// instant) while compactions prepared in the background wait for a slow
// summarizer: each time the archive is whole — the messages stored are a
// prefix of the session, each active or recalled, never both — and a new
// process then compacts the whole session on the same file, losing
// nothing.
func TestKillAheadSQLite(t *testing.T) {
	fake := &fakellm.Server{Latency: 50 * time.Millisecond, MaxLatency: 150 * time.Millisecond}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	s := loadSession(t)
	cache := t.TempDir()
	prefixes := make([]int, len(s.raw)+1) // run stores turn by turn: any prefix may be held
	for i := range prefixes {
		prefixes[i] = i
	}
	llm := []string{"--provider", "openai-compat", "--base-url", srv.URL, "--model", "m", "--api-key-env", "CHAOS_KEY"}
	env := append(os.Environ(), "CLIPFOLD_CACHE_DIR="+cache, "CLIPFOLD_LOCK_TIMEOUT=120s", "CHAOS_KEY=k")
	n := rounds(6)
	killed, inFlight := 0, 0
	span := 2 * time.Second
	for i := 0; i < n; i++ {
		a := sqliteArchive(t)
		args := append([]string{"run", conversationFile, "--ahead", "--model-max-tokens", "20000", "--turn-interval", "0s", "--json", "--quiet"}, a.flags...)
		cmd := exec.Command(cli(t), append(args, llm...)...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		begun := time.Now()
		require.NoError(t, cmd.Start())
		delay, _ := rand.Int(rand.Reader, big.NewInt(int64(span)))
		time.Sleep(time.Duration(delay.Int64()))
		calls, answered := fake.Calls(), fake.Answered()
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
			if calls > answered {
				inFlight++ // a summarizer request under way: a compaction prepared in the background
			}
		} else {
			require.NoError(t, err, "an unkilled run succeeds: %s", out.String())
			span = time.Since(begun) * 11 / 10
		}
		a.check(t, s, conversation, prefixes)

		// A new process on the same file: the whole session, nothing lost.
		cmd = a.compact(t, cache, conversationFile)
		cmd.Env = append(cmd.Env, "CHAOS_KEY=k")
		cmd.Args = append(cmd.Args, llm...)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "the compaction after the crash: %s", b)
		require.Equal(t, len(s.raw), a.check(t, s, conversation, prefixes), "every message is held")
	}
	t.Logf("%d of %d runs killed mid-way, %d of them with a summarizer request under way", killed, n, inFlight)
	require.Positive(t, inFlight, "no run was killed with a compaction under way")
}
