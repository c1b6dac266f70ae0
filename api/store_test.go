package api

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// planCommit answers the rows a store writes: ids without repeats, the
// checks in order, search texts only for what moves, raw JSON exact,
// times in clipfold's format, the clip-archive's JSON made when the
// commit has no insert_raw.
func TestPlanCommitExport(t *testing.T) {
	e := DefaultEnv()
	out, err := e.PlanCommit([]byte(`{"now":"2026-03-01T12:00:00.123456+01:00","commit":{"conversation_id":"c1","operation_id":"op1",
		"archive_writes":[{"label":"compaction-batch-c1-x","content":"{}\nsum","reason":"r"}],
		"archive_deletes":["blk_a","blk_a"],"remove_message_ids":["m1","m2","m1"],
		"insert_message":{"id":"clip","content":"[Context Summary <b>"},
		"search_text":{"m2":"two","zz":"not moved","m1":"one","t1":"tool"},
		"replace_messages":[{"id":"t1","new_id":"t1x","role":"tool","content":"cleared","message":{ "role" : "tool" }}]}}`))
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(out, &p), string(out))
	assert.Equal(t, "2026-03-01T11:00:00.123Z", p["now"])
	assert.Equal(t, "store", p["history_owner"])
	assert.Equal(t, []any{"m1", "m2"}, p["remove_ids"])
	assert.Equal(t, []any{"m1", "m2", "t1"}, p["move_ids"])
	assert.Equal(t, []any{"blk_a"}, p["delete_ids"])
	assert.Equal(t, map[string]any{"m1": "one", "m2": "two", "t1": "tool"}, p["search_text"])
	assert.Contains(t, string(out), `"search_text":{"m1":"one","m2":"two","t1":"tool"}`, "in move order")
	assert.Equal(t, []any{
		map[string]any{"field": "remove_message_ids", "must": "active", "ids": []any{"m1", "m2"}},
		map[string]any{"field": "replace_messages", "must": "active", "ids": []any{"t1"}},
		map[string]any{"field": "archive_deletes", "must": "block", "ids": []any{"blk_a"}},
		map[string]any{"field": "insert_message", "must": "new", "ids": []any{"clip"}},
		map[string]any{"field": "replace_messages[0].new_id", "must": "new", "ids": []any{"t1x"}},
	}, p["checks"])
	assert.Equal(t, []any{map[string]any{"id": "t1", "new_id": "t1x", "role": "tool", "content": "cleared", "raw": `{ "role" : "tool" }`}}, p["replace"])
	assert.Equal(t, []any{map[string]any{"tier": "archival", "label": "compaction-batch-c1-x", "content": "{}\nsum", "reason": "r"}}, p["archive_writes"])
	assert.Equal(t, map[string]any{"id": "clip", "role": "system", "content": "[Context Summary <b>", "created_at": "2026-03-01T11:00:00.123Z",
		"raw": `{"id":"clip","conversation_id":"c1","role":"system","content":"[Context Summary <b>","created_at":"2026-03-01T11:00:00.123Z"}`}, p["insert"])
	assert.Equal(t, []any{}, p["recall_writes"])

	out, err = e.PlanCommit([]byte(`{"now":1772366400000,"commit":{"conversation_id":"c1","history_owner":"caller","insert_message":{"id":"clip"},
		"recall_writes":[{"id":"a","role":"user","content":"x","created_at":"2026-02-28T10:00:00Z","search_text":"x","message":{"id":"a"}},
			{"id":"a","role":"user","message":{"id":"a","again":true}},
			{"id":"b","role":"assistant","created_at":null,"message":{}}]}}`))
	require.NoError(t, err)
	p = nil
	require.NoError(t, json.Unmarshal(out, &p), string(out))
	assert.Equal(t, "caller", p["history_owner"])
	assert.Nil(t, p["insert"], "a caller-owned commit stores no clip-archive")
	assert.Equal(t, []any{}, p["checks"])
	assert.Equal(t, []any{
		map[string]any{"id": "a", "role": "user", "content": "x", "created_at": "2026-02-28T10:00:00.000Z", "raw": `{"id":"a"}`, "search_text": "x"},
		map[string]any{"id": "b", "role": "assistant", "content": "", "created_at": "", "raw": `{}`, "search_text": ""},
	}, p["recall_writes"], "the first entry of an id wins")

	for in, want := range map[string]string{
		`{}`:                                "invalid_input: commit: is required",
		`{"commit":[]}`:                     "invalid_input: commit: must be",
		`{"commit":{},"now":"soon"}`:        "invalid_input: now: ",
		`{"commit":{"conversation_id":""}}`: "invalid_input: conversation_id: must be a non-empty string",
		`{"commit":{"conversation_id":"c1","insert_message":{"id":""}}}`:                                                                                                               "invalid_input: insert_message.id: is required",
		`{"commit":{"conversation_id":"c1","insert_message":{"id":"x","conversation_id":"c2"}}}`:                                                                                       `invalid_input: insert_message.conversation_id: "c2" differs from conversation_id "c1"`,
		`{"commit":{"conversation_id":"c1","insert_message":null,"remove_message_ids":[1]}}`:                                                                                           "invalid_input: remove_message_ids[0]: must be a string",
		`{"commit":{"conversation_id":"c1","insert_message":null,"archive_writes":[{"label":""}]}}`:                                                                                    "invalid_input: archive_writes[0].label: is empty",
		`{"commit":{"conversation_id":"c1","insert_message":null,"archive_writes":[{"content":"x"}]}}`:                                                                                 "invalid_input: archive_writes[0].label: must be a string",
		`{"commit":{"conversation_id":"c1","insert_message":null,"history_owner":"caller","remove_message_ids":["m1"]}}`:                                                               "invalid_input: remove_message_ids: must be empty with history_owner caller",
		`{"commit":{"conversation_id":"c1","insert_message":null,"remove_message_ids":["t1"],"replace_messages":[{"id":"t1","new_id":"t1","role":"tool","content":"","message":{}}]}}`: `invalid_input: replace_messages[0].id: "t1" is removed or replaced twice`,
	} {
		_, err := e.PlanCommit([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

// parseBlocks reads each content as core.ParseBlock does, naming what is
// wrong with metadata that cannot be read.
func TestParseBlocksExport(t *testing.T) {
	out, err := DefaultEnv().ParseBlocks([]byte(`{"contents":[
		"{\"conversation_id\":\"c1\",\"operation_id\":\"op\",\"depth\":1,\"start\":\"2026-02-28T10:00:00Z\",\"end\":\"2026-02-28T10:19:00Z\",\"count\":2,\"source_message_ids\":[\"m1\",\"m2\"]}\nthe summary",
		"free text",
		"{\"conversation_id\":\"c1\",\"depth\":\"2\",\"start\":\"2026-02-28T10:00:00Z\",\"end\":\"2026-02-28T10:19:00Z\",\"count\":2}\nx"]}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"blocks":[
		{"batch":{"operation_id":"op","depth":1,"start_time":"2026-02-28T10:00:00.000Z","end_time":"2026-02-28T10:19:00.000Z",
			"message_count":2,"source_message_ids":["m1","m2"],"method":"llm","summary":"the summary"}},
		{"batch":null},
		{"batch":null,"malformed":"depth: must be a whole number from 0, got \"2\""}]}`, string(out))
	_, err = DefaultEnv().ParseBlocks([]byte(`{"contents":["a",1]}`))
	assert.EqualError(t, err, "invalid_input: contents[1]: must be a string, got a number")
}

// planAppend reads messages of any shape as a store appends them: own ids
// required and unique, the conversation the store's, times normalised.
func TestPlanAppendExport(t *testing.T) {
	e := DefaultEnv()
	out, err := e.PlanAppend([]byte(`{"conversation_id":"c1","messages":[
		{"id":"m1","conversation_id":"c1","role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"created_at":"2026-02-28T11:00:00.1234+01:00"},
		{"id":"m2","role":"assistant","content":"ok"}]}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"messages":[{"id":"m1","role":"user","content":"a\nb","created_at":"2026-02-28T10:00:00.123Z"},
		{"id":"m2","role":"assistant","content":"ok","created_at":""}]}`, string(out))
	for in, want := range map[string]string{
		`{"messages":[]}`:          "invalid_input: conversation_id: must be a non-empty string",
		`{"conversation_id":"c1"}`: "invalid_input: messages: is required",
		`{"conversation_id":"c1","messages":[{"role":"user","content":"x"}]}`:                                                 "invalid_input: messages[0].id: is required",
		`{"conversation_id":"c1","messages":[{"id":"a","conversation_id":"c2","role":"user","content":"x"}]}`:                 `invalid_input: messages[0].conversation_id: "c2" differs from conversation_id "c1"`,
		`{"conversation_id":"c1","messages":[{"id":"a","role":"user","content":"x"},{"id":"a","role":"user","content":"y"}]}`: `invalid_input: messages[1].id: repeats messages[0].id "a"`,
		`{"conversation_id":"c1","messages":[{"id":"a","role":"robot","content":"x"}]}`:                                       "invalid_input: messages[0].role",
		`{"conversation_id":"c1","messages":[{"id":"a","role":"user","content":"x","created_at":"soon"}]}`:                    "invalid_input: messages[0].created_at",
	} {
		_, err := e.PlanAppend([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}
