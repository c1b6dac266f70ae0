package benchkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/clipfold/clipfold/internal/wasmhost"
)

// Estimator calls the plug-in's estimateTokens export
// (docs/spec.md#estimatetokens), so the truncation baseline counts tokens
// exactly as shouldCompact does.
type Estimator struct {
	rt   *wasmhost.Runtime
	inst *wasmhost.Instance
}

// NewEstimator loads the plug-in module wasm.
func NewEstimator(ctx context.Context, wasm []byte) (*Estimator, error) {
	rt, err := wasmhost.NewRuntime(ctx, wasmhost.Options{Wasm: wasm})
	if err != nil {
		return nil, err
	}
	inst, err := rt.NewInstance(ctx)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return &Estimator{rt: rt, inst: inst}, nil
}

// Close releases the plug-in.
func (e *Estimator) Close(ctx context.Context) { e.rt.Close(ctx) }

// Tokens is estimateTokens({messages}).
func (e *Estimator) Tokens(ctx context.Context, msgs []Message) (int64, error) {
	in, err := json.Marshal(map[string]any{"messages": Raws(msgs)})
	if err != nil {
		return 0, err
	}
	out, err := e.inst.Call(ctx, "estimateTokens", in)
	if err != nil {
		return 0, err
	}
	var res struct {
		Tokens *int64 `json:"tokens"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Tokens == nil {
		return 0, fmt.Errorf("estimateTokens: unexpected output %.200s", out)
	}
	return *res.Tokens, nil
}

// Truncate returns the longest suffix of msgs whose estimate is at most
// limit (the estimate only grows as messages are added, so a binary
// search finds it), and that estimate.
func (e *Estimator) Truncate(ctx context.Context, msgs []Message, limit int64) ([]Message, int64, error) {
	lo, hi := 0, len(msgs) // lo messages fit; find the largest
	var best int64
	for lo < hi {
		mid := (lo + hi + 1) / 2
		t, err := e.Tokens(ctx, msgs[len(msgs)-mid:])
		if err != nil {
			return nil, 0, err
		}
		if t <= limit {
			lo, best = mid, t
		} else {
			hi = mid - 1
		}
	}
	return msgs[len(msgs)-lo:], best, nil
}

// MeasuredCommit names the code measured: the last commit touching the
// plug-in, the command or the store, or any of extra (paths or git
// pathspecs: what else a benchmark runs), with "+ uncommitted changes"
// when the working tree differs from it there.
func MeasuredCommit(extra ...string) string {
	paths := append([]string{"core", "api", "plugin", "hostfuncs", "cmd", "harness", "go.mod"}, extra...)
	out, err := exec.Command("git", append([]string{"log", "-1", "--format=%h (%cs)", "--"}, paths...)...).Output()
	if err != nil {
		return "unknown commit"
	}
	label := "commit " + strings.TrimSpace(string(out))
	if dirty, err := exec.Command("git", append([]string{"status", "--porcelain", "--"}, paths...)...).Output(); err == nil && len(strings.TrimSpace(string(dirty))) > 0 {
		label += " (+ uncommitted changes)"
	}
	return label
}
