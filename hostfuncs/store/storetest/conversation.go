package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// Helpers for host tests that compact a conversation held in a real store
// (package harness).

// Messages turns a history's raw JSON messages into store rows, Raw kept
// byte for byte.
func Messages(t testing.TB, raw []json.RawMessage) []store.Message {
	t.Helper()
	out := make([]store.Message, len(raw))
	for i, r := range raw {
		g := gjson.ParseBytes(r)
		ts, err := core.ParseTime(g.Get("created_at").String())
		require.NoError(t, err)
		out[i] = store.Message{ID: g.Get("id").String(), ConversationID: g.Get("conversation_id").String(),
			Role: g.Get("role").String(), Content: g.Get("content").String(), CreatedAt: ts, Raw: r}
	}
	return out
}

// ActiveRaw is the conversation's active history as raw JSON messages.
func ActiveRaw(t testing.TB, s store.Store, conv string) []json.RawMessage {
	t.Helper()
	ms, err := s.ActiveMessages(context.Background(), conv)
	require.NoError(t, err)
	out := make([]json.RawMessage, len(ms))
	for i := range ms {
		out[i] = ms[i].Raw
	}
	return out
}

// RequireNothingLost checks the guarantee after a compaction whose result
// (a CompactionResult) committed: every message of original is either
// still active as it was, or in recall with its exact JSON — and then
// covered by one of the result's batches, or replaced in place (a tool
// result cleared, a message truncated: the active history holds its
// replacement, which names its id).
func RequireNothingLost(t testing.TB, s store.Store, conv string, original []json.RawMessage, result gjson.Result) {
	t.Helper()
	covered := map[string]bool{}
	for _, b := range result.Get("batches").Array() {
		for _, id := range b.Get("source_message_ids").Array() {
			covered[id.String()] = true
		}
	}
	active := map[string]json.RawMessage{}
	named := map[string]bool{} // ids a replacement in the active history names
	for _, m := range ActiveRaw(t, s, conv) {
		active[gjson.GetBytes(m, "id").String()] = m
		content := gjson.GetBytes(m, "content").String()
		if i := strings.Index(content, core.RecallMarker); i >= 0 {
			if id, err := strconv.QuotedPrefix(content[i+len(core.RecallMarker):]); err == nil {
				unq, _ := strconv.Unquote(id)
				named[unq] = true
			}
		}
	}
	for _, m := range original {
		id := gjson.GetBytes(m, "id").String()
		if a, ok := active[id]; ok && sameJSON(a, m) {
			continue
		}
		rec, err := s.Recall(context.Background(), conv, id)
		require.NoError(t, err, "message %s is neither active nor in recall", id)
		require.JSONEq(t, string(m), string(rec.Raw))
		require.True(t, covered[id] || named[id], "recalled message %s is in no batch and no replacement names it", id)
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
