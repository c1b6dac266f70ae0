package api

import (
	"errors"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/core"
)

// Fuzz targets for every export's input decoder. The seed corpus (f.Add
// and testdata/fuzz) runs in every `go test`; `go test -fuzz=FuzzX ./api`
// explores further. The property: any input yields output or a *core.Error
// with an error code of docs/spec.md#errors-and-limits — never a panic.

var fuzzSeeds = []string{
	``, `{}`, `[]`, `null`, `{"messages":[]}`,
	`{"messages":[{"role":"user","content":"hi?"}]}`,
	`{"messages":[{"id":"1","role":"assistant","content":"","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},{"id":"2","role":"tool","tool_call_id":"c","content":"ok"}],"config":{"keep_recent":0,"chunk_size":1}}`,
	`{"messages":[{"role":"system","content":"[Context Summary — 1 messages]"},{"role":"user","content":[{"type":"text","text":"x"}]}]}`,
	`{"messages":[{"role":"user","content":"a","created_at":"2026-02-28T10:00:00Z","pinned":true}],"config":{"max_chunk_tokens":1}}`,
	`{"text":"héllo"}`, `{"batches":[{"content":"c","depth":1,"start_time":"2026-02-28T10:00:00Z","end_time":"2026-02-28T11:00:00Z","message_count":3}]}`,
	`{"batch_contents":["a","b"]}`, `{"messages":[{"role":"system","content":"Summary batch:\n[2026-01-01] User: a b c 1.\n[2025-01-01] Tool call: f({})"},{"role":"system","content":"Previous summary of conversation:\n[2026-01-01] User: x"}],"max_tokens":3}`, `{"provider":"anthropic","request":{"system":"s","messages":[{"role":"system","content":"x"}]}}`,
	`{"provider":"openai","status":429,"body":"{\"error\":{\"message\":\"slow\"}}"}`,
	`{"messages":[{"role":"user","content":"a"}],"config":{"chunk_size":0}}`,
	`{"messages":[{"role":"robot"}]}`, `{"messages":[` + strings.Repeat("[", 300),
	`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]}],"config":{"keep_recent":1}}`,
	`{"messages":[{"type":"reasoning"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}],"shape":"responses"}`,
	`{"messages":[{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","output":{"type":"text","value":"v"}}]}]}`,
	`{"messages":[{"type":"ai","tool_calls":[{"name":"n","args":{},"id":"i"}]},{"type":"tool","tool_call_id":"i","content":"x"}]}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"u"}}]}],"usage":{"input_tokens":5,"messages":1},"config":{"image_tokens":0,"overhead_tokens":9,"token_estimator":"chars4"}}`,
	`{"query":"order 4471","hits":[{"kind":"message","id":"m1","text":"{\"order\":4471}\n\n» get_order","in_context":true},{"kind":"batch","id":"b","text":"x","source_message_ids":["m0"]}],"max_tokens":100}`,
	`{"conversation_id":"c","search_text":true,"history":[{"role":"assistant","tool_calls":[{"id":"t","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"t","content":"ok"}]}`,
}

func checkErr(t *testing.T, err error) {
	if err == nil {
		return
	}
	var e *core.Error
	if !errors.As(err, &e) {
		t.Fatalf("error is not a *core.Error: %v", err)
	}
	switch e.Code {
	case core.CodeInvalidJSON, core.CodeInvalidInput, core.CodeTooLarge:
	default:
		t.Fatalf("unexpected code %q: %v", e.Code, err)
	}
}

func FuzzExports(f *testing.F) {
	for _, s := range fuzzSeeds {
		for i := range exportNames {
			f.Add(uint8(i), []byte(s))
		}
	}
	env := DefaultEnv()
	f.Fuzz(func(t *testing.T, which uint8, in []byte) {
		h := exports[exportNames[int(which)%len(exportNames)]]
		_, err := h(env, in)
		checkErr(t, err)
	})
}

var exportNames = []string{"score", "split", "chunk", "estimateTokens", "shouldCompact", "buildSummarizationRequest",
	"buildResummarizationRequest", "buildClipArchive", "providerRequest", "providerResponse", "extractiveSummary", "version", "searchQuery", "decodeHistory",
	"buildMemoryRead", "planCommit", "planAppend", "parseBlocks"}

// FuzzSplitChunkInvariants: every input message appears exactly once
// across prior_summary / to_compress / to_keep, tool units are never
// split, and chunking loses and duplicates nothing.
func FuzzSplitChunkInvariants(f *testing.F) {
	f.Add([]byte("uatuatxuaausxtta"), uint8(3), uint8(2), uint8(0))
	f.Add([]byte("suatttauaxpu"), uint8(0), uint8(1), uint8(5))
	f.Add([]byte("aattuu"), uint8(10), uint8(20), uint8(1))
	f.Add([]byte{0, 7, 2, 6, 1, 2, 0, 2, 6, 7, 2, 3, 0, 1}, uint8(3), uint8(2), uint8(0))
	f.Add([]byte{2, 0, 2, 6, 6, 7, 7, 2, 3, 3, 5, 7}, uint8(5), uint8(3), uint8(4))
	f.Fuzz(func(t *testing.T, shape []byte, keep, size, tokens uint8) {
		if len(shape) > 400 {
			shape = shape[:400]
		}
		msgs := shapeMessages(shape)
		c := core.DefaultConfig()
		c.KeepRecent = int(keep)
		res := core.Split(msgs, &c)
		seen := make([]int, len(msgs))
		if res.Prior >= 0 {
			seen[res.Prior]++
		}
		for _, i := range res.ToCompress {
			seen[i]++
		}
		for _, i := range res.ToKeep {
			seen[i]++
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("message %d appears %d times (shape %q)", i, n, shape)
			}
		}
		// No tool result is separated from its call (a tool message's
		// tool_call_id or a result part's id), no reasoning item from the
		// item after it: not by the split, and not by chunking.
		inCompress := map[int]bool{}
		for _, i := range res.ToCompress {
			inCompress[i] = true
		}
		chunks := core.Chunk(msgs, res.ToCompress, int(size), int(tokens), &c)
		chunkOf := map[int]int{}
		for k, ch := range chunks {
			for _, i := range ch {
				chunkOf[i] = k
			}
		}
		together := func(i, j int, what string) {
			if inCompress[i] != inCompress[j] {
				t.Fatalf("%s: %d and %d were split (shape %q)", what, j, i, shape)
			}
			if inCompress[i] && chunkOf[i] != chunkOf[j] {
				t.Fatalf("%s: %d and %d are in different chunks (shape %q)", what, j, i, shape)
			}
		}
		for i := range msgs {
			var answers []string
			if msgs[i].Role == core.RoleTool && !msgs[i].HasResults && msgs[i].ToolCallID != "" {
				answers = append(answers, msgs[i].ToolCallID)
			}
			for _, tc := range msgs[i].ToolCalls {
				if tc.Result {
					answers = append(answers, tc.ID)
				}
			}
			for _, id := range answers {
				if id == "" {
					continue
				}
			search:
				for j := i - 1; j >= 0; j-- {
					for _, tc := range msgs[j].ToolCalls {
						if !tc.Result && tc.ID == id {
							together(i, j, "tool result and its call")
							break search
						}
					}
				}
			}
			if msgs[i].JoinNext && i+1 < len(msgs) {
				together(i+1, i, "reasoning and the item after it")
			}
		}
		var flat []int
		for _, ch := range chunks {
			if len(ch) == 0 {
				t.Fatal("empty chunk")
			}
			flat = append(flat, ch...)
		}
		if len(flat) != len(res.ToCompress) {
			t.Fatalf("chunking changed the count: %d → %d", len(res.ToCompress), len(flat))
		}
		for k := range flat {
			if flat[k] != res.ToCompress[k] {
				t.Fatal("chunking reordered messages")
			}
		}
	})
}

// shapeMessages builds a history from a shape string: u user, a assistant,
// x assistant with a tool call, t tool result (answering the latest call),
// s system, p pinned user, r a user turn carrying tool results as parts
// (Anthropic's, AI SDK's: answering the latest and the one before), j a
// reasoning item (joins the next message's unit).
func shapeMessages(shape []byte) []core.Message {
	var msgs []core.Message
	call, prev := "", ""
	for i, c := range shape {
		m := core.Message{ID: string(rune('A' + i%26)), Content: strings.Repeat("w", int(c)%37)}
		switch c % 8 {
		case 6:
			m.Role = core.RoleTool
			m.HasResults = true
			m.ToolCalls = []core.ToolCall{{ID: call, Arguments: m.Content, Result: true}, {ID: prev, Result: true}}
			m.Content += "\n"
			msgs = append(msgs, m)
			continue
		case 7:
			m.Role = core.RoleAssistant
			m.JoinNext = true
			m.Content = ""
		}
		switch c % 8 {
		case 0:
			m.Role = core.RoleUser
		case 1:
			m.Role = core.RoleAssistant
		case 2:
			m.Role = core.RoleAssistant
			prev, call = call, "call"+string(rune('a'+i%26))+string(rune('a'+i/26%26))
			m.HasToolCalls, m.ToolCalls = true, []core.ToolCall{{ID: call, Name: "f"}}
		case 3:
			m.Role = core.RoleTool
			m.ToolCallID = call
		case 4:
			m.Role = core.RoleSystem
			if i == 0 {
				m.Content = "[Context Summary — x]"
			}
		case 5:
			m.Role = core.RoleUser
			m.Pinned = true
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// fuzzHost answers every host function well: a short summary, no blocks,
// a successful commit. FuzzCompress checks the decoder and the pipeline
// never panic, whatever the input.
type fuzzHost struct{}

func (fuzzHost) CallHost(name string, _ []byte) ([]byte, error) {
	switch name {
	case "llm_complete":
		return []byte(`{"content":[{"type":"text","text":"fuzz summary"}],"stop_reason":"end_turn"}`), nil
	case "memory_list":
		return []byte(`{"blocks":[]}`), nil
	}
	return []byte(`{"ok":true}`), nil
}

func FuzzCompress(f *testing.F) {
	f.Add([]byte(`{"conversation_id":"c","history":[{"id":"a","role":"user","content":"hello there, a long message about the bug","created_at":"2026-01-01T00:00:00Z"},{"id":"b","role":"assistant","content":"ok","created_at":"2026-01-01T00:00:01Z"}],"config":{"keep_recent":0,"backoff_base_ms":0}}`))
	f.Add([]byte(`{"conversation_id":"c","history":[],"dry_run":true,"now":1767225600000}`))
	f.Add([]byte(`{"conversation_id":"c","history":[{"id":"s","role":"system","content":"[Context Summary — 1 messages compressed]","created_at":"2026-01-01T00:00:00Z"},{"id":"x","role":"assistant","content":"","tool_calls":[{"id":"t","function":{"name":"f","arguments":"{}"}}],"created_at":"2026-01-01T00:00:01Z"},{"id":"y","role":"tool","tool_call_id":"t","content":"out","created_at":"2026-01-01T00:00:02Z"}],"config":{"keep_recent":0,"target_tokens":1}}`))
	f.Add([]byte(`{"conversation_id":"c","history":[{"id":"s","role":"system","content":"[Context Summary — 1 messages compressed]\n[Batch 1 — depth 0, 2026-01-01T00:00:00.000Z to 2026-01-01T00:00:00.000Z]\n[2026-01-01] User: We adopted a beagle.","created_at":"2026-01-01T00:00:00Z"},{"id":"a","role":"user","content":"Hey! How have you been? We adopted a beagle.","created_at":"2026-01-01T00:00:01Z"},{"id":"b","role":"assistant","content":"I ran the Boston marathon in 3:41.","created_at":"2026-01-02T00:00:01Z"}],"config":{"keep_recent":0,"summarizer":"extractive","target_tokens":5}}`))
	f.Add([]byte(`{"conversation_id":"c","history":[{"id":"a","role":"user","content":"x \xff","created_at":"2026-01-01T00:00:01Z"}],"config":{"keep_recent":0,"summarizer":"llm","fallback":"extractive"}}`))
	f.Add([]byte(`{"conversation_id":"c","history_owner":"caller","history":[{"role":"user","content":"[Context Summary — 1]"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]},{"role":"user","content":"ok"}],"config":{"keep_recent":1}}`))
	f.Add([]byte(`{"conversation_id":"c","history_owner":"caller","only_if_due":true,"history":[{"type":"human","content":"a"},{"type":"ai","content":"b"}],"history_ids":[null,"x"],"config":{"keep_recent":0,"model_max_tokens":1}}`))
	f.Add([]byte(`{"conversation_id":"c","usage":{"input_tokens":900,"messages":2},"history":[{"id":"a","role":"user","content":"a long message about the bug","created_at":"2026-01-01T00:00:00Z"},{"id":"b","role":"assistant","content":"ok","created_at":"2026-01-01T00:00:01Z"},{"id":"c","role":"user","content":"more","created_at":"2026-01-01T00:00:02Z"}],"config":{"keep_recent":1,"summarizer":"extractive","target_tokens":50,"overhead_tokens":10}}`))
	env := DefaultEnv()
	f.Fuzz(func(t *testing.T, in []byte) {
		_, err := env.Compress(in, fuzzHost{}, SystemClock{})
		checkErr(t, err)
	})
}
