package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// Compress on histories in every message shape of docs/spec.md#message-shapes,
// through the .wasm and natively, on real stores: the clip-archive comes back
// in the history's shape, kept messages byte for byte, tool calls never apart
// from their results; and the two ways frameworks keep their messages
// (history_owner "caller") work turn after turn with no duplicate, no no_gain
// and no conflict.

// shapeTurn is turn i of a conversation in one shape: a question, a tool
// call, its result, an answer. No ids (LangChain's carry their own), no
// created_at: what frameworks send.
type shapeTurn func(i int) []string

func jsonText(s string) string { b, _ := json.Marshal(s); return string(b) }

var shapeTurns = map[string]shapeTurn{
	"chat": func(i int) []string {
		return []string{
			fmt.Sprintf(`{"role":"user","content":%s}`, jsonText(question(i))),
			fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"lookup_order","arguments":"{\"order\":\"A-%d\"}"}}]}`, i, i),
			fmt.Sprintf(`{"role":"tool","tool_call_id":"call_%d","content":%s}`, i, jsonText(output(i))),
			fmt.Sprintf(`{"role":"assistant","content":%s}`, jsonText(answer(i))),
		}
	},
	"anthropic": func(i int) []string {
		return []string{
			fmt.Sprintf(`{"role":"user","content":%s}`, jsonText(question(i))),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_%d","name":"lookup_order","input":{"order":"A-%d"}}]}`, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":[{"type":"text","text":%s}]}]}`, i, jsonText(output(i))),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}]}`, jsonText(answer(i))),
		}
	},
	"responses": func(i int) []string {
		return []string{
			fmt.Sprintf(`{"role":"user","content":%s}`, jsonText(question(i))),
			fmt.Sprintf(`{"type":"reasoning","id":"rs_%d","summary":[]}`, i),
			fmt.Sprintf(`{"type":"function_call","id":"fc_%d","call_id":"call_%d","name":"lookup_order","arguments":"{\"order\":\"A-%d\"}"}`, i, i, i),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"call_%d","output":%s}`, i, jsonText(output(i))),
			fmt.Sprintf(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":%s}]}`, jsonText(answer(i))),
		}
	},
	"ai_sdk": func(i int) []string {
		return []string{
			fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}]}`, jsonText(question(i))),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool-call","toolCallId":"tc_%d","toolName":"lookup_order","input":{"order":"A-%d"}}]}`, i, i),
			fmt.Sprintf(`{"role":"tool","content":[{"type":"tool-result","toolCallId":"tc_%d","toolName":"lookup_order","output":{"type":"text","value":%s}}]}`, i, jsonText(output(i))),
			fmt.Sprintf(`{"role":"assistant","content":%s}`, jsonText(answer(i))),
		}
	},
	"langchain": func(i int) []string {
		return []string{
			fmt.Sprintf(`{"type":"human","content":%s,"id":"h%d"}`, jsonText(question(i)), i),
			fmt.Sprintf(`{"type":"ai","content":"","tool_calls":[{"name":"lookup_order","args":{"order":"A-%d"},"id":"call_%d","type":"tool_call"}],"id":"a%d"}`, i, i, i),
			fmt.Sprintf(`{"type":"tool","content":%s,"tool_call_id":"call_%d","id":"t%d"}`, jsonText(output(i)), i, i),
			fmt.Sprintf(`{"type":"ai","content":%s,"tool_calls":[],"id":"r%d"}`, jsonText(answer(i)), i),
		}
	},
}

// archiveHead is how each shape's clip-archive starts
// (docs/spec.md#message-shapes) when a user turn follows it; archiveTurnHead
// when what follows it does not start with a user turn (a compaction in
// the middle of a tool loop): then it is a user turn itself.
var archiveHead = map[string]string{
	"chat":      `{"role":"system","content":"[Context Summary`,
	"anthropic": `{"role":"user","content":"[Context Summary`,
	"responses": `{"type":"message","role":"system","content":"[Context Summary`,
	"ai_sdk":    `{"role":"system","content":"[Context Summary`,
	"langchain": `{"type":"system","content":"[Context Summary`,
}

var archiveTurnHead = map[string]string{
	"chat":      `{"role":"user","content":"[Context Summary`,
	"anthropic": `{"role":"user","content":"[Context Summary`,
	"responses": `{"type":"message","role":"user","content":"[Context Summary`,
	"ai_sdk":    `{"role":"user","content":"[Context Summary`,
	"langchain": `{"type":"human","content":"[Context Summary`,
}

// checkArchiveHead checks that hist starts with a clip-archive in the
// shape's form for what follows it, and that its first message other than
// a system message is a user turn.
func checkArchiveHead(t *testing.T, shape string, hist []json.RawMessage) {
	t.Helper()
	b, _ := json.Marshal(hist)
	msgs, _, err := api.DecodeHistory("check", b)
	require.NoError(t, err)
	require.True(t, core.IsClipArchive(&msgs[0]), "%s", hist[0])
	want := archiveHead[shape]
	if core.ArchiveAsUser(msgs[1:], nil) {
		want = archiveTurnHead[shape]
	}
	require.True(t, strings.HasPrefix(string(hist[0]), want), "%s", hist[0])
	require.True(t, firstTurnIsUser(hist), "the first message other than a system message is a user turn: %s", b)
}

// firstTurnIsUser reads a history as a provider does, by its roles alone:
// its first message that is not a system (or developer) message has the
// role user (LangChain: type human), and is not made of tool results.
func firstTurnIsUser(hist []json.RawMessage) bool {
	for _, m := range hist {
		r := gjson.ParseBytes(m)
		role := r.Get("role").String()
		if t := r.Get("type").String(); t == "human" || t == "system" || t == "ai" || t == "tool" {
			role = map[string]string{"human": "user", "system": "system", "ai": "assistant", "tool": "tool"}[t]
		} else if t != "" && t != "message" {
			return false // a Responses item: function_call, function_call_output, reasoning, …
		}
		switch role {
		case "system", "developer":
			continue
		case "user":
			return !strings.Contains(r.Get("content").Raw, `"tool_result"`)
		}
		return false
	}
	return false
}

func question(i int) string {
	return fmt.Sprintf("Customer question %d: where is my order A-%d? It has not arrived after ten days and I need it for Friday.", i, i)
}
func output(i int) string {
	return fmt.Sprintf("order A-%d: label created Monday, carrier DHL, warehouse Leipzig, value %d.00 EUR, no scan since", i, 80+i)
}
func answer(i int) string {
	return fmt.Sprintf("Order A-%d never left the Leipzig warehouse; I asked them to ship it express today. If it is not delivered in five days you get a refund.", i)
}

func turns(shape string, from, to int) []json.RawMessage {
	var out []json.RawMessage
	for i := from; i < to; i++ {
		for _, m := range shapeTurns[shape](i) {
			out = append(out, json.RawMessage(m))
		}
	}
	return out
}

var shapeConfig = map[string]any{"keep_recent": 5, "chunk_size": 6, "summarizer": "extractive", "max_summary_tokens": 120}

func shapeInput(t *testing.T, conv string, hist []json.RawMessage, extra map[string]any) []byte {
	cfg := map[string]any{}
	for k, v := range shapeConfig {
		cfg[k] = v
	}
	in := map[string]any{"conversation_id": conv, "history": hist, "config": cfg}
	for k, v := range extra {
		if k == "config" {
			for ck, cv := range v.(map[string]any) {
				cfg[ck] = cv
			}
			continue
		}
		in[k] = v
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	return b
}

func rawList(rs []gjson.Result) []json.RawMessage {
	out := make([]json.RawMessage, len(rs))
	for i, r := range rs {
		out[i] = json.RawMessage(r.Raw)
	}
	return out
}

// checkToolUnits: every tool result in hist answers a call of an earlier
// message of hist (nothing the Messages API or the Chat API would refuse
// for a dangling result).
func checkToolUnits(t *testing.T, conv string, hist []json.RawMessage) {
	t.Helper()
	b, _ := json.Marshal(hist)
	msgs, _, err := api.DecodeHistory(conv, b)
	require.NoError(t, err)
	calls := map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		for _, id := range answers(m) {
			require.True(t, calls[id], "message %d answers call %s, which is not before it: %s", i, id, hist[i])
		}
		for _, tc := range m.ToolCalls {
			if !tc.Result {
				calls[tc.ID] = true
			}
		}
	}
}

// answers are the ids of the calls m answers: a tool message's, or those
// of the results it carries as parts.
func answers(m *core.Message) []string {
	var out []string
	if m.Role == core.RoleTool && !m.HasResults && m.ToolCallID != "" {
		out = append(out, m.ToolCallID)
	}
	for _, tc := range m.ToolCalls {
		if tc.Result {
			out = append(out, tc.ID)
		}
	}
	return out
}

// checkKept: every message of out after the clip-archive is one of in's,
// byte for byte, in in's order.
func checkKept(t *testing.T, in, out []json.RawMessage) {
	t.Helper()
	j := 0
	for _, m := range out {
		for j < len(in) && string(in[j]) != string(m) {
			j++
		}
		require.Less(t, j, len(in), "returned message is not an input message, byte for byte: %s", m)
		j++
	}
}

func TestCompressShapesStoreOwned(t *testing.T) {
	for _, shape := range []string{"chat", "anthropic", "responses", "ai_sdk", "langchain"} {
		t.Run(shape, func(t *testing.T) {
			bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
				ctx := context.Background()
				st, err := sqlite.Open(sqlite.MemoryPath)
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				c := mk(&hostfuncs.Host{Store: st})
				conv := "shape-" + shape
				hist := turns(shape, 0, 8)
				sync := func(h []json.RawMessage) {
					msgs, err := clipfold.DecodeHistory(conv, h)
					require.NoError(t, err)
					var fresh []store.Message
					for _, m := range msgs {
						if _, err := st.Recall(ctx, conv, m.ID); err == nil {
							continue
						}
						fresh = append(fresh, m)
					}
					active, err := st.ActiveMessages(ctx, conv)
					require.NoError(t, err)
					known := map[string]bool{}
					for _, a := range active {
						known[a.ID] = true
					}
					var add []store.Message
					for _, m := range fresh {
						if !known[m.ID] {
							add = append(add, m)
						}
					}
					require.NoError(t, st.AppendMessages(ctx, conv, add))
				}
				sync(hist)
				res := c.compress(t, shapeInput(t, conv, hist, nil))
				require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
				require.Positive(t, res.Get("messages_compressed").Int())
				out := rawList(res.Get("history").Array())
				checkArchiveHead(t, shape, out)
				require.Equal(t, gjson.GetBytes(out[0], "content").String(), res.Get("clip_archive").String())
				require.NotContains(t, string(out[0]), `"id"`, "nothing added to the clip-archive")
				checkKept(t, hist, out[1:])
				checkToolUnits(t, conv, out)
				active, err := st.ActiveMessages(ctx, conv)
				require.NoError(t, err)
				require.Len(t, active, len(out))
				for i := range out {
					require.Equal(t, string(out[i]), string(active[i].Raw), "the store holds what the result returned")
				}
				// Every removed message is in recall, exact.
				msgs, err := clipfold.DecodeHistory(conv, hist)
				require.NoError(t, err)
				kept := map[string]bool{}
				for _, a := range active {
					kept[a.ID] = true
				}
				for _, m := range msgs {
					if kept[m.ID] {
						continue
					}
					r, err := st.Recall(ctx, conv, m.ID)
					require.NoError(t, err, "removed message %s", m.Raw)
					require.Equal(t, string(m.Raw), string(r.Raw))
				}

				// The next turns: the store's history (its ids alongside)
				// with new messages; the prior clip-archive is recognized
				// and replaced.
				more := append(append([]json.RawMessage{}, out...), turns(shape, 8, 12)...)
				sync(more)
				active, err = st.ActiveMessages(ctx, conv)
				require.NoError(t, err)
				ids := make([]string, len(active))
				hist2 := make([]json.RawMessage, len(active))
				for i := range active {
					ids[i], hist2[i] = active[i].ID, active[i].Raw
				}
				res = c.compress(t, shapeInput(t, conv, hist2, map[string]any{"history_ids": ids}))
				require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
				out2 := rawList(res.Get("history").Array())
				checkArchiveHead(t, shape, out2)
				require.Equal(t, 1, strings.Count(string(mustJSON(t, out2)), `[Context Summary`), "one clip-archive")
				_, err = st.Recall(ctx, conv, active[0].ID)
				require.NoError(t, err, "the prior clip-archive moved to recall")
				checkToolUnits(t, conv, out2)
			})
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// recallCount is the number of messages in the conversation's recall
// storage (clip-archives, the only system messages of these histories,
// left out when noArchives).
func recallCount(t *testing.T, st store.Store, conv string, noArchives bool) int {
	q := `SELECT COUNT(*) FROM recall WHERE conversation_id = ?`
	if noArchives {
		q += ` AND role <> 'system'`
	}
	switch s := st.(type) {
	case *sqlite.Store:
		var n int
		require.NoError(t, s.DB().QueryRow(q, conv).Scan(&n))
		return n
	case *postgres.Store:
		n, err := s.QueryInt(context.Background(), strings.Replace(q, "?", "$1", 1), conv)
		require.NoError(t, err)
		return int(n)
	}
	t.Fatalf("no recall count for %T", st)
	return 0
}

// TestCompressCallerOwned: the caller keeps its messages.
//
//   - replace: the caller replaces its list with the result's history and
//     appends the next turn (LangChain's summarization middleware);
//   - resend: the caller keeps every message and sends them all every turn
//     (LangGraph's llm_input_messages); the plug-in recognizes what the
//     live batches cover and returns the same compacted view.
//
// Both run eight turns, compacting when due (only_if_due, a 600-token
// budget): no failure (no no_gain, no conflict), no duplicate in recall
// storage, every message either in the view or in recall, no message
// summarized twice.
func TestCompressCallerOwned(t *testing.T) {
	open := func(t *testing.T) store.Store {
		st, err := sqlite.Open(sqlite.MemoryPath)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	for _, shape := range []string{"chat", "anthropic", "responses", "ai_sdk", "langchain"} {
		for _, pattern := range []string{"replace", "resend"} {
			t.Run(shape+"/"+pattern, func(t *testing.T) {
				bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
					callerOwned(t, open(t), mk, shape, pattern)
				})
			})
		}
	}
}

// TestCompressCallerOwnedStores: the same on every store (SQLite files
// and PostgreSQL), natively.
func TestCompressCallerOwnedStores(t *testing.T) {
	for name, open := range stores(t) {
		for _, pattern := range []string{"replace", "resend"} {
			t.Run(name+"/"+pattern, func(t *testing.T) {
				callerOwned(t, open(t), func(h api.HostCaller) compressor { return nativeCompressor{api.DefaultEnv(), h} }, "anthropic", pattern)
			})
		}
	}
}

// budget makes compactions due above 600 estimated tokens.
var budget = map[string]any{"model_max_tokens": 1000, "context_budget": 0.6}

func callerOwned(t *testing.T, st store.Store, mk func(api.HostCaller) compressor, shape, pattern string) {
	c := mk(&hostfuncs.Host{Store: st})
	conv := "caller-" + shape + "-" + pattern
	var list, everything []json.RawMessage // the caller's list; every message ever sent
	summarized := map[string]bool{}        // depth-0 batch sources so far
	var lastView []json.RawMessage
	commits := 0
	for turn := 0; turn < 8; turn++ {
		next := turns(shape, turn*3, turn*3+3)
		list = append(list, next...)
		everything = append(everything, next...)
		res := c.compress(t, shapeInput(t, conv, list, map[string]any{"history_owner": "caller", "only_if_due": true, "config": budget}))
		require.False(t, res.Get("failed").Bool(), "turn %d: %s %s", turn, res.Get("failure_code"), res.Get("failure_message"))
		view := rawList(res.Get("history").Array())
		require.Less(t, res.Get("tokens_estimate_after").Int(), res.Get("tokens_estimate_before").Int()+1)
		if res.Get("messages_compressed").Int() > 0 {
			commits++
		}
		for _, b := range res.Get("batches").Array() {
			if b.Get("depth").Int() > 0 {
				continue
			}
			for _, id := range b.Get("source_message_ids").Array() {
				require.False(t, summarized[id.String()], "turn %d: message %s summarized twice", turn, id)
				summarized[id.String()] = true
			}
		}
		if commits > 0 {
			checkArchiveHead(t, shape, view)
			require.Equal(t, gjson.GetBytes(view[0], "content").String(), res.Get("clip_archive").String())
			checkKept(t, everything, view[1:])
		} else {
			checkKept(t, everything, view)
		}
		checkToolUnits(t, conv, view)
		if pattern == "replace" {
			list = append([]json.RawMessage{}, view...)
		}
		lastView = view
	}
	require.GreaterOrEqual(t, commits, 3, "compactions happened")

	// Nothing lost, nothing twice: every message sent is in the last view
	// or in recall storage, and recall holds each once.
	b, _ := json.Marshal(everything)
	msgs, _, err := api.DecodeHistory(conv, b)
	require.NoError(t, err)
	inView := map[string]bool{}
	for _, v := range lastView {
		inView[string(v)] = true
	}
	ctx := context.Background()
	removed := 0
	for _, m := range msgs {
		if inView[string(m.Raw)] {
			continue
		}
		removed++
		r, err := st.Recall(ctx, conv, m.ID)
		require.NoError(t, err, "message %s is neither in the view nor in recall", m.Raw)
		require.Equal(t, string(m.Raw), string(r.Raw))
	}
	active, err := st.ActiveMessages(ctx, conv)
	require.NoError(t, err)
	require.Empty(t, active, "the store keeps no active history for the caller")
	require.Equal(t, removed, recallCount(t, st, conv, true), "recall holds each removed message once")

	if pattern == "resend" {
		// The same list once more: nothing new is due with only_if_due, no
		// commit, and the same view comes back.
		before := recallCount(t, st, conv, false)
		blocks, err := st.ListBlocks(ctx, "archival", core.BatchLabelPrefix(conv))
		require.NoError(t, err)
		res := c.compress(t, shapeInput(t, conv, list, map[string]any{"history_owner": "caller", "only_if_due": true, "config": budget}))
		require.False(t, res.Get("failed").Bool())
		require.Equal(t, int64(0), res.Get("messages_compressed").Int())
		require.Equal(t, string(mustJSON(t, lastView)), string(mustJSON(t, rawList(res.Get("history").Array()))), "the same compacted view")
		require.Equal(t, before, recallCount(t, st, conv, false))
		after, err := st.ListBlocks(ctx, "archival", core.BatchLabelPrefix(conv))
		require.NoError(t, err)
		require.Equal(t, blocks, after, "no commit")
	}
}

// loopSteps is a user question and the steps of an agent's tool loop
// answering it: each step a call and its result, no answer yet.
func loopSteps(shape string, i, steps int) []json.RawMessage {
	out := []json.RawMessage{json.RawMessage(shapeTurns[shape](i)[0])}
	for k := 1; k <= steps; k++ {
		turn := shapeTurns[shape](i*100 + k)
		for _, m := range turn[1 : len(turn)-1] {
			out = append(out, json.RawMessage(m))
		}
	}
	return out
}

// TestCompressMidToolLoop: compacted in the middle of a tool loop, the
// kept messages start with a tool call; the clip-archive is then a user
// turn in the history's shape, so that the history starts with one (the
// first message of a request that is not a system message is a user turn
// for every provider), and the next compaction reads it as the prior
// clip-archive: store-owned and caller-owned, in every shape, through the
// .wasm and natively.
func TestCompressMidToolLoop(t *testing.T) {
	for _, shape := range []string{"chat", "anthropic", "responses", "ai_sdk", "langchain"} {
		for _, owner := range []string{"store", "caller"} {
			t.Run(shape+"/"+owner, func(t *testing.T) {
				bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
					st, err := sqlite.Open(sqlite.MemoryPath)
					require.NoError(t, err)
					t.Cleanup(func() { _ = st.Close() })
					c := mk(&hostfuncs.Host{Store: st})
					conv := "loop-" + shape + "-" + owner
					hist := append(turns(shape, 0, 6), loopSteps(shape, 6, 4)...)
					extra := map[string]any{"config": map[string]any{"keep_recent": 4}}
					if owner == "caller" {
						extra["history_owner"] = "caller"
					} else {
						msgs, err := clipfold.DecodeHistory(conv, hist)
						require.NoError(t, err)
						require.NoError(t, st.AppendMessages(context.Background(), conv, msgs))
					}
					res := c.compress(t, shapeInput(t, conv, hist, extra))
					require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
					out := rawList(res.Get("history").Array())
					require.False(t, firstTurnIsUser(out[1:]), "the kept messages start inside the tool loop")
					require.True(t, strings.HasPrefix(string(out[0]), archiveTurnHead[shape]), "%s", out[0])
					require.Equal(t, gjson.GetBytes(out[0], "content").String(), res.Get("clip_archive").String())
					checkArchiveHead(t, shape, out)
					checkKept(t, hist, out[1:])
					checkToolUnits(t, conv, out)
					checkPairing(t, conv, out)

					// The loop goes on; the next compaction replaces the
					// clip-archive turn, which it read as the prior one.
					more := append(append([]json.RawMessage{}, out...), loopSteps(shape, 7, 3)[1:]...)
					if owner == "store" {
						msgs, err := clipfold.DecodeHistory(conv, more)
						require.NoError(t, err)
						require.NoError(t, st.AppendMessages(context.Background(), conv, msgs[len(out):]))
					}
					res = c.compress(t, shapeInput(t, conv, more, extra))
					require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
					require.Positive(t, res.Get("messages_compressed").Int())
					out2 := rawList(res.Get("history").Array())
					require.Equal(t, 1, strings.Count(string(mustJSON(t, out2)), `[Context Summary`), "one clip-archive: %s", mustJSON(t, out2))
					checkArchiveHead(t, shape, out2)
					checkToolUnits(t, conv, out2)
					checkPairing(t, conv, out2)
					b, _ := json.Marshal(more)
					msgs, _, err := api.DecodeHistory(conv, b)
					require.NoError(t, err)
					require.True(t, core.IsClipArchive(&msgs[0]))
					for _, bt := range res.Get("batches").Array() {
						require.NotContains(t, bt.Get("content").String(), "[Context Summary", "the prior clip-archive is not summarized")
						for _, id := range bt.Get("source_message_ids").Array() {
							require.NotEqual(t, msgs[0].ID, id.String(), "the prior clip-archive is not summarized")
						}
					}
				})
			})
		}
	}
}
