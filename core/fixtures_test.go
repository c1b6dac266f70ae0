package core_test

import (
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/require"
)

// Message builders for the table-driven tests of split, score and chunk.
// Expectations in those tests are derived by hand from docs/spec.md
// (#wire-types, #exports) and the seeds (001 for the formula, 004 for
// split/chunk/clip-archive), never by running the code under test.

func user(content string) core.Message {
	return core.Message{Role: core.RoleUser, Content: content}
}

func asst(content string) core.Message {
	return core.Message{Role: core.RoleAssistant, Content: content}
}

func system(content string) core.Message {
	return core.Message{Role: core.RoleSystem, Content: content}
}

// call is an assistant message making one tool call per id.
func call(content string, ids ...string) core.Message {
	m := asst(content)
	m.HasToolCalls = true
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, core.ToolCall{ID: id, Name: "run", Arguments: `{"x":1}`})
	}
	if len(ids) == 0 {
		// tool_calls present but the calls carry no id
		m.ToolCalls = []core.ToolCall{{Name: "run", Arguments: "{}"}}
	}
	return m
}

// result is a tool message answering callID ("" = no tool_call_id).
func result(callID, content string) core.Message {
	return core.Message{Role: core.RoleTool, ToolCallID: callID, Content: content}
}

func pinned(m core.Message) core.Message {
	m.Pinned = true
	return m
}

// clip is a prior clip-archive as a previous compaction writes it.
func clip() core.Message {
	return system("[Context Summary — 12 messages compressed across 1 compaction cycle]\n[Batch 1 — depth 0, 2026-02-28T10:00:00.000Z to 2026-02-28T10:59:00.000Z]\nold summary")
}

// kv is one configuration override: a number, a bool, a string or a
// list of strings, set through Config.Set (so validation applies).
type kv struct {
	key string
	val any
}

func config(t *testing.T, overrides ...kv) core.Config {
	t.Helper()
	c := core.DefaultConfig()
	for _, o := range overrides {
		var v core.Value
		switch x := o.val.(type) {
		case int:
			v = core.Value{Kind: core.KindNumber, Num: float64(x)}
		case float64:
			v = core.Value{Kind: core.KindNumber, Num: x}
		case bool:
			v = core.Value{Kind: core.KindBool, Bool: x}
		case string:
			v = core.Value{Kind: core.KindString, Str: x}
		case []string:
			v = core.Value{Kind: core.KindStrings, List: x}
		default:
			t.Fatalf("config %s: unsupported value %T", o.key, o.val)
		}
		require.NoError(t, c.Set(o.key, v, ""), "config %s", o.key)
	}
	return c
}

// flat is the settings that reduce a score to its role weight plus the
// bonuses a case asks for: no recency decay, no length bonus.
var flat = []kv{{"recency_decay", 1.0}, {"content_length_weight", 0.0}}

func with(base []kv, more ...kv) []kv {
	return append(append([]kv(nil), base...), more...)
}
