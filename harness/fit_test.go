package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// After a compaction the history fits
// (docs/spec.md#counting-tokens-and-the-window), through the real plug-in (and
// natively) on real stores: a tool loop whose recent tail alone is three times
// the target compacts under it in every message shape, each provider's pairing
// rule holding; clearing alone calls no LLM; a failure at any step of the new
// commit leaves the store as it was.

// longOutput is a tool output of a few thousand characters: what makes
// an agent's recent tail outgrow its window.
func longOutput(i int) string {
	var b strings.Builder
	for j := 0; j < 30; j++ {
		fmt.Fprintf(&b, "order A-%d line %d: parcel %d scanned at hub %d, status in_transit, eta day %d. ", i, j, 1000*i+j, j%7, j%5)
	}
	return b.String()
}

// toolLoop is n turns of shape with long tool outputs.
func toolLoop(shape string, n int) []json.RawMessage { return longTurns(shape, 0, n) }

// longTurns are turns from to to of shape with long tool outputs.
func longTurns(shape string, from, to int) []json.RawMessage {
	out := turns(shape, from, to)
	for i := range out {
		for k := from; k < to; k++ {
			if s := jsonText(output(k)); strings.Contains(string(out[i]), s) {
				out[i] = json.RawMessage(strings.Replace(string(out[i]), s, jsonText(longOutput(k)), 1))
			}
		}
	}
	return out
}

// checkPairing holds the providers' rule on a request: a message making
// tool calls is followed at once by the results of all of them, and no
// result comes anywhere else (OpenAI Chat: the tool messages right after
// the assistant's; Anthropic: the next user turn; Responses and the AI
// SDK: the outputs after their call). Messages are read as the plug-in
// reads them.
func checkPairing(t *testing.T, conv string, hist []json.RawMessage) {
	t.Helper()
	checkToolUnits(t, conv, hist)
	b, _ := json.Marshal(hist)
	msgs, _, err := api.DecodeHistory(conv, b)
	require.NoError(t, err)
	var open []string // calls of the last calling message not answered yet
	for i := range msgs {
		m := &msgs[i]
		ans := answers(m)
		if len(ans) == 0 && m.Role != core.RoleTool && !m.JoinNext {
			require.Empty(t, open, "message %d comes before the results of calls %v: %s", i, open, hist[i])
		}
		for _, id := range ans {
			for k, o := range open {
				if o == id {
					open = append(open[:k], open[k+1:]...)
					break
				}
			}
		}
		for _, tc := range m.ToolCalls {
			if !tc.Result && tc.ID != "" {
				open = append(open, tc.ID)
			}
		}
	}
}

// syncNew appends to st what of hist the conversation holds nowhere yet,
// as the hosts do, and returns the active history and its ids.
func syncNew(t *testing.T, st store.Store, conv string, hist []json.RawMessage) ([]json.RawMessage, []string) {
	t.Helper()
	ctx := context.Background()
	msgs, err := clipfold.DecodeHistory(conv, hist)
	require.NoError(t, err)
	_, err = st.AppendNew(ctx, conv, msgs)
	require.NoError(t, err)
	active, err := st.ActiveMessages(ctx, conv)
	require.NoError(t, err)
	raws, ids := make([]json.RawMessage, len(active)), make([]string, len(active))
	for i := range active {
		raws[i], ids[i] = active[i].Raw, active[i].ID
	}
	return raws, ids
}

func TestWindowToolHeavyTailEveryShape(t *testing.T) {
	est := newInstance(t)
	for _, shape := range []string{"chat", "anthropic", "responses", "ai_sdk", "langchain"} {
		hist := toolLoop(shape, 10)
		keep := len(shapeTurns[shape](0)) * 3 // the last three turns
		in, _ := json.Marshal(map[string]any{"messages": hist[len(hist)-keep:]})
		out, err := est.Call(context.Background(), "estimateTokens", in)
		require.NoError(t, err)
		target := int(gjson.GetBytes(out, "tokens").Int()) / 3
		cfg := map[string]any{"keep_recent": keep, "target_tokens": target, "summarizer": "extractive"}
		t.Run(shape+"/caller-owned", func(t *testing.T) {
			bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
				st, err := sqlite.Open(sqlite.MemoryPath)
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				conv := "tail-" + shape
				res := mk(&hostfuncs.Host{Store: st}).compress(t, shapeInput(t, conv, hist, map[string]any{"history_owner": "caller", "config": cfg}))
				checkWindow(t, st, conv, hist, res, target)
			})
		})
		for name, open := range stores(t) {
			t.Run(shape+"/store-owned/"+name, func(t *testing.T) {
				st := open(t)
				conv := "tail-" + shape
				active, ids := syncNew(t, st, conv, hist)
				res := newWasmCompressor(t, &hostfuncs.Host{Store: st}).compress(t,
					shapeInput(t, conv, active, map[string]any{"history_ids": ids, "config": cfg}))
				checkWindow(t, st, conv, hist, res, target)
				after, _ := syncNew(t, st, conv, nil)
				require.Equal(t, len(res.Get("history").Array()), len(after))
				for i, m := range res.Get("history").Array() {
					require.Equal(t, m.Raw, string(after[i]), "the store holds what the result returned")
				}
				// The caller sends its whole list again: nothing is
				// appended twice (originals and replacements are held).
				again, _ := syncNew(t, st, conv, hist)
				require.Equal(t, len(after), len(again))
			})
		}
	}
}

// checkWindow: a success within the target, pairs intact, cleared
// results whole in recall, nothing lost.
func checkWindow(t *testing.T, st store.Store, conv string, hist []json.RawMessage, res gjson.Result, target int) {
	t.Helper()
	ctx := context.Background()
	require.False(t, res.Get("failed").Bool(), "%s: %s", res.Get("failure_code"), res.Get("failure_message"))
	require.LessOrEqual(t, int(res.Get("tokens_estimate_after").Int()), target, "the window is a promise")
	require.Positive(t, res.Get("tool_results_cleared").Int())
	out := rawList(res.Get("history").Array())
	checkPairing(t, conv, out)
	require.Equal(t, string(hist[len(hist)-1]), string(out[len(out)-1]), "the newest message is kept whole")
	returned := map[string]bool{}
	for _, m := range out {
		returned[string(m)] = true
		content := string(m)
		if i := strings.Index(content, core.RecallMarker); i >= 0 {
			id, err := strconv.Unquote(strings.SplitN(strings.ReplaceAll(content[i+len(core.RecallMarker):], `\"`, `"`), " ", 2)[0])
			require.NoError(t, err, content)
			_, err = st.Recall(ctx, conv, id)
			require.NoError(t, err, "the id a replacement names is in recall: %s", content)
		}
	}
	msgs, err := clipfold.DecodeHistory(conv, hist)
	require.NoError(t, err)
	for _, m := range msgs {
		if returned[string(m.Raw)] {
			continue
		}
		r, err := st.Recall(ctx, conv, m.ID)
		require.NoError(t, err, "lost: %s", m.Raw)
		require.Equal(t, string(m.Raw), string(r.Raw))
	}
}

// failLLM fails every call: a compaction that only clears calls none.
type failLLM struct{ calls int }

func (f *failLLM) Complete(context.Context, *core.ModelRequest) (core.ModelResponse, error) {
	f.calls++
	return core.ModelResponse{}, &core.LLMError{Code: core.LLMAuth, Message: "injected: invalid API key", Retryable: false}
}

func TestWindowClearingAloneCallsNoLLM(t *testing.T) {
	hist := toolLoop("chat", 8)
	est := newInstance(t)
	in, _ := json.Marshal(map[string]any{"messages": hist})
	out, err := est.Call(context.Background(), "estimateTokens", in)
	require.NoError(t, err)
	full := int(gjson.GetBytes(out, "tokens").Int())
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			llm := &failLLM{}
			active, ids := syncNew(t, st, "clear", hist)
			c := newWasmCompressor(t, &hostfuncs.Host{LLM: llm, Store: st})
			cfg := map[string]any{"clear_tool_results": 2, "clear_exclude_tools": []string{"search_notes"},
				"model_max_tokens": full * 10 / 8 * 6 / 10, "summarizer": "llm"}
			res := c.compress(t, shapeInput(t, "clear", active, map[string]any{"history_ids": ids, "config": cfg}))
			require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
			require.Zero(t, res.Get("llm_calls").Int())
			require.Zero(t, llm.calls)
			require.EqualValues(t, 6, res.Get("tool_results_cleared").Int())
			require.True(t, res.Get("clip_archive").Type == gjson.Null)
			require.LessOrEqual(t, int(res.Get("tokens_estimate_after").Int()), full*10/8*6/10*8/10)
			checkPairing(t, "clear", rawList(res.Get("history").Array()))

			// clear_exclude_tools: lookup_order's results are never cleared,
			// so clearing alone is not enough and the LLM is needed (and fails).
			cfg["clear_exclude_tools"] = []string{"lookup_order"}
			active, ids = syncNew(t, st, "clear2", hist)
			res = c.compress(t, shapeInput(t, "clear2", active, map[string]any{"history_ids": ids, "config": cfg}))
			require.True(t, res.Get("failed").Bool())
			require.Equal(t, "llm_failed", res.Get("failure_code").String())
			require.Positive(t, llm.calls)
		})
	}
}

// TestWindowFaultsLoseNothing: the matrix of faults of TestFaultInjection
// on compactions whose commit replaces kept messages (the guarantee's
// clearing beside a summary, and a clearing alone): every failure leaves
// the SQLite store byte for byte as it was.
func TestWindowFaultsLoseNothing(t *testing.T) {
	ctx := context.Background()
	hist := toolLoop("chat", 10)
	for _, tc := range []struct {
		name  string
		cfg   map[string]any
		lists bool // whether it calls memory_list (clearing alone, store-owned, calls only the commit)
	}{
		{"summary and clearing", map[string]any{"keep_recent": 12, "target_tokens": 2500, "chunk_size": 6, "summarizer": "llm"}, true},
		{"clearing alone", map[string]any{"clear_tool_results": 1, "model_max_tokens": 12000}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := stores(t)["sqlite"](t)
			active, ids := syncNew(t, probe, "probe", hist)
			clean := newWasmCompressor(t, &hostfuncs.Host{LLM: &scriptLLM{}, Store: probe}).compress(t,
				shapeInput(t, "probe", active, map[string]any{"history_ids": ids, "config": tc.cfg}))
			require.False(t, clean.Get("failed").Bool(), clean.Get("failure_message").String())
			require.Positive(t, clean.Get("tool_results_cleared").Int())
			fh := &faultHost{}
			c := newWasmCompressor(t, fh)
			for i, fc := range faultMatrix(int(clean.Get("llm_calls").Int())) {
				if fc.want == "" || (fc.f.fn == "memory_list" && !tc.lists) {
					continue
				}
				t.Run(fmt.Sprintf("%s_%d/%s/persist=%v", fc.f.fn, fc.f.at, fc.f.kind, fc.f.persist), func(t *testing.T) {
					s := stores(t)["sqlite"](t)
					cid := fmt.Sprintf("w%d", i)
					active, ids := syncNew(t, s, cid, hist)
					before, err := s.(store.Dumper).Dump(ctx)
					require.NoError(t, err)
					fh.reset(&hostfuncs.Host{LLM: &scriptLLM{}, Store: s}, fc.f)
					res := c.compress(t, shapeInput(t, cid, active, map[string]any{"history_ids": ids, "config": tc.cfg}))
					require.Equal(t, fc.want, res.Get("failure_code").String(), res.Get("failure_message").String())
					require.Equal(t, len(active), len(res.Get("history").Array()), "the input comes back")
					after, err := s.(store.Dumper).Dump(ctx)
					require.NoError(t, err)
					require.Equal(t, before, after, "the store changed on a failed compaction")
				})
			}
		})
	}
}

// TestWindowProperty: the guarantee as a property over random tool loops
// in every shape, owned by the store or the caller, random windows and
// settings (natively: the plug-in's own code, faster; the shapes' tests
// above run the .wasm): a success is within the window, pairs intact,
// nothing lost; the only failure is over_window (a window smaller than
// what cannot be summarized) or no_gain.
func TestWindowProperty(t *testing.T) {
	shapes := []string{"chat", "anthropic", "responses", "ai_sdk", "langchain"}
	est := newInstance(t)
	succeeded, edited := 0, 0
	for seed := 0; seed < 40; seed++ {
		shape := shapes[seed%len(shapes)]
		n := 3 + (seed*7)%9
		hist := toolLoop(shape, n)
		if seed%3 == 0 {
			hist = append(turns(shape, 0, n), longTurns(shape, n, n+2)...) // short outputs, then long

		}
		in, _ := json.Marshal(map[string]any{"messages": hist})
		out, err := est.Call(context.Background(), "estimateTokens", in)
		require.NoError(t, err)
		total := int(gjson.GetBytes(out, "tokens").Int())
		window := 400 + (seed*7919)%max(1, total)
		cfg := map[string]any{"keep_recent": (seed * 3) % 14, "chunk_size": 2 + seed%7}
		if seed%2 == 0 {
			cfg["target_tokens"] = window
		} else {
			cfg["model_max_tokens"] = window * 10 / 8
			window = window * 10 / 8 * 8 / 10
		}
		if seed%4 == 1 {
			cfg["clear_tool_results"] = seed % 3
		}
		caller := seed%5 < 2
		t.Run(fmt.Sprintf("%d-%s-caller=%v", seed, shape, caller), func(t *testing.T) {
			st, err := sqlite.Open(sqlite.MemoryPath)
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			c := nativeCompressor{api.DefaultEnv(), &hostfuncs.Host{Store: st}}
			conv := "prop"
			var res gjson.Result
			if caller {
				res = c.compress(t, shapeInput(t, conv, hist, map[string]any{"history_owner": "caller", "config": cfg}))
			} else {
				active, ids := syncNew(t, st, conv, hist)
				res = c.compress(t, shapeInput(t, conv, active, map[string]any{"history_ids": ids, "config": cfg}))
			}
			if res.Get("failed").Bool() {
				require.Contains(t, []string{"over_window", "no_gain"}, res.Get("failure_code").String(), res.Get("failure_message").String())
				if res.Get("failure_code").String() == "over_window" {
					require.Less(t, window, 1200, "over_window only for a small window: %s", res.Get("failure_message"))
				}
				return
			}
			succeeded++
			if res.Get("tool_results_cleared").Int()+res.Get("messages_truncated").Int() > 0 {
				edited++
			}
			require.LessOrEqual(t, int(res.Get("tokens_estimate_after").Int()), max(window, int(res.Get("tokens_estimate_before").Int())))
			if res.Get("tokens_estimate_before").Int() > int64(window) {
				require.LessOrEqual(t, int(res.Get("tokens_estimate_after").Int()), window, "the window is a promise")
			}
			out := rawList(res.Get("history").Array())
			checkPairing(t, conv, out)
			returned := map[string]bool{}
			for _, m := range out {
				returned[string(m)] = true
			}
			msgs, err := clipfold.DecodeHistory(conv, hist)
			require.NoError(t, err)
			for _, m := range msgs {
				if returned[string(m.Raw)] {
					continue
				}
				r, err := st.Recall(context.Background(), conv, m.ID)
				require.NoError(t, err, "lost: %s", m.Raw)
				require.Equal(t, string(m.Raw), string(r.Raw))
			}
		})
	}
	require.Greater(t, succeeded, 30)
	require.Greater(t, edited, 10, "kept messages were replaced in many")
}
