package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeShaped decodes {"messages": msgs, …extra} as every export does.
func decodeShaped(t *testing.T, msgs string, extra ...string) ([]core.Message, core.HistoryShape, error) {
	t.Helper()
	in := `{"messages":` + msgs
	for _, e := range extra {
		in += "," + e
	}
	in += "}"
	root, err := parseInput([]byte(in))
	require.NoError(t, err, in)
	return decodeMessages(root, "messages", msgRules{})
}

func mustDecode(t *testing.T, msgs string, extra ...string) ([]core.Message, core.HistoryShape) {
	t.Helper()
	m, h, err := decodeShaped(t, msgs, extra...)
	require.NoError(t, err, msgs)
	// The walker and gjson's path agree on every shape.
	decodeBoth(t, `{"messages":`+msgs+`}`, msgRules{})
	return m, h
}

func TestShapeChat(t *testing.T) {
	msgs, h := mustDecode(t, `[
		{"role":"developer","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:…"}}]},
		{"role":"assistant","content":"Reading.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"p\":1}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"file body"}]`)
	assert.Equal(t, core.ShapeChat, h.Shape)
	assert.False(t, h.Native)
	assert.Equal(t, core.RoleSystem, msgs[0].Role)
	assert.Equal(t, "look\n[image]", msgs[1].Content)
	assert.Equal(t, []core.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"p":1}`}}, msgs[2].ToolCalls)
	assert.True(t, msgs[2].HasToolCalls)
	assert.Equal(t, "call_1", msgs[3].ToolCallID)
	assert.Equal(t, core.RoleTool, msgs[3].Role)
	// Tool inputs count: "Reading." + "read" + `{"p":1}`.
	assert.Equal(t, 8+4+7, core.MessageRunes(&msgs[2]))

	_, h = mustDecode(t, `[{"id":"m1","role":"user","content":"hi","created_at":"2026-01-01T00:00:00Z"}]`)
	assert.True(t, h.Native, "created_at is clipfold's own field")
}

func TestShapeAnthropic(t *testing.T) {
	msgs, h := mustDecode(t, `[
		{"role":"user","content":"Where is my order A-1?"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"Let me look."},
			{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"order":"A-1"}},
			{"type":"tool_use","id":"toolu_2","name":"track","input":{"n": 2}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"shipped"},{"type":"image","source":{}}]},
			{"type":"tool_result","tool_use_id":"toolu_2","content":"in Leipzig","is_error":false}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"late"},{"type":"text","text":"and also?"},{"type":"document","source":{}}]},
		{"role":"assistant","content":[{"type":"some_future_block","x":1}]}]`)
	assert.Equal(t, core.ShapeAnthropic, h.Shape)
	a := msgs[1]
	assert.Equal(t, "Let me look.", a.Content)
	assert.Equal(t, []core.ToolCall{{ID: "toolu_1", Name: "lookup", Arguments: `{"order":"A-1"}`},
		{ID: "toolu_2", Name: "track", Arguments: `{"n": 2}`}}, a.ToolCalls)
	r := msgs[2]
	assert.Equal(t, core.RoleTool, r.Role, "a user turn of tool results alone is a tool message")
	assert.True(t, r.HasResults)
	assert.False(t, r.HasToolCalls)
	assert.Equal(t, "shipped\n[image]\nin Leipzig", r.Content)
	assert.Equal(t, "", r.Text())
	mixed := msgs[3]
	assert.Equal(t, core.RoleUser, mixed.Role, "results and text: still the user's turn")
	assert.Equal(t, "late\nand also?\n[document]", mixed.Content)
	assert.Equal(t, "and also?\n[document]", mixed.Text())
	assert.Equal(t, "", msgs[4].Content, "unknown blocks are kept, not counted")

	// The summarizer sees results, text and calls.
	role, text, ok := core.RenderForSummary(&a, 0)
	require.True(t, ok)
	assert.Equal(t, core.RoleAssistant, role)
	assert.Equal(t, "Let me look.\n[Tool call]: lookup({\"order\":\"A-1\"})\n[Tool call]: track({\"n\": 2})", text)
	role, text, _ = core.RenderForSummary(&mixed, 0)
	assert.Equal(t, core.RoleUser, role)
	assert.Equal(t, "[Tool result]: late\nand also?\n[document]", text)
}

func TestShapeAnthropicArchiveTurn(t *testing.T) {
	// A first user turn that is a clip-archive as BuildClipArchive writes
	// one (its whole header, then a batch) is the prior clip-archive: in
	// the Anthropic shape, and in every shape that writes the clip-archive
	// as a user turn when the kept messages start without one.
	const archive = `[Context Summary — 3 messages compressed across 1 compaction cycle]\n[Batch 1 — depth 0, 2026-02-28T10:00:00.000Z to 2026-02-28T10:09:00.000Z]\nThe order A-1 shipped.`
	msgs, h := mustDecode(t, `[{"role":"user","content":"`+archive+`"},
		{"role":"assistant","content":"ok"}]`)
	assert.Equal(t, core.ShapeAnthropic, h.Shape)
	assert.Equal(t, core.RoleSystem, msgs[0].Role)
	assert.True(t, core.IsClipArchive(&msgs[0]))
	for _, tc := range []struct {
		name, msgs string
		shape      core.Shape
	}{
		{"chat", `[{"role":"user","content":"` + archive + `"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c","content":"ok"}]`, core.ShapeChat},
		{"responses", `[{"type":"message","role":"user","content":"` + archive + `"},
			{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]`, core.ShapeResponses},
		{"ai_sdk", `[{"role":"user","content":"` + archive + `"},
			{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c","toolName":"f","input":{}}]},
			{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","toolName":"f","output":{"type":"text","value":"ok"}}]}]`, core.ShapeAISDK},
		{"langchain", `[{"type":"human","content":"` + archive + `"},
			{"type":"ai","content":"","tool_calls":[{"name":"f","args":{},"id":"c"}]},{"type":"tool","tool_call_id":"c","content":"ok"}]`, core.ShapeLangChain},
		{"native", `[{"id":"ca","conversation_id":"c1","role":"user","content":"` + archive + `","created_at":"2026-02-28T10:09:00.000Z"},
			{"role":"assistant","content":"ok","created_at":"2026-02-28T10:10:00.000Z"}]`, core.ShapeChat},
	} {
		msgs, h := mustDecode(t, tc.msgs)
		assert.Equal(t, tc.shape, h.Shape, tc.name)
		assert.Equal(t, tc.name == "native", h.Native, tc.name)
		assert.True(t, core.IsClipArchive(&msgs[0]), tc.name)
	}
	// What a user may write is the user's, in every shape: the prefix
	// alone, a header without a batch after it, a header not as written,
	// an archive that is not first or carries more than text.
	for _, first := range []string{
		`{"role":"user","content":"[Context Summary — x]"}`,
		`{"role":"user","content":"[Context Summary] of what we did: A-1 shipped"}`,
		`{"role":"user","content":"[Context Summary — 3 messages compressed across 1 compaction cycle]\nplease go on"}`,
		`{"role":"user","content":"[Context Summary — three messages compressed across 1 compaction cycle]\n[Batch 1 — x]"}`,
		`{"role":"user","content":[{"type":"text","text":"` + archive + `"},{"type":"tool_result","tool_use_id":"t0","content":"x"}]}`,
		`{"type":"human","content":"[Context Summary — x]"}`,
		`{"type":"message","role":"user","content":"[Context Summary — 3 messages compressed across 1 compaction cycle]"}`,
	} {
		msgs, _ := mustDecode(t, `[`+first+`,{"role":"assistant","content":"ok"}]`)
		assert.NotEqual(t, core.RoleSystem, msgs[0].Role, first)
		assert.False(t, core.IsClipArchive(&msgs[0]), first)
	}
	msgs, _ = mustDecode(t, `[{"role":"user","content":"hi"},{"role":"user","content":"`+archive+`"}]`)
	assert.Equal(t, core.RoleUser, msgs[1].Role, "only the first message is read as a prior clip-archive")
	// A named shape decides for text-only histories.
	_, h = mustDecode(t, `[{"role":"user","content":"hi"}]`, `"shape":"anthropic"`)
	assert.Equal(t, core.ShapeAnthropic, h.Shape)
}

func TestShapeResponses(t *testing.T) {
	msgs, h := mustDecode(t, `[
		{"role":"user","content":"weather in Paris?"},
		{"type":"message","role":"developer","content":[{"type":"input_text","text":"Use celsius."}]},
		{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"thinking"}],"encrypted_content":"xyz"},
		{"type":"function_call","id":"fc_1","call_id":"call_9","name":"weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call_output","call_id":"call_9","output":"18C"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"18 degrees."}]},
		{"type":"web_search_call","id":"ws_1","status":"completed"},
		{"type":"custom_tool_call_output","call_id":"call_c","output":[{"type":"input_text","text":"done"}]}]`)
	assert.Equal(t, core.ShapeResponses, h.Shape)
	assert.Equal(t, core.RoleSystem, msgs[1].Role)
	assert.Equal(t, "Use celsius.", msgs[1].Content)
	assert.True(t, msgs[2].JoinNext, "reasoning travels with the next item")
	assert.Equal(t, core.RoleAssistant, msgs[2].Role)
	assert.Equal(t, "", msgs[2].Content)
	assert.Equal(t, "fc_1", msgs[3].ID)
	assert.Equal(t, []core.ToolCall{{ID: "call_9", Name: "weather", Arguments: `{"city":"Paris"}`}}, msgs[3].ToolCalls)
	assert.Equal(t, core.RoleTool, msgs[4].Role)
	assert.Equal(t, "call_9", msgs[4].ToolCallID)
	assert.Equal(t, "18C", msgs[4].Content)
	assert.Equal(t, core.RoleAssistant, msgs[6].Role)
	assert.Equal(t, core.RoleTool, msgs[7].Role)
	assert.Equal(t, "done", msgs[7].Content)

	// Reasoning, call and output are one unit: split keeps them together.
	c := core.DefaultConfig()
	c.KeepRecent = 4 // the boundary falls between the call and its reasoning
	res := core.Split(msgs, &c)
	assert.Equal(t, []int{0}, res.ToCompress)
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7}, res.ToKeep, "the developer message is pinned; the reasoning item stays with its call")
}

func TestShapeAISDK(t *testing.T) {
	msgs, h := mustDecode(t, `[
		{"role":"system","content":"You help."},
		{"role":"user","content":[{"type":"text","text":"sum 2+2"},{"type":"image","image":"https://x/y.png"}]},
		{"role":"assistant","content":[{"type":"reasoning","text":"easy"},{"type":"tool-call","toolCallId":"t1","toolName":"calc","input":{"expr":"2+2"}},
			{"type":"tool-call","toolCallId":"t2","toolName":"calc","args":{"expr":"3"}}]},
		{"role":"tool","content":[{"type":"tool-result","toolCallId":"t1","toolName":"calc","output":{"type":"json","value":{"v":4}}},
			{"type":"tool-result","toolCallId":"t2","toolName":"calc","result":"3"}]},
		{"role":"tool","content":[{"type":"tool-result","toolCallId":"t3","toolName":"calc","output":{"type":"text","value":"ok"}},
			{"type":"tool-result","toolCallId":"t4","toolName":"x","output":{"type":"content","value":[{"type":"text","text":"a"},{"type":"media","data":"…"}]}}]}]`)
	assert.Equal(t, core.ShapeAISDK, h.Shape)
	assert.Equal(t, "sum 2+2\n[image]", msgs[1].Content)
	assert.Equal(t, "", msgs[2].Content, "reasoning counts nothing")
	assert.Equal(t, []core.ToolCall{{ID: "t1", Name: "calc", Arguments: `{"expr":"2+2"}`}, {ID: "t2", Name: "calc", Arguments: `{"expr":"3"}`}}, msgs[2].ToolCalls)
	assert.Equal(t, core.RoleTool, msgs[3].Role)
	assert.Equal(t, `{"v":4}`+"\n3", msgs[3].Content)
	assert.Equal(t, []core.ToolCall{{ID: "t1", Name: "calc", Arguments: `{"v":4}`, Result: true}, {ID: "t2", Name: "calc", Arguments: "3", Result: true}}, msgs[3].ToolCalls)
	assert.Equal(t, "ok\na\n[media]", msgs[4].Content)
	_, text, _ := core.RenderForSummary(&msgs[3], 0)
	assert.Equal(t, "[Tool result]: {\"v\":4}\n[Tool result]: 3", text)
}

func TestShapeLangChain(t *testing.T) {
	msgs, h := mustDecode(t, `[
		{"type":"system","content":"You are helpful.","id":null},
		{"type":"human","content":"hi","id":"h1","additional_kwargs":{},"response_metadata":{}},
		{"type":"ai","content":[{"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_1","name":"search","input":{"q":"x"}}],
			"tool_calls":[{"name":"search","args":{"q":"x"},"id":"toolu_1","type":"tool_call"}],"invalid_tool_calls":[],"id":"a1"},
		{"type":"tool","content":"found x","tool_call_id":"toolu_1","name":"search","id":"t1"}]`)
	assert.Equal(t, core.ShapeLangChain, h.Shape)
	assert.Equal(t, core.RoleSystem, msgs[0].Role)
	assert.Equal(t, "", msgs[0].ID)
	assert.Equal(t, core.RoleUser, msgs[1].Role)
	assert.Equal(t, "h1", msgs[1].ID)
	assert.Equal(t, core.RoleAssistant, msgs[2].Role)
	assert.Equal(t, []core.ToolCall{{ID: "toolu_1", Name: "search", Arguments: `{"q":"x"}`}}, msgs[2].ToolCalls, "a call given as a block and in tool_calls counts once")
	assert.Equal(t, core.RoleTool, msgs[3].Role)
	assert.Equal(t, "toolu_1", msgs[3].ToolCallID)
}

func TestShapeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, msgs, extra, field, msg string
	}{
		{"Chat and Anthropic mixed", `[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"x"}]}]`, "",
			"messages[1]", "is an Anthropic message, but messages[0] is an OpenAI Chat message or a LangChain message"},
		{"Responses and AI SDK mixed", `[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","output":"x"}]}]`, "",
			"messages[1]", "one message shape per call"},
		{"a shape the input names", `[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"c","content":"x"}]`, `"shape":"anthropic"`,
			"messages[1]", "not anthropic (the input's shape)"},
		{"unknown shape", `[]`, `"shape":"gemini"`, "shape", "must be one of auto, chat, anthropic"},
		{"a message mixing shapes", `[{"type":"message","role":"user","content":[{"type":"tool_use","id":"x","name":"f","input":{}}]}]`, "",
			"messages[0]", "mixes members or parts of different message shapes"},
		{"a Responses message needs a role", `[{"type":"message","content":"x"}]`, "", "messages[0].role", "is required"},
		{"type must be a string", `[{"type":7,"role":"user"}]`, "", "messages[0].type", "must be a string"},
		{"content twice", `[{"role":"user","content":[{"type":"text","text":"a"}],"content":"b"}]`, "", "messages[0].content", "given twice"},
		{"a content part must be an object", `[{"role":"user","content":[3]}]`, "", "messages[0].content[0]", "must be a content part object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var extra []string
			if tc.extra != "" {
				extra = append(extra, tc.extra)
			}
			_, _, err := decodeShaped(t, tc.msgs, extra...)
			require.Error(t, err)
			var e *core.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.field, e.Field, err.Error())
			assert.Contains(t, e.Msg, tc.msg)
		})
	}
}

// Plain messages fit every shape: a history of them is Chat, whatever
// comes with it.
func TestShapeNeutral(t *testing.T) {
	_, h := mustDecode(t, `[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":null}]`)
	assert.Equal(t, core.ShapeChat, h.Shape)
	_, h = mustDecode(t, `[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"f","input":{}}]}]`)
	assert.Equal(t, core.ShapeAnthropic, h.Shape, "plain messages take the shape of the others")
}

// What one item has never leaks into the next.
func TestShapeScratchPerMessage(t *testing.T) {
	msgs, _ := mustDecode(t, `[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call"},{"type":"function_call_output","output":"x"}]`)
	assert.Equal(t, []core.ToolCall{{}}, msgs[1].ToolCalls)
	assert.Equal(t, "", msgs[2].ToolCallID)
}

// TestDerivedIDsFromPython holds the derived ids to a second
// transcription of the rule (tools/vectors/gen_vectors.py writes
// testdata/shapes/derived-ids.json from the description in
// docs/spec.md#derived-ids).
func TestDerivedIDsFromPython(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "shapes", "derived-ids.json"))
	require.NoError(t, err)
	var file struct {
		Cases []struct {
			Name           string   `json:"name"`
			ConversationID string   `json:"conversation_id"`
			HistoryRaw     string   `json:"history_raw"`
			IDs            []string `json:"ids"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &file))
	require.NotEmpty(t, file.Cases)
	for _, c := range file.Cases {
		msgs, _, err := DecodeHistory(c.ConversationID, []byte(c.HistoryRaw))
		require.NoError(t, err, c.Name)
		got := make([]string, len(msgs))
		for i := range msgs {
			got[i] = msgs[i].ID
		}
		assert.Equal(t, c.IDs, got, c.Name)
	}
}
