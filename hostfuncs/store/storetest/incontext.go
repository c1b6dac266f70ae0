package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// hitByID returns the hit with id, or nil.
func hitByID(hits []store.Hit, id string) *store.Hit {
	for i := range hits {
		if hits[i].ID == id {
			return &hits[i]
		}
	}
	return nil
}

// testSearchActiveHistory: a message still in the active history is a
// hit, InContext, ranked on the scale of recalled messages and batches;
// IndexActive gives it the plug-in's search text (tool names and inputs,
// the context lines of its exchange); a clip-archive never is a hit; a
// message the commit moves to recall is one hit, never two; folding
// holds across the two.
func testSearchActiveHistory(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	sep := core.SearchContextSep
	call := msg("c1", "call1", "assistant", "", 1)
	call.Raw = json.RawMessage(`{"id":"call1","role":"assistant","content":"","tool_calls":[{"id":"t1","type":"function","function":{"name":"get_order","arguments":"{\"order\":4471}"}}]}`)
	require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{
		msg("c1", "u1", "user", "where is my parcel?", 0),
		call,
		msg("c1", "res1", "tool", `{"status":"shipped","carrier":"Pelican Post"}`, 2),
		msg("c1", "a1", "assistant", "Your parcel shipped with Pelican Post.", 3),
	}))
	// Before IndexActive a message is indexed by its content.
	hits, err := s.Search(ctx, "pelican", store.SearchOptions{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"res1", "a1"}, hitIDs(hits))
	for _, h := range hits {
		assert.True(t, h.InContext, h.ID)
		assert.Equal(t, store.HitMessage, h.Kind)
		assert.Empty(t, h.OperationID)
	}
	hits, err = s.Search(ctx, "get_order 4471", store.SearchOptions{})
	require.NoError(t, err)
	assert.Empty(t, hits, "a call's name and arguments are not its content")

	// The plug-in's search texts: the call's name and arguments; the
	// result with its call as context.
	require.NoError(t, s.IndexActive(ctx, "c1", map[string]string{
		"call1":   `get_order {"order":4471}` + sep + "where is my parcel?",
		"res1":    `{"status":"shipped","carrier":"Pelican Post"}` + sep + `get_order {"order":4471}` + "\n» where is my parcel?",
		"missing": "an id the active history does not hold is ignored",
	}))
	hits, err = s.Search(ctx, "get_order 4471", store.SearchOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "call1", hits[0].ID, "own words outrank context: %v", hitIDs(hits))
	assert.True(t, hits[0].InContext)
	assert.Equal(t, `get_order {"order":4471}`+sep+"where is my parcel?", hits[0].Text, "the hit's text is what was indexed")
	hits, err = s.Search(ctx, "ignored", store.SearchOptions{})
	require.NoError(t, err)
	assert.Empty(t, hits)
	require.NoError(t, s.IndexActive(ctx, "c1", nil), "nothing to index is no error")

	// Comparable scores: the same text active in c2 and recalled in c3.
	same := "the walrus inventory counts seventeen crates"
	require.NoError(t, s.AppendMessages(ctx, "c2", []store.Message{msg("c2", "w1", "user", same, 0)}))
	recallAs(t, s, "c3", "op3", []store.Message{msg("c3", "w1", "user", same, 0)}, nil)
	hits, err = s.Search(ctx, "walrus crates", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	assert.InDelta(t, hits[0].Score, hits[1].Score, 1e-9, "an active and a recalled message of the same text score alike")
	byConv := map[string]bool{}
	for _, h := range hits {
		byConv[h.ConversationID] = h.InContext
	}
	assert.Equal(t, map[string]bool{"c2": true, "c3": false}, byConv)

	// A commit moves res1 to recall: one hit, no longer in context, with
	// the commit's search text; the clip-archive it inserts is no hit.
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1",
		RemoveMessageIDs: []string{"u1", "call1", "res1"}, Insert: clipArchive("c1", "ca1"),
		SearchText:    []core.SearchText{{MessageID: "res1", Text: `{"status":"shipped","carrier":"Pelican Post"}` + sep + `get_order {"order":4471}`}},
		ArchiveWrites: []core.ArchiveWrite{batchWrite("c1", "op1", "The order 4471 shipped.", at(0), at(2), "u1", "call1", "res1")}}))
	hits, err = s.Search(ctx, "carrier", store.SearchOptions{ConversationID: "c1"})
	require.NoError(t, err)
	require.Equal(t, []string{"res1"}, hitIDs(hits), "one document: the recalled message")
	assert.False(t, hits[0].InContext)
	assert.Equal(t, "op1", hits[0].OperationID)
	hits, err = s.Search(ctx, "pelican", store.SearchOptions{ConversationID: "c1"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"res1", "a1"}, hitIDs(hits))
	assert.True(t, hitByID(hits, "a1").InContext)
	assert.False(t, hitByID(hits, "res1").InContext)
	for _, q := range []string{"Context Summary", "compressed compaction cycle"} {
		hits, err = s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err)
		assert.Empty(t, hits, "query %q: a clip-archive is never a hit", q)
	}

	// Folding across active and recalled: the same question asked again
	// (still active) folds into the better of the two, not both.
	recallAs(t, s, "c4", "op4", []store.Message{msg("c4", "q1", "user", "Did the nightly backup finish?", 0)}, nil)
	require.NoError(t, s.AppendMessages(ctx, "c4", []store.Message{msg("c4", "q2", "user", "Did the nightly backup finish?", 10)}))
	hits, err = s.Search(ctx, "nightly backup", store.SearchOptions{ConversationID: "c4"})
	require.NoError(t, err)
	assert.Equal(t, []string{"q2"}, hitIDs(hits), "the more recent of two equal texts stays")
}

// testSearchInContext: a caller-owned conversation's messages are
// indexed for one search (SearchOptions.InContext): ranked with the
// recalled ones on one scale, hits InContext; a message its recall holds
// is the recalled hit, once; nothing of them stays; bad input is an
// error naming it.
func testSearchInContext(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	old := msg("c1", "m1", "user", "the quokka census counted forty", 0)
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", HistoryOwner: core.OwnerCaller,
		Insert: clipArchive("c1", "ca1"), RecallWrites: []core.RecallWrite{recallWrite(old, old.Content)}}))
	before := dump(t, s)
	inContext := []store.Message{
		{ID: "ca1", Role: "system", Content: "[Context Summary — 1 message compressed] quokka"},
		{ID: "m1", Role: "user", Content: old.Content}, // recalled already: its recalled row is the hit
		{ID: "m2", Role: "assistant", Content: "the quokka census counted fifty", CreatedAt: at(5)},
		{ID: "m3", Role: "tool", Content: "42 crates", SearchText: "42 crates" + core.SearchContextSep + "count_quokkas {\"island\":\"Rottnest\"}"},
	}
	hits, err := s.Search(ctx, "quokka census", store.SearchOptions{ConversationID: "c1", InContext: inContext})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"m1", "m2"}, hitIDs(hits), "the clip-archive is no hit; m1 once")
	assert.False(t, hitByID(hits, "m1").InContext, "m1 is the recalled message")
	m2 := hitByID(hits, "m2")
	require.NotNil(t, m2)
	assert.True(t, m2.InContext)
	assert.Equal(t, "assistant", m2.Role)
	assert.True(t, at(5).Equal(m2.CreatedAt))
	assert.InDelta(t, hits[0].Score, hits[1].Score, 1e-9, "texts alike score alike, in context or recalled")
	hits, err = s.Search(ctx, "Rottnest", store.SearchOptions{ConversationID: "c1", InContext: inContext})
	require.NoError(t, err)
	require.Equal(t, []string{"m3"}, hitIDs(hits), "a search text's context is indexed")
	assert.Contains(t, hits[0].Text, "count_quokkas")
	assert.Equal(t, before, dump(t, s), "the in-context messages leave nothing behind")
	hits, err = s.Search(ctx, "fifty", store.SearchOptions{ConversationID: "c1"})
	require.NoError(t, err)
	assert.Empty(t, hits, "without them, nothing of them is found")

	for name, opts := range map[string]store.SearchOptions{
		"ConversationID":  {InContext: inContext},
		"InContext[0].id": {ConversationID: "c1", InContext: []store.Message{{Role: "user", Content: "x"}}},
		"InContext[1]":    {ConversationID: "c1", InContext: []store.Message{{ID: "a", Role: "user"}, {ID: "b", Role: "wizard"}}},
		"conversation":    {ConversationID: "c1", InContext: []store.Message{{ID: "a", ConversationID: "c2", Role: "user"}}},
	} {
		_, err := s.Search(ctx, "quokka", opts)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
	assert.Equal(t, before, dump(t, s))
}

// testSearchReplacedStaysOne: a message replaced in place (a cleared
// tool result) is one hit, its recalled original, whether the
// replacement kept its id or took a new one — also after IndexActive
// gives the replacement a search text (a host re-indexing the messages
// around an append).
func testSearchReplacedStaysOne(t *testing.T, open Opener) {
	ctx := context.Background()
	for _, tc := range []struct{ name, newID string }{{"own id kept", "t1"}, {"a new id", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			toolMessages(t, s, "c1")
			r := replaceT1(tc.newID)
			require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", NoInsert: true,
				ReplaceMessages: []core.ReplaceMessage{r},
				SearchText:      []core.SearchText{{MessageID: "t1", Text: "the deployment log: kestrel-cluster rollout stalled at 73 percent"}}}))
			require.NoError(t, s.IndexActive(ctx, "c1", map[string]string{r.NewID: clearedT1 + core.SearchContextSep + "read the deployment log please"}))
			for _, q := range []string{"kestrel rollout", "read_log deployment log recall storage"} {
				hits, err := s.Search(ctx, q, store.SearchOptions{ConversationID: "c1"})
				require.NoError(t, err)
				var withT1 []string
				for _, h := range hits {
					if h.ID == "t1" || h.ID == r.NewID {
						withT1 = append(withT1, h.ID)
						assert.False(t, h.InContext, "query %q: the recalled original, not the replacement", q)
					}
				}
				assert.LessOrEqual(t, len(withT1), 1, "query %q: one hit for the message: %v", q, hitIDs(hits))
			}
		})
	}
}
