package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Messages replaced in place (SCHEMA.md, "The commit", replace_messages):
// a kept tool result cleared, a message truncated. The replacement takes
// the original's position; the original moves to recall storage, read
// back exact and found by its own words; held ids are not appended
// again; a replacement that kept its id leaves the active history later
// without clashing with its original.

// toolMessages appends a call and its long result to conversation conv.
func toolMessages(t *testing.T, s store.Store, conv string) {
	t.Helper()
	require.NoError(t, s.AppendMessages(context.Background(), conv, []store.Message{
		msg(conv, "u1", "user", "read the deployment log please", 0),
		msg(conv, "a1", "assistant", "reading it", 1),
		msg(conv, "t1", "tool", "the deployment log: kestrel-cluster rollout stalled at 73 percent", 2),
		msg(conv, "u2", "user", "thanks", 3),
	}))
}

const clearedT1 = `[tool result cleared: read_log; full output in recall storage as "t1" (memory_read)]`

func replaceT1(newID string) core.ReplaceMessage {
	raw := `{"id":"` + newID + `","role":"tool","content":` + string(core.AppendJSONString(nil, clearedT1)) + `}`
	if newID == "" {
		raw = `{"role":"tool","content":` + string(core.AppendJSONString(nil, clearedT1)) + `}`
	}
	return core.ReplaceMessage{ID: "t1", NewID: orDefault(newID, "d_t1cleared"), Role: core.RoleTool, Content: clearedT1, Raw: []byte(raw)}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func testCommitReplaces(t *testing.T, open Opener) {
	ctx := context.Background()
	for _, tc := range []struct{ name, newID string }{{"own id kept", "t1"}, {"a new id", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			toolMessages(t, s, "c1")
			orig, err := s.ActiveMessages(ctx, "c1")
			require.NoError(t, err)
			r := replaceT1(tc.newID)
			require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", NoInsert: true,
				ReplaceMessages: []core.ReplaceMessage{r},
				SearchText:      []core.SearchText{{MessageID: "t1", Text: "the deployment log: kestrel-cluster rollout stalled at 73 percent"}}}))

			active, err := s.ActiveMessages(ctx, "c1")
			require.NoError(t, err)
			require.Equal(t, []string{"u1", "a1", r.NewID, "u2"}, ids(active), "the replacement takes the original's place; no clip-archive")
			assert.Equal(t, string(r.Raw), string(active[2].Raw))
			assert.Equal(t, clearedT1, active[2].Content)
			assert.Equal(t, "tool", active[2].Role)
			assert.Equal(t, orig[2].CreatedAt, active[2].CreatedAt, "the time stays")

			rec, err := s.Recall(ctx, "c1", "t1")
			require.NoError(t, err, "the original is in recall")
			assert.Equal(t, string(orig[2].Raw), string(rec.Raw), "exact")
			hits, err := s.Search(ctx, "kestrel rollout stalled", store.SearchOptions{ConversationID: "c1"})
			require.NoError(t, err)
			require.NotEmpty(t, hits)
			found := false
			for _, h := range hits {
				found = found || h.ID == "t1" && strings.Contains(h.Text, "kestrel")
			}
			assert.True(t, found, "the original is found by its own words: %+v", hits)
			hits, err = s.Search(ctx, "tool result cleared read_log", store.SearchOptions{ConversationID: "c1"})
			require.NoError(t, err)
			for _, h := range hits {
				assert.False(t, h.InContext && h.ID == r.NewID, "the replacement %s is not indexed: its original is the hit", h.ID)
			}

			// The caller sends its list again, original or replaced: both
			// ids are held, nothing is appended.
			for _, m := range []store.Message{orig[2], {ID: r.NewID, ConversationID: "c1", Role: "tool", Content: clearedT1, Raw: r.Raw}} {
				added, err := s.AppendNew(ctx, "c1", []store.Message{m})
				require.NoError(t, err)
				assert.Empty(t, added, "%s is held", m.ID)
			}

			// A later compaction removes the replacement: the original
			// stays in recall as it was.
			require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op2",
				RemoveMessageIDs: []string{"u1", "a1", r.NewID},
				ArchiveWrites: []core.ArchiveWrite{{Label: core.BatchLabelPrefix("c1") + "2026-02-28T10:02:00.000Z",
					Content: batchContent("c1", "op2", "the log was read", "u1", "a1", r.NewID), Tier: "archival"}},
				SearchText: []core.SearchText{{MessageID: r.NewID}}, Insert: clipArchive("c1", "ca1")}))
			active, err = s.ActiveMessages(ctx, "c1")
			require.NoError(t, err)
			assert.Equal(t, []string{"ca1", "u2"}, ids(active))
			rec, err = s.Recall(ctx, "c1", "t1")
			require.NoError(t, err)
			assert.Equal(t, string(orig[2].Raw), string(rec.Raw), "the original, not its replacement")
			if r.NewID != "t1" {
				rec, err = s.Recall(ctx, "c1", r.NewID)
				require.NoError(t, err, "a replacement under an id of its own is in recall too")
				assert.Equal(t, string(r.Raw), string(rec.Raw))
			}
		})
	}
}

// A replace_messages id no longer active conflicts; a new id the
// conversation holds, a caller-owned commit with replacements and a
// malformed entry are refused; each changes nothing.
func testCommitReplaceRefusals(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	toolMessages(t, s, "c1")
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op0", RemoveMessageIDs: []string{"u1"},
		Insert: clipArchive("c1", "ca0")}))
	gone := replaceT1("t1")
	gone.ID = "u1"
	taken := replaceT1("")
	taken.NewID = "u2"
	bad := replaceT1("t1")
	bad.Raw = []byte(`{"role":`)
	cases := []struct {
		name     string
		c        *core.Commit
		conflict bool
		want     string
	}{
		{"no longer active", &core.Commit{ConversationID: "c1", OperationID: "op1", NoInsert: true, ReplaceMessages: []core.ReplaceMessage{gone}}, true, "u1"},
		{"new id held", &core.Commit{ConversationID: "c1", OperationID: "op1", NoInsert: true, ReplaceMessages: []core.ReplaceMessage{taken}}, false, "u2"},
		{"caller-owned", &core.Commit{ConversationID: "c1", OperationID: "op1", NoInsert: true, HistoryOwner: core.OwnerCaller,
			RemoveMessageIDs: []string{}, ReplaceMessages: []core.ReplaceMessage{replaceT1("t1")}}, false, "replace_messages: must be empty"},
		{"not JSON", &core.Commit{ConversationID: "c1", OperationID: "op1", NoInsert: true, ReplaceMessages: []core.ReplaceMessage{bad}}, false, "not valid JSON"},
		{"removed and replaced", &core.Commit{ConversationID: "c1", OperationID: "op1", NoInsert: true, RemoveMessageIDs: []string{"t1"},
			ReplaceMessages: []core.ReplaceMessage{replaceT1("t1")}}, false, "removed or replaced twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(t, s)
			err := s.Commit(ctx, tc.c)
			require.Error(t, err)
			assert.Equal(t, tc.conflict, errors.Is(err, core.ErrConflict), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, dump(t, s), "nothing changed")
		})
	}
}
