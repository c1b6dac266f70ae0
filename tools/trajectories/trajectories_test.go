package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/internal/benchkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ciSubset: trajectories of both sources that compact, one of them with
// a tool output longer than the window.
var ciSubset = []string{"agentdojo-banking-1", "bfcl-lc-022", "bfcl-lc-147"}

// TestSubsetLosesNothing is the CI run of the benchmark: it builds the
// command from this checkout, replays three trajectories through it with
// the plug-in under test ($CLIPFOLD_WASM, else the embedded build), a
// check before every model call, and fails if the tool breaks, a
// compaction fails, any message is lost or altered, or a model input
// separates a call from its result. The shares it measures
// (facts, search, inputs over the limit) are reported by make
// trajectories, not tested.
func TestSubsetLosesNothing(t *testing.T) {
	root := filepath.Join("..", "..")
	bin, err := benchkit.BuildCommand(root, t.TempDir())
	require.NoError(t, err)

	o := &options{benchkit.Options{Bin: bin, Data: filepath.Join(root, "testdata", "trajectories"), Names: ciSubset,
		Budget: 3200, Limit: 5, Keep: t.TempDir(), Label: "test", Quiet: true}}
	rep, err := run(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, rep.Trajectories, len(ciSubset))
	assert.Empty(t, rep.problems())
	for _, r := range rep.Trajectories {
		assert.Empty(t, r.Lost, "%s: lost messages", r.Name)
		assert.Empty(t, r.Altered, "%s: altered messages", r.Name)
		assert.Equal(t, r.Messages, r.InActive+r.InRecall, "%s: every message is kept or recalled", r.Name)
		assert.Zero(t, r.InputsBroken, "%s: a model input separates a call from its result", r.Name)
		assert.Zero(t, r.FinalBroken, "%s", r.Name)
		assert.Greater(t, r.Compactions, 0, "%s: the replay compacted", r.Name)
		assert.Equal(t, int64(3200), r.Limit, "%s: the limit is the budget", r.Name)
		assert.NotEmpty(t, r.Calls, "%s: search probes", r.Name)
		assert.LessOrEqual(t, r.TruncTokens, int64(3200), "%s: truncation fits the budget", r.Name)
	}
	md := markdown(rep)
	for _, r := range rep.Trajectories {
		assert.Contains(t, md, "| "+r.Name+" |")
	}
}

// TestData: every committed trajectory loads (ids unique, every tool
// result answers an earlier call), has several tools and long outputs
// somewhere, and the set gives probes of both kinds.
func TestData(t *testing.T) {
	trajs, err := loadTrajectories(filepath.Join("..", "..", "testdata", "trajectories"), nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(trajs), 36, "several dozen trajectories")
	tools := map[string]bool{}
	sources := map[string]int{}
	longest, facts, calls := 0, 0, 0
	for _, tr := range trajs {
		sources[tr.Source]++
		assert.NotEmpty(t, tr.modelCalls(), tr.Name)
		for i := range tr.Messages {
			m := &tr.Messages[i]
			for _, tc := range m.ToolCalls {
				tools[tc.Name] = true
			}
			if m.Role == "tool" {
				longest = max(longest, len(m.Content))
			}
		}
		facts += len(factProbes(tr))
		calls += len(callProbes(tr))
	}
	assert.Equal(t, map[string]int{"agentdojo": 9, "bfcl": 32}, sources)
	assert.Greater(t, len(tools), 50, "many tools")
	assert.Greater(t, longest, 20000, "long tool outputs")
	assert.Greater(t, facts, 50)
	assert.Greater(t, calls, 200)
}

func tool(id, call, content string) string {
	b, _ := json.Marshal(map[string]string{"id": id, "role": "tool", "tool_call_id": call, "content": content})
	return string(b)
}

func asst(id, call, name, args string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "role": "assistant", "content": "",
		"tool_calls": []map[string]any{{"id": call, "type": "function", "function": map[string]string{"name": name, "arguments": args}}}})
	return string(b)
}

func parse(raws ...string) []message {
	var out []message
	for _, r := range raws {
		out = append(out, benchkit.ParseMessage([]byte(r)))
	}
	return out
}

func traj(t *testing.T, raws ...string) *trajectory {
	path := filepath.Join(t.TempDir(), "x-1.json")
	require.NoError(t, os.WriteFile(path, []byte("["+strings.Join(raws, ",\n")+"]"), 0o644))
	tr, err := loadTrajectory(path)
	require.NoError(t, err)
	return tr
}

func TestBrokenPairs(t *testing.T) {
	user := `{"id":"u","role":"user","content":"hi"}`
	assert.Zero(t, brokenPairs(parse(user, asst("a", "c1", "ls", "{}"), tool("t", "c1", "x"))))
	assert.Equal(t, 1, brokenPairs(parse(tool("t", "c1", "x"), user)), "a result without its call")
	assert.Equal(t, 1, brokenPairs(parse(user, asst("a", "c1", "ls", "{}"))), "a call without its result")
	assert.Equal(t, 1, brokenPairs(parse(tool("t", "c1", "x"), asst("a", "c1", "ls", "{}"))), "the result before its call")
	assert.Zero(t, brokenPairs(parse(asst("a", "c1", "ls", "{}"), tool("t", "c1", "[cleared: ls {} → recall t]"))), "a cleared result is a result")
}

func TestModelCalls(t *testing.T) {
	tr := traj(t, `{"id":"s","conversation_id":"c","role":"system","content":"tools"}`, `{"id":"u","role":"user","content":"go"}`,
		asst("a1", "c1", "ls", "{}"), tool("t1", "c1", "x"), asst("a2", "c2", "cat", `{"f":"x"}`), tool("t2", "c2", "y"),
		`{"id":"f","role":"assistant","content":"done"}`, `{"id":"f2","role":"assistant","content":"and more"}`)
	assert.Equal(t, []int{2, 4, 6}, tr.modelCalls(), "each assistant message after a user or tool message")
	_, err := loadTrajectory(writeRaw(t, `[{"id":"t","conversation_id":"c","role":"tool","tool_call_id":"zz","content":"x"}]`))
	assert.ErrorContains(t, err, `answers call "zz"`)
}

func writeRaw(t *testing.T, s string) string {
	path := filepath.Join(t.TempDir(), "y.json")
	require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
	return path
}

func TestProbes(t *testing.T) {
	tr := traj(t,
		`{"id":"s","conversation_id":"c","role":"system","content":"You help. Account DE89-3704."}`,
		`{"id":"u1","role":"user","content":"Find my flight to Paris"}`,
		asst("a1", "c1", "search_flights", `{"city":"Paris","day":3}`),
		tool("t1", "c1", `[{"flight_id":"AF1234","price":412.5,"city":"Paris"}]`),
		asst("a2", "c2", "get_account", `{"iban":"DE89-3704"}`),
		tool("t2", "c2", `{"balance":1200}`),
		`{"id":"f1","role":"assistant","content":"Found AF1234."}`,
		`{"id":"u2","role":"user","content":"Book it"}`,
		asst("a3", "c3", "book", `{"flight":"AF1234","seats":[1,12],"pay":{"amount":412.5}}`),
		tool("t3", "c3", `{"ok":true}`),
		asst("a4", "c4", "search_flights", `{"city":"Paris","day":3}`),
		tool("t4", "c4", `[]`),
		asst("a5", "c5", "get_time", `{}`),
		tool("t5", "c5", `10:00`),
		`{"id":"f2","role":"assistant","content":"Booked."}`)
	got := factProbes(tr)
	assert.Equal(t, []factProbe{
		{Value: "AF1234", Sources: []string{"t1"}, UsedBy: "a3"},
		{Value: "412.5", Sources: []string{"t1"}, UsedBy: "a3"},
	}, got, "Paris and the IBAN were said by the user or the system; 12 (inside 412.5) and 1 are in no tool result; 3 is one digit")

	assert.Equal(t, []string{"Paris", "3"}, argValues(`{"city":"Paris","day":3}`))
	assert.Equal(t, []string{"AF1234", "1", "12", "412.5"}, argValues(`{"flight":"AF1234","seats":[1,12],"pay":{"amount":412.5},"x":true,"y":null,"z":" "}`))
	calls := callProbes(tr)
	assert.Equal(t, []callProbe{
		{Query: "what did search_flights Paris 3 return?", Results: []string{"t1", "t4"}},
		{Query: "what did get_account DE89-3704 return?", Results: []string{"t2"}},
		{Query: "what did book AF1234 1 12 412.5 return?", Results: []string{"t3"}},
	}, calls, "the same call is one probe; a call without values none")

	p := &got[0]
	assert.True(t, hasFact(parse(`{"id":"x","role":"system","content":"[Context Summary — 2 messages compressed] flight af1234."}`), p), "in the archive")
	assert.True(t, hasFact(parse(tool("t1", "c1", "AF1234")), p), "its source kept")
	assert.False(t, hasFact(parse(tool("t1", "c1", "[cleared: search_flights]")), p), "its source cleared")
	assert.False(t, hasFact(parse(asst("a3", "c3", "book", `{"flight":"AF1234"}`)), p), "a later call repeating it is its use, not the fact")
	assert.False(t, hasFact(parse(tool("t3", "c3", "booked AF1234")), p), "a later result is not the early output")
	assert.False(t, hasFact(parse(`{"id":"x","role":"system","content":"You help. AF1234"}`), p), "a system message that is not an archive")
	assert.False(t, hasFact(parse(`{"id":"x","role":"system","content":"[Context Summary] AF12345"}`), p), "inside a longer id")

	assert.True(t, containsWhole("id: af1234, ok", "af1234"))
	assert.True(t, containsWhole("af1234", "af1234"))
	assert.False(t, containsWhole("xaf1234", "af1234"))
	assert.True(t, containsWhole("x af12 af1234", "af1234"), "a later whole occurrence")
	assert.True(t, containsWhole("path=/tmp/a.txt;", "/tmp/a.txt"), "ends that are not letters or digits need no boundary")
	assert.True(t, containsWhole("état 12é", "12é"))
	assert.False(t, containsWhole("état 12éa", "12é"))

	docs := bm25Docs(tr)
	assert.Equal(t, `{"balance":1200}`+"\nget_account "+`{"iban":"DE89-3704"}`, docs[5].Text, "a result is indexed with its call")
	assert.Equal(t, "Found AF1234.", docs[6].Text)
}

func TestHitFinds(t *testing.T) {
	want := map[string]bool{"t1": true}
	assert.True(t, hitFinds(&benchkit.Hit{Kind: "message", ID: "t1"}, want, "ls"))
	assert.False(t, hitFinds(&benchkit.Hit{Kind: "message", ID: "a1"}, want, "ls"), "the call is not the result")
	assert.True(t, hitFinds(&benchkit.Hit{Kind: "batch", ID: "b", SourceIDs: []string{"t0", "t1"}, Text: "Tool (ls): a b"}, want, "ls"))
	assert.False(t, hitFinds(&benchkit.Hit{Kind: "batch", ID: "b", SourceIDs: []string{"t1"}, Text: "Tool: a b"}, want, "ls"), "the summary does not name the tool")
	assert.False(t, hitFinds(&benchkit.Hit{Kind: "batch", ID: "b", SourceIDs: []string{"t2"}, Text: "ls"}, want, "ls"), "the batch does not cover the result")
}

// TestLostCheck: a message kept with its bytes, recalled under its id,
// recalled under another id (replaced in place), altered, and lost.
func TestLostCheck(t *testing.T) {
	ctx := context.Background()
	raws := []string{
		`{"id":"m1","conversation_id":"c","role":"user","content":"hello","created_at":"2024-01-01T00:00:00.000Z"}`,
		`{"id":"m2","conversation_id":"c","role":"assistant","content":"hi","created_at":"2024-01-01T00:00:01.000Z"}`,
		`{"id":"m3","conversation_id":"c","role":"user","content":"bye","created_at":"2024-01-01T00:00:02.000Z"}`,
		`{"id":"m4","conversation_id":"c","role":"user","content":"long output","created_at":"2024-01-01T00:00:03.000Z"}`,
		`{"id":"m5","conversation_id":"c","role":"user","content":"gone","created_at":"2024-01-01T00:00:04.000Z"}`,
	}
	tr := traj(t, raws...)
	arch, err := benchkit.OpenArchive(filepath.Join(t.TempDir(), "x.db"), "c")
	require.NoError(t, err)
	defer arch.Close()
	st := arch.Store()
	msg := func(id, content, raw string) store.Message {
		return store.Message{ID: id, ConversationID: "c", Role: "user", Content: content, Raw: []byte(raw)}
	}
	placeholder := strings.Replace(raws[3], "long output", "[cleared]", 1)
	require.NoError(t, st.AppendMessages(ctx, "c", []store.Message{
		msg("m1", "hello", raws[0]),
		msg("m2", "hi!", strings.Replace(raws[1], `"hi"`, `"hi!"`, 1)),
		msg("m3", "bye", raws[2]),
		msg("m4x", "long output", strings.Replace(raws[3], `"m4"`, `"m4x"`, 1)),
		msg("m4", "[cleared]", placeholder),
	}))
	// m3 and the original of m4 (stored under the id m4x, its bytes those
	// of m4 with another id) go to recall; the original bytes of m4 are
	// written to recall under m4x's row below.
	_, err = st.DB().ExecContext(ctx, `INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id)
		SELECT id, conversation_id, seq, role, content, created_at, raw, '', 'op' FROM messages WHERE id IN ('m3', 'm4x')`)
	require.NoError(t, err)
	_, err = st.DB().ExecContext(ctx, `UPDATE recall SET raw = ? WHERE id = 'm4x'`, raws[3])
	require.NoError(t, err)
	_, err = st.DB().ExecContext(ctx, `DELETE FROM messages WHERE id IN ('m3', 'm4x')`)
	require.NoError(t, err)

	active, err := st.ActiveMessages(ctx, "c")
	require.NoError(t, err)
	var final []message
	for _, m := range active {
		final = append(final, benchkit.ParseMessage(m.Raw))
	}
	r := &trajResult{}
	require.NoError(t, lostCheck(ctx, r, tr, final, arch))
	assert.Equal(t, []string{"m5"}, r.Lost)
	assert.Equal(t, []string{"m2"}, r.Altered)
	assert.Equal(t, 1, r.InActive, "m1")
	assert.Equal(t, 2, r.InRecall, "m3 under its id, m4's original under another")
}
