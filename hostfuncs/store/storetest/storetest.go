// Package storetest is the conformance suite every store.Store must pass.
// The SQLite and PostgreSQL stores run it from their own tests; a new
// backend proves it keeps the contract of docs/spec.md#host-functions by
// running it too:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
//
// open must return a new, empty store for every call (each subtest gets its
// own) and arrange for it to be closed, e.g. with t.Cleanup. The store must
// also implement store.Dumper, store.Migrator and store.VectorIndex (the
// Semantic tests run it against a real embeddings server, embeddingstest).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// Opener returns a fresh, empty store for one test.
type Opener func(t *testing.T) store.Store

// Run runs every conformance test against stores made by open.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"AppendAndActiveOrder", testAppendAndActiveOrder},
		{"AppendRejects", testAppendRejects},
		{"AppendNew", testAppendNew},
		{"AppendNewConcurrent", testAppendNewConcurrent},
		{"CommitAppliesEverything", testCommitAppliesEverything},
		{"CommitConflictChangesNothing", testCommitConflictChangesNothing},
		{"CommitDuplicateInsertID", testCommitDuplicateInsertID},
		{"CommitMalformedRefused", testCommitMalformedRefused},
		{"CommitInsertRaw", testCommitInsertRaw},
		{"CallerOwnedCommit", testCallerOwnedCommit},
		{"CallerOwnedRefusals", testCallerOwnedRefusals},
		{"CommitReplaces", testCommitReplaces},
		{"CommitReplaceRefusals", testCommitReplaceRefusals},
		{"ListBlocksLiteralPrefix", testListBlocksLiteralPrefix},
		{"RecallExactRaw", testRecallExactRaw},
		{"SearchRanking", testSearchRanking},
		{"SearchHostileQueries", testSearchHostileQueries},
		{"SearchQuestionFindsAnswer", testSearchQuestionFindsAnswer},
		{"SearchSkipsSupersededClipArchives", testSearchSkipsSupersededClipArchives},
		{"SearchInterleavesKinds", testSearchInterleavesKinds},
		{"SearchToolText", testSearchToolText},
		{"SearchTiesToMoreRecent", testSearchTiesToMoreRecent},
		{"SearchFoldsRepeats", testSearchFoldsRepeats},
		{"SearchActiveHistory", testSearchActiveHistory},
		{"SearchInContext", testSearchInContext},
		{"SearchReplacedStaysOne", testSearchReplacedStaysOne},
		{"ReadByID", testReadByID},
		{"ConcurrentCommits", testConcurrentCommits},
		{"SameIDsInTwoConversations", testSameIDsInTwoConversations},
		{"SameIDsCallerOwned", testSameIDsCallerOwned},
		{"SameIDsVectors", testSameIDsVectors},
		{"SearchAfterNUL", testSearchAfterNUL},
		{"MigrateIsIdempotent", testMigrateIsIdempotent},
		{"SemanticParaphrase", testSemanticParaphrase},
		{"SemanticFusionOrder", testSemanticFusionOrder},
		{"SemanticProviderFailure", testSemanticProviderFailure},
		{"SemanticLazyBackfill", testSemanticLazyBackfill},
		{"SemanticOtherModelIgnored", testSemanticOtherModelIgnored},
		{"SemanticConversationFilter", testSemanticConversationFilter},
		{"SemanticVectorsFollowDocuments", testSemanticVectorsFollowDocuments},
		{"SemanticHostileQueries", testSemanticHostileQueries},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

var base = time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)

// msg builds a message whose Raw is hand-written JSON with an unusual
// layout and an unknown field, so a store that re-encodes instead of
// keeping the bytes is caught.
func msg(conv, id, role, content string, minute int) store.Message {
	created := base.Add(time.Duration(minute) * time.Minute)
	c, _ := json.Marshal(content)
	raw := fmt.Sprintf(`{ "id":%q,"conversation_id":%q, "role":%q,"content":%s,"created_at":%q,"x_extra":{"n":[1, 2]} }`,
		id, conv, role, c, core.FormatTime(created))
	return store.Message{ID: id, ConversationID: conv, Role: role, Content: content, CreatedAt: created, Raw: json.RawMessage(raw)}
}

// seed appends n user messages <conv>-m1..<conv>-mn with distinct content.
func seed(t *testing.T, s store.Store, conv string, n int) []store.Message {
	t.Helper()
	msgs := make([]store.Message, n)
	for i := range msgs {
		msgs[i] = msg(conv, fmt.Sprintf("%s-m%d", conv, i+1), "user", fmt.Sprintf("message number %d of %s", i+1, conv), i)
	}
	require.NoError(t, s.AppendMessages(context.Background(), conv, msgs))
	return msgs
}

func ids(msgs []store.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func blockLabels(bs []core.Block) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Label
	}
	return out
}

func batchContent(conv, op, summary string, sources ...string) string {
	return core.FormatBatchBlock(conv, &core.Batch{
		Content: summary, Depth: 0, Start: base, End: base.Add(time.Hour),
		MessageCount: len(sources), SourceMessageIDs: sources, OperationID: op, Method: core.MethodLLM,
	})
}

func clipArchive(conv, id string) core.InsertMessage {
	return core.InsertMessage{
		ID: id, ConversationID: conv, Role: core.RoleSystem,
		Content: "[Context Summary — 2 messages compressed across 1 compaction cycle(s)]", CreatedAt: base.Add(24 * time.Hour),
	}
}

// writeBlocks commits archive writes with the given labels into conv,
// removing nothing (a commit always inserts a clip-archive; its id is
// derived from the first label).
func writeBlocks(t *testing.T, s store.Store, conv string, labels ...string) {
	t.Helper()
	c := &core.Commit{ConversationID: conv, OperationID: "op-" + labels[0], Insert: clipArchive(conv, "ca-"+labels[0])}
	for _, l := range labels {
		c.ArchiveWrites = append(c.ArchiveWrites, core.ArchiveWrite{Label: l, Content: batchContent(conv, c.OperationID, "summary of "+l), Tier: "archival", Reason: "test"})
	}
	require.NoError(t, s.Commit(context.Background(), c))
}

func dump(t *testing.T, s store.Store) string {
	t.Helper()
	d, ok := s.(store.Dumper)
	require.True(t, ok, "%T must implement store.Dumper for the conformance suite", s)
	out, err := d.Dump(context.Background())
	require.NoError(t, err)
	return out
}

func testAppendAndActiveOrder(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	first := seed(t, s, "c1", 3)
	more := []store.Message{msg("c1", "c1-m4", "assistant", "four", 3), msg("c1", "c1-m5", "tool", "five", 4)}
	require.NoError(t, s.AppendMessages(ctx, "c1", more))
	seed(t, s, "c2", 2)

	got, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	want := append(append([]store.Message{}, first...), more...)
	require.Equal(t, ids(want), ids(got))
	for i := range want {
		assert.Equal(t, string(want[i].Raw), string(got[i].Raw), "raw of %s", want[i].ID)
		assert.Equal(t, want[i].Role, got[i].Role)
		assert.Equal(t, want[i].Content, got[i].Content)
		assert.True(t, want[i].CreatedAt.Equal(got[i].CreatedAt), "created_at of %s: %v vs %v", want[i].ID, want[i].CreatedAt, got[i].CreatedAt)
		assert.Equal(t, "c1", got[i].ConversationID)
	}

	// A message given without Raw is stored with Raw built from its fields.
	require.NoError(t, s.AppendMessages(ctx, "c3", []store.Message{{ID: "c3-m1", Role: "user", Content: "a <b> & c", CreatedAt: base}}))
	got, err = s.ActiveMessages(ctx, "c3")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.JSONEq(t, `{"id":"c3-m1","conversation_id":"c3","role":"user","content":"a <b> & c","created_at":"2026-02-28T10:00:00.000Z"}`, string(got[0].Raw))

	none, err := s.ActiveMessages(ctx, "nobody")
	require.NoError(t, err)
	assert.Empty(t, none)
}

func testAppendRejects(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 2)
	seed(t, s, "c2", 1)
	cases := []struct {
		name    string
		conv    string
		msgs    []store.Message
		mention string
	}{
		{"duplicate of a stored id", "c1", []store.Message{msg("c1", "c1-new", "user", "x", 9), msg("c1", "c1-m2", "user", "x", 9)}, "c1-m2"},
		{"duplicate within the call", "c1", []store.Message{msg("c1", "dup", "user", "x", 9), msg("c1", "dup", "user", "y", 9)}, "dup"},
		{"invalid role", "c1", []store.Message{msg("c1", "bad-role", "robot", "x", 9)}, "bad-role"},
		{"empty id", "c1", []store.Message{{Role: "user", Content: "x"}}, "id"},
		{"raw not JSON", "c1", []store.Message{{ID: "bad-raw", Role: "user", Raw: json.RawMessage("{nope")}}, "bad-raw"},
		{"other conversation", "c1", []store.Message{msg("c2", "c2-x", "user", "x", 9)}, "c2-x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(t, s)
			err := s.AppendMessages(ctx, tc.conv, tc.msgs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.mention)
			assert.False(t, errors.Is(err, core.ErrConflict))
			assert.Equal(t, before, dump(t, s), "a rejected append must change nothing")
		})
	}
	// A removed message's id stays taken: it lives on in recall.
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"c1-m1"}, Insert: clipArchive("c1", "ca1")}))
	err := s.AppendMessages(ctx, "c1", []store.Message{msg("c1", "c1-m1", "user", "again", 9)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c1-m1")
}

func testCommitAppliesEverything(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	orig := seed(t, s, "c1", 5)
	seed(t, s, "c2", 2)
	label1 := core.BatchLabelPrefix("c1") + "2026-02-28T10:01:00.000Z"
	content1 := batchContent("c1", "op1", "alpha summary", "c1-m1", "c1-m2")
	require.NoError(t, s.Commit(ctx, &core.Commit{
		ConversationID:   "c1",
		OperationID:      "op1",
		ArchiveWrites:    []core.ArchiveWrite{{Label: label1, Content: content1, Tier: "archival", Reason: "compaction"}},
		RemoveMessageIDs: []string{"c1-m1", "c1-m2"},
		Insert:           clipArchive("c1", "ca1"),
	}))

	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	require.Equal(t, []string{"ca1", "c1-m3", "c1-m4", "c1-m5"}, ids(active))
	ca := active[0]
	assert.Equal(t, "system", ca.Role)
	assert.Equal(t, clipArchive("c1", "ca1").Content, ca.Content)
	assert.Equal(t, `{"id":"ca1","conversation_id":"c1","role":"system","content":"[Context Summary — 2 messages compressed across 1 compaction cycle(s)]","created_at":"2026-03-01T10:00:00.000Z"}`,
		string(ca.Raw), "the clip-archive's raw JSON is built from its fields")

	for _, m := range orig[:2] {
		r, err := s.Recall(ctx, m.ConversationID, m.ID)
		require.NoError(t, err, "removed message %s must be in recall", m.ID)
		assert.Equal(t, string(m.Raw), string(r.Raw))
	}
	blocks, err := s.ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	assert.Equal(t, label1, blocks[0].Label)
	assert.Equal(t, content1, blocks[0].Content)
	assert.NotEmpty(t, blocks[0].ID)

	// Second compaction: replaces the clip-archive, re-summarizes the old
	// batch into a new one (deleting it) and adds another.
	label2 := core.BatchLabelPrefix("c1") + "2026-02-28T10:02:00.000Z"
	label3 := core.BatchLabelPrefix("c1") + "2026-02-28T10:03:00.000Z"
	require.NoError(t, s.Commit(ctx, &core.Commit{
		ConversationID: "c1",
		OperationID:    "op2",
		ArchiveWrites: []core.ArchiveWrite{
			{Label: label3, Content: batchContent("c1", "op2", "gamma", "c1-m3"), Tier: "archival"},
			{Label: label2, Content: batchContent("c1", "op2", "beta resummary", "c1-m1", "c1-m2"), Tier: "archival"},
		},
		ArchiveDeletes:   []string{blocks[0].ID},
		RemoveMessageIDs: []string{"ca1", "c1-m3", "ca1"}, // a repeated id is not a conflict
		Insert:           clipArchive("c1", "ca2"),
	}))
	active, err = s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	require.Equal(t, []string{"ca2", "c1-m4", "c1-m5"}, ids(active))
	r, err := s.Recall(ctx, "c1", "ca1")
	require.NoError(t, err)
	assert.Equal(t, string(ca.Raw), string(r.Raw), "the old clip-archive is kept in recall too")

	blocks, err = s.ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	assert.Equal(t, []string{label3, label2}, blockLabels(blocks), "blocks come in creation order")

	// New messages go after the clip-archive and the kept ones.
	require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{msg("c1", "c1-m6", "user", "six", 6)}))
	active, err = s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, []string{"ca2", "c1-m4", "c1-m5", "c1-m6"}, ids(active))

	// The other conversation was not touched.
	other, err := s.ActiveMessages(ctx, "c2")
	require.NoError(t, err)
	assert.Equal(t, []string{"c2-m1", "c2-m2"}, ids(other))

	// A commit that removes everything still leaves the clip-archive.
	require.NoError(t, s.Commit(ctx, &core.Commit{
		ConversationID: "c2", OperationID: "op3", RemoveMessageIDs: []string{"c2-m1", "c2-m2"}, Insert: clipArchive("c2", "ca3"),
	}))
	other, err = s.ActiveMessages(ctx, "c2")
	require.NoError(t, err)
	assert.Equal(t, []string{"ca3"}, ids(other))
}

func testCommitConflictChangesNothing(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 4)
	seed(t, s, "c2", 1)
	writeBlocks(t, s, "c1", core.BatchLabelPrefix("c1")+"2026-02-28T10:00:00.000Z")
	blocks, err := s.ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	// c1-m1 goes to recall: removing it again must conflict.
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op0", RemoveMessageIDs: []string{"c1-m1"}, Insert: clipArchive("c1", "ca0")}))

	write := []core.ArchiveWrite{{Label: core.BatchLabelPrefix("c1") + "2026-02-28T11:00:00.000Z", Content: batchContent("c1", "opX", "never", "c1-m2"), Tier: "archival"}}
	cases := []struct {
		name    string
		remove  []string
		deletes []string
		missing string
	}{
		{"unknown remove id", []string{"c1-m2", "nope"}, nil, "nope"},
		{"already removed id", []string{"c1-m1", "c1-m2"}, nil, "c1-m1"},
		{"another conversation's id", []string{"c1-m2", "c2-m1"}, nil, "c2-m1"},
		{"unknown delete id", []string{"c1-m2"}, []string{blocks[0].ID, "blk_missing"}, "blk_missing"},
		{"only a missing delete", nil, []string{"blk_missing"}, "blk_missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(t, s)
			err := s.Commit(ctx, &core.Commit{
				ConversationID: "c1", OperationID: "opX", ArchiveWrites: write,
				ArchiveDeletes: tc.deletes, RemoveMessageIDs: tc.remove, Insert: clipArchive("c1", "caX"),
			})
			require.Error(t, err)
			assert.True(t, errors.Is(err, core.ErrConflict), "want ErrConflict, got %v", err)
			assert.True(t, errors.Is(err, store.ErrConflict))
			assert.Contains(t, err.Error(), tc.missing, "the error names the missing id")
			assert.Equal(t, before, dump(t, s), "a conflicting commit must change nothing")
		})
	}
}

func testCommitDuplicateInsertID(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 3)
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"c1-m1"}, Insert: clipArchive("c1", "ca1")}))
	for _, id := range []string{"c1-m2", "c1-m1", "ca1"} { // active, in recall, the current clip-archive
		before := dump(t, s)
		err := s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op2", RemoveMessageIDs: []string{"ca1"}, Insert: clipArchive("c1", id)})
		require.Error(t, err, "insert id %s", id)
		assert.False(t, errors.Is(err, core.ErrConflict), "a reused insert id is a caller error, not a conflict")
		assert.Contains(t, err.Error(), id)
		assert.Equal(t, before, dump(t, s))
	}
	before := dump(t, s)
	err := s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op3", Insert: clipArchive("c2", "ca9")})
	require.Error(t, err, "an insert for another conversation is refused")
	assert.Equal(t, before, dump(t, s))
}

// testCommitMalformedRefused: commits core.PlanCommit refuses change
// nothing, and every backend says why in the same words.
func testCommitMalformedRefused(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 3)
	label := core.BatchLabelPrefix("c1") + "2026-02-28T11:00:00.000Z"
	cases := []struct {
		name string
		c    *core.Commit
		want string
	}{
		{"nil", nil, "no commit"},
		{"no conversation", &core.Commit{OperationID: "op1", Insert: clipArchive("c1", "ca1")}, "conversation_id: is empty"},
		{"no insert id", &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"c1-m1"}}, "insert_message.id: is empty"},
		{"unlabelled archive write", &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"c1-m1"},
			ArchiveWrites: []core.ArchiveWrite{{Label: label, Content: "a"}, {Content: "b"}}, Insert: clipArchive("c1", "ca1")}, "archive_writes[1].label: is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(t, s)
			err := s.Commit(ctx, tc.c)
			require.Error(t, err)
			assert.False(t, errors.Is(err, core.ErrConflict), "a malformed commit is a caller error, not a conflict")
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, dump(t, s), "a refused commit must change nothing")
		})
	}
}

// testCommitInsertRaw: the clip-archive is stored as the plug-in returned
// it (insert_raw, in the history's shape), so the active history gives
// back the bytes the caller got.
func testCommitInsertRaw(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 3)
	ins := clipArchive("c1", "clip_1")
	raw := `{"role":"user","content":"[Context Summary — 2 messages compressed across 1 compaction cycle(s)]"}`
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"c1-m1"},
		Insert: ins, InsertRaw: []byte(raw)}))
	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	require.Equal(t, []string{"clip_1", "c1-m2", "c1-m3"}, ids(active))
	assert.Equal(t, raw, string(active[0].Raw))
	assert.Equal(t, "system", active[0].Role, "the role column is clipfold's reading: a clip-archive is a system message")
	before := dump(t, s)
	err = s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op2", RemoveMessageIDs: []string{"c1-m2"},
		Insert: clipArchive("c1", "clip_2"), InsertRaw: []byte(`{"role":`)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "insert_raw: is not valid JSON")
	assert.Equal(t, before, dump(t, s))
}

// recallWrite is a caller-owned commit's entry for m.
func recallWrite(m store.Message, searchText string) core.RecallWrite {
	r, _ := core.ParseRole(m.Role)
	return core.RecallWrite{ID: m.ID, Role: r, Content: m.Content, CreatedAt: m.CreatedAt, SearchText: searchText, Raw: m.Raw}
}

// testCallerOwnedCommit: with history_owner "caller" the store holds no
// active history; a commit writes the removed messages to recall, each
// id once, however often the caller's list brings them back, and never
// conflicts over messages it never held.
func testCallerOwnedCommit(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "other", 2) // a store-owned conversation beside it
	m1 := msg("c1", "d_1", "user", "the invoice total was 1,240 euros", 1)
	m2 := msg("c1", "d_2", "assistant", "", 2)
	prior := store.Message{ID: "clip_0", ConversationID: "c1", Role: "system", Content: "[Context Summary — 9 messages compressed]",
		Raw: json.RawMessage(`{"role":"system","content":"[Context Summary — 9 messages compressed]"}`)}
	label := core.BatchLabelPrefix("c1") + "2026-02-28T10:02:00.000Z"
	commit := &core.Commit{
		ConversationID: "c1", OperationID: "op1", HistoryOwner: core.OwnerCaller, RemoveMessageIDs: []string{},
		ArchiveWrites: []core.ArchiveWrite{{Label: label, Content: batchContent("c1", "op1", "invoice summary", "d_1", "d_2"), Tier: "archival"}},
		RecallWrites: []core.RecallWrite{recallWrite(prior, ""), recallWrite(m1, m1.Content),
			recallWrite(m2, "lookup_invoice {\"number\":\"INV-77\"}"), recallWrite(m1, "a repeat: the first entry wins")},
		Insert: clipArchive("c1", "clip_1"), InsertRaw: []byte(`{"role":"system","content":"x"}`),
	}
	require.NoError(t, s.Commit(ctx, commit))
	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Empty(t, active, "a caller-owned conversation has no active history in the store")
	other, err := s.ActiveMessages(ctx, "other")
	require.NoError(t, err)
	assert.Len(t, other, 2)
	for _, m := range []store.Message{prior, m1, m2} {
		r, err := s.Recall(ctx, m.ConversationID, m.ID)
		require.NoError(t, err, m.ID)
		assert.Equal(t, string(m.Raw), string(r.Raw), "recall keeps the exact JSON")
		assert.Equal(t, "c1", r.ConversationID)
		assert.Equal(t, m.Role, r.Role)
	}
	blocks, err := s.ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	hits, err := s.Search(ctx, "INV-77 invoice", store.SearchOptions{ConversationID: "c1"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Contains(t, hitIDs(hits), "d_2", "a recall write is indexed by its search text")
	assert.NotContains(t, hitIDs(hits), "clip_0", "a superseded clip-archive is never a hit")

	// The caller sends the same list again: the same messages are written
	// again, and nothing changes — no duplicate, no conflict.
	before := dump(t, s)
	again := *commit
	again.OperationID, again.ArchiveWrites = "op2", nil
	require.NoError(t, s.Commit(ctx, &again))
	assert.Equal(t, before, dump(t, s), "recall writes are idempotent")

	// Messages the store never held never conflict; a missing block does.
	m3 := msg("c1", "d_3", "user", "three", 3)
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op3", HistoryOwner: core.OwnerCaller,
		RecallWrites: []core.RecallWrite{recallWrite(m1, m1.Content), recallWrite(m3, "three")}, Insert: clipArchive("c1", "clip_2"),
		ArchiveDeletes: []string{blocks[0].ID}}))
	_, err = s.Recall(ctx, "c1", "d_3")
	require.NoError(t, err)
	before = dump(t, s)
	m4 := msg("c1", "d_4", "user", "four", 4)
	err = s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op4", HistoryOwner: core.OwnerCaller,
		RecallWrites: []core.RecallWrite{recallWrite(m4, "four")}, Insert: clipArchive("c1", "clip_3"), ArchiveDeletes: []string{blocks[0].ID}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, core.ErrConflict), "a deleted block is the one conflict of a caller-owned commit: %v", err)
	assert.Equal(t, before, dump(t, s))
}

// testCallerOwnedRefusals: what a caller-owned commit may not do, and
// that a refusal changes nothing.
func testCallerOwnedRefusals(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c2", 2)
	// c2-m1 is active in c2; d_x goes to c2's recall.
	x := msg("c2", "d_x", "user", "x", 1)
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c2", OperationID: "op0", HistoryOwner: core.OwnerCaller,
		RecallWrites: []core.RecallWrite{recallWrite(x, "x")}, Insert: clipArchive("c2", "clip_0")}))
	cases := []struct {
		name string
		c    *core.Commit
		want string
	}{
		{"remove ids", &core.Commit{ConversationID: "c1", OperationID: "op1", HistoryOwner: core.OwnerCaller,
			RemoveMessageIDs: []string{"c2-m1"}, Insert: clipArchive("c1", "clip_1")}, "remove_message_ids: must be empty"},
		{"no id", &core.Commit{ConversationID: "c1", OperationID: "op1", HistoryOwner: core.OwnerCaller,
			RecallWrites: []core.RecallWrite{{Role: core.RoleUser, Raw: []byte(`{}`)}}, Insert: clipArchive("c1", "clip_1")}, "recall_writes[0].id: is empty"},
		{"raw that is not JSON", &core.Commit{ConversationID: "c1", OperationID: "op1", HistoryOwner: core.OwnerCaller,
			RecallWrites: []core.RecallWrite{{ID: "d_y", Role: core.RoleUser, Raw: []byte(`{"a":`)}}, Insert: clipArchive("c1", "clip_1")}, "not valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(t, s)
			err := s.Commit(ctx, tc.c)
			require.Error(t, err)
			assert.False(t, errors.Is(err, core.ErrConflict), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, dump(t, s))
		})
	}
}

func testListBlocksLiteralPrefix(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	p := core.BatchLabelPrefix
	ts := "2026-02-28T10:00:00.000Z"
	// Written out of label order: listing must follow creation order.
	writeBlocks(t, s, "c1", p("c1")+"2026-03-01T00:00:00.000Z", p("c1-x")+ts, p("c1")+ts)
	writeBlocks(t, s, "c%", p("c%")+ts)
	writeBlocks(t, s, "cX", p("cX")+ts, p("c_")+ts, p("c_1")+ts, p("cA1")+ts, p("c1x")+ts)

	cases := []struct {
		prefix string
		want   []string
	}{
		{p("c1"), []string{p("c1") + "2026-03-01T00:00:00.000Z", p("c1-x") + ts, p("c1") + ts}},
		{p("c1-x"), []string{p("c1-x") + ts}},
		{p("c%"), []string{p("c%") + ts}},
		{p("c_"), []string{p("c_") + ts}},
		{p("c_1"), []string{p("c_1") + ts}},
		{"compaction-batch-c_", []string{p("c_") + ts, p("c_1") + ts}},
		{"compaction-batch-%", nil},
		{"compaction-batch-c1x", []string{p("c1x") + ts}},
		{p("nobody"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.prefix, func(t *testing.T) {
			got, err := s.ListBlocks(ctx, "archival", tc.prefix)
			require.NoError(t, err)
			assert.Equal(t, tc.want, nilIfEmpty(blockLabels(got)))
		})
	}
	got, err := s.ListBlocks(ctx, "core", p("c1"))
	require.NoError(t, err)
	assert.Empty(t, got, "another tier lists nothing")
	got, err = s.ListBlocks(ctx, "archival", "")
	require.NoError(t, err)
	assert.Len(t, got, 9, "the empty prefix lists every block of the tier")
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func testRecallExactRaw(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	raws := []string{
		`{"id":"r1","conversation_id":"c1","role":"user","content":"héllo <b>&amp;</b> \u00e9 😀","created_at":"2026-02-28T10:00:00Z"}`,
		"{\n  \"id\": \"r2\",\n  \"role\": \"assistant\",\n  \"content\": [{\"type\":\"text\",\"text\":\"parts\"}],\n  \"tool_calls\": [{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}],\n  \"unknown\": 1.50\n}",
		`{"id":"r3","role":"tool","tool_call_id":"call_1","content":"result","pinned":false,"meta":null}`,
	}
	msgs := []store.Message{
		{ID: "r1", Role: "user", Content: "héllo <b>&amp;</b> é 😀", CreatedAt: base, Raw: json.RawMessage(raws[0])},
		{ID: "r2", Role: "assistant", Content: "parts", Raw: json.RawMessage(raws[1])},
		{ID: "r3", Role: "tool", Content: "result", Raw: json.RawMessage(raws[2])},
	}
	require.NoError(t, s.AppendMessages(ctx, "c1", msgs))
	_, err := s.Recall(ctx, "c1", "r1")
	require.ErrorIs(t, err, store.ErrNotFound, "an active message is not in recall")

	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"r1", "r2", "r3"}, Insert: clipArchive("c1", "ca1")}))
	for i, m := range msgs {
		got, err := s.Recall(ctx, m.ConversationID, m.ID)
		require.NoError(t, err)
		assert.Equal(t, []byte(raws[i]), []byte(got.Raw), "raw bytes of %s", m.ID)
		assert.Equal(t, m.Role, got.Role)
		assert.Equal(t, m.Content, got.Content)
		assert.Equal(t, "c1", got.ConversationID)
	}
	got, err := s.Recall(ctx, "c1", "r1")
	require.NoError(t, err)
	assert.True(t, base.Equal(got.CreatedAt))

	_, err = s.Recall(ctx, "c1", "missing")
	require.Error(t, err)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.Contains(t, err.Error(), "missing")
}

func testSearchRanking(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 6)
	require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{
		msg("c1", "c1-x1", "user", "please tune the xylophone before the concert", 10),
		msg("c1", "c1-x2", "assistant", "the database migration is done", 11),
	}))
	seed(t, s, "c2", 1)
	filler := strings.Repeat("the weather was pleasant and people talked about lunch plans and weekend trips ", 20)
	target := core.BatchLabelPrefix("c1") + "2026-02-28T10:05:00.000Z"
	start := base.Add(2 * time.Minute)
	end := base.Add(5 * time.Minute)
	targetContent := core.FormatBatchBlock("c1", &core.Batch{
		Content: "Kubernetes deployment failed: the kubernetes pods crashed; we decided to roll back the kubernetes cluster.",
		Start:   start, End: end, MessageCount: 2, SourceMessageIDs: []string{"c1-m1", "c1-m2"}, OperationID: "op1", Method: core.MethodLLM,
	})
	require.NoError(t, s.Commit(ctx, &core.Commit{
		ConversationID: "c1", OperationID: "op1",
		ArchiveWrites: []core.ArchiveWrite{
			{Label: core.BatchLabelPrefix("c1") + "2026-02-28T10:01:00.000Z", Content: batchContent("c1", "op1", "lunch menu and coffee preferences", "c1-m3"), Tier: "archival"},
			{Label: core.BatchLabelPrefix("c1") + "2026-02-28T10:02:00.000Z", Content: batchContent("c1", "op1", filler+" someone once mentioned kubernetes "+filler, "c1-m4"), Tier: "archival"},
			{Label: target, Content: targetContent, Tier: "archival"},
		},
		RemoveMessageIDs: []string{"c1-m1", "c1-m2", "c1-m3", "c1-m4", "c1-x1"},
		Insert:           clipArchive("c1", "ca1"),
	}))
	writeBlocks(t, s, "c2", core.BatchLabelPrefix("c2")+"2026-02-28T10:00:00.000Z") // "summary of …", no kubernetes

	hits, err := s.Search(ctx, "kubernetes", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 2, "both blocks mentioning kubernetes, nothing else: %+v", hits)
	top := hits[0]
	assert.Equal(t, store.HitBatch, top.Kind)
	assert.Equal(t, target, top.Label)
	assert.Equal(t, "c1", top.ConversationID)
	assert.Equal(t, "op1", top.OperationID)
	assert.NotEmpty(t, top.ID)
	assert.Greater(t, top.Score, hits[1].Score)
	assert.Contains(t, strings.ToLower(top.Snippet), "kubernetes")
	require.NotNil(t, top.Batch, "batch metadata is parsed")
	assert.True(t, start.Equal(top.Batch.Start))
	assert.True(t, end.Equal(top.Batch.End))
	assert.Equal(t, []string{"c1-m1", "c1-m2"}, top.Batch.SourceMessageIDs)
	assert.Contains(t, top.Batch.Content, "roll back")
	assert.True(t, start.Equal(top.Start) && end.Equal(top.End), "a batch's time range is its metadata's: %v–%v", top.Start, top.End)
	assert.Equal(t, top.Batch.Content, top.Text, "a batch hit's text is its summary, without the metadata line")
	assert.Equal(t, 0, top.Batch.Depth)
	assert.Equal(t, core.MethodLLM, top.Batch.Method)

	// Recalled messages are found, and so are active ones, in context.
	hits, err = s.Search(ctx, "xylophone", store.SearchOptions{ConversationID: "c1"})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, store.HitMessage, hits[0].Kind)
	assert.Equal(t, "c1-x1", hits[0].ID)
	assert.Equal(t, "user", hits[0].Role)
	assert.Equal(t, "c1", hits[0].ConversationID)
	assert.Equal(t, "op1", hits[0].OperationID)
	assert.Nil(t, hits[0].Batch)
	assert.True(t, base.Add(10*time.Minute).Equal(hits[0].CreatedAt))
	assert.True(t, hits[0].Start.Equal(hits[0].CreatedAt) && hits[0].End.Equal(hits[0].CreatedAt))
	assert.Equal(t, "please tune the xylophone before the concert", hits[0].Text)
	assert.Contains(t, hits[0].Snippet, "[xylophone]")
	assert.Greater(t, hits[0].Score, 0.0, "higher is better, and a hit scores above zero")
	assert.False(t, hits[0].InContext, "a recalled message is not in context")
	hits, err = s.Search(ctx, "migration", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 1, "an active message is found")
	assert.Equal(t, "c1-x2", hits[0].ID)
	assert.True(t, hits[0].InContext, "an active message is in context")
	assert.Equal(t, store.HitMessage, hits[0].Kind)
	assert.Equal(t, "assistant", hits[0].Role)
	assert.Equal(t, "c1", hits[0].ConversationID)
	assert.Empty(t, hits[0].OperationID, "no compaction removed it")
	assert.Equal(t, "the database migration is done", hits[0].Text)
	assert.Contains(t, hits[0].Snippet, "[migration]")
	assert.True(t, base.Add(11*time.Minute).Equal(hits[0].CreatedAt))

	// Conversation filter and limit.
	hits, err = s.Search(ctx, "summary", store.SearchOptions{ConversationID: "c2"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	for _, h := range hits {
		assert.Equal(t, "c2", h.ConversationID)
	}
	hits, err = s.Search(ctx, "kubernetes", store.SearchOptions{ConversationID: "c2"})
	require.NoError(t, err)
	assert.Empty(t, hits)
	hits, err = s.Search(ctx, "message number", store.SearchOptions{Limit: 2})
	require.NoError(t, err)
	assert.Len(t, hits, 2, "three recalled messages match, the limit is 2")
	for _, h := range hits {
		assert.Equal(t, store.HitMessage, h.Kind)
	}
	// Any word matches: the question need not be in one turn.
	hits, err = s.Search(ctx, "kubernetes xylophone", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 3, "the message saying xylophone and both batches saying kubernetes")
	assert.Contains(t, hitIDs(hits), "c1-x1")
}

func hitIDs(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// HostileQueries are query texts that break naive FTS5 and tsquery
// builders: search syntax, quotes, NUL, invalid UTF-8, only stop words,
// 10,000 characters. Every store must answer each without error.
var HostileQueries = []string{
	``, ` `, `?`, `"`, `""`, `"""`, `"deploy`, `deploy"`, `'`, `''`, `deploy's`, `-`, `--`, `-deploy`, `deploy -script`,
	`*`, `deploy*`, `*deploy`, `:`, `step:3`, `label:deploy`, `body:error`, `^deploy`, `+deploy`, `(`, `)`, `()`,
	`(deploy`, `deploy)`, `NOT`, `AND`, `OR`, `NEAR`, `deploy AND`, `OR deploy`, `NOT deploy`, `NEAR(deploy script)`,
	`deploy NEAR/2 script`, `{body}: deploy`, `'; DROP TABLE messages; --`, `%`, `_`, `%_%`, `\`, `\"`, `{`, `}`,
	`[`, `]`, `<->`, `<2>`, `!`, `&`, `|`, `!deploy & (script | error)`, `deploy:*`, `'deploy':*A`, `deploy:A`, `😀`,
	"tab\tnewline\nnul\x00byte", "bad utf8 \xff\xfe deploy", "\xed\xa0\x80 surrogate", "\x00", `the`, `what is it`,
	`who what when where how did does`, `"the"`, `" "`, `"?!"`, `e.g.`, `a.b.c`, `1-2`, `“smart” ‘quotes’`,
	"\u0301\u0301", "ﬁle Ⅻ ²", `"unclosed phrase`, strings.Repeat("deploy ", 2000), strings.Repeat("(", 500),
	strings.Repeat(`"`, 501), strings.Repeat("a", 10000), strings.Repeat("what ", 2000), strings.Repeat("ab ", 3400),
	strings.Repeat("é", 300), strings.Repeat(`"x y" `, 100),
}

func testSearchHostileQueries(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 2)
	require.NoError(t, s.Commit(ctx, &core.Commit{
		ConversationID: "c1", OperationID: "op1",
		ArchiveWrites:    []core.ArchiveWrite{{Label: core.BatchLabelPrefix("c1") + "x", Content: batchContent("c1", "op1", "error: the deploy-script failed (exit 1) at step:3; what is it", "c1-m1"), Tier: "archival"}},
		RemoveMessageIDs: []string{"c1-m1"},
		Insert:           clipArchive("c1", "ca1"),
	}))
	for _, q := range HostileQueries {
		for _, conv := range []string{"", "c1"} {
			hits, err := s.Search(ctx, q, store.SearchOptions{ConversationID: conv})
			require.NoError(t, err, "query %.80q", q)
			for _, h := range hits {
				assert.NotEmpty(t, h.ID, "query %.80q", q)
			}
		}
	}
	for _, q := range []string{`"deploy script"`, `deploy-script`, `(deploy)`, `error:`, `-error`, `step:3`, `NOT deploy`,
		`what is it?`, `deploy's`, "bad utf8 \xff\xfe deploy"} {
		hits, err := s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err, "query %q", q)
		assert.NotEmpty(t, hits, "query %q is searched as plain words", q)
	}
}

// recallAs commits msgs away from the active history of conv into recall
// storage, with searchText as the commit's search_text (nil: none, as a
// host that ignores the field would have it).
func recallAs(t *testing.T, s store.Store, conv, op string, msgs []store.Message, searchText []core.SearchText, writes ...core.ArchiveWrite) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.AppendMessages(ctx, conv, msgs))
	c := &core.Commit{ConversationID: conv, OperationID: op, ArchiveWrites: writes, Insert: clipArchive(conv, "ca-"+op), SearchText: searchText}
	for _, m := range msgs {
		c.RemoveMessageIDs = append(c.RemoveMessageIDs, m.ID)
	}
	require.NoError(t, s.Commit(ctx, c))
}

func batchWrite(conv, op, summary string, start, end time.Time, sources ...string) core.ArchiveWrite {
	b := &core.Batch{Content: summary, Start: start, End: end, MessageCount: len(sources), SourceMessageIDs: sources,
		OperationID: op, Method: core.MethodExtractive}
	return core.ArchiveWrite{Label: core.BatchLabel(conv, b), Content: core.FormatBatchBlock(conv, b), Tier: "archival", Reason: "test"}
}

// testSearchQuestionFindsAnswer: a question as a user asks it, whose
// words are spread over many turns and never all in one, finds the turn
// (and the batch) that answers it first.
func testSearchQuestionFindsAnswer(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	turns := []string{
		"Morning! Did everyone see the incident report from last night?",
		"Yes. The checkout service was down for twenty minutes.",
		"We should decide when to upgrade Postgres; the current version is out of support.",
		"Alice, what do you think about the schedule for the database work?",
		"I would rather not touch the database during the sales week.",
		"Agreed, the sales week is off limits for any migration.",
		"Alice: let's move the Postgres upgrade to Saturday 14 March, after the sales week.",
		"Sounds good. I'll book the maintenance window.",
		"Did anyone decide what to do about the flaky checkout tests?",
		"Bob will quarantine them this afternoon.",
	}
	var msgs []store.Message
	for i, c := range turns {
		msgs = append(msgs, msg("c1", fmt.Sprintf("q%d", i+1), []string{"user", "assistant"}[i%2], c, i))
	}
	start, end := base.Add(20*time.Minute), base.Add(25*time.Minute)
	recallAs(t, s, "c1", "op1", msgs, nil,
		batchWrite("c1", "op1", "The team discussed the checkout outage. Alice scheduled the Postgres upgrade for Saturday 14 March, after the sales week; Bob quarantines the flaky tests.", start, end, "q1", "q7", "q10"))

	question := "When did Alice say we will upgrade Postgres?"
	hits, err := s.Search(ctx, question, store.SearchOptions{Limit: 5})
	require.NoError(t, err)
	require.NotEmpty(t, hits, "no turn holds every word of %q, but any word matches", question)
	top2 := map[string]bool{}
	for _, h := range hits[:min(2, len(hits))] {
		top2[h.ID] = true
	}
	assert.True(t, top2["q7"], "the answering turn is among the first two hits: %v", hitIDs(hits))
	var batch *store.Hit
	for i := range hits {
		if hits[i].Kind == store.HitBatch {
			batch = &hits[i]
		}
	}
	require.NotNil(t, batch, "the batch summarizing the answer is in the top 5: %v", hitIDs(hits))
	assert.Equal(t, []string{"q1", "q7", "q10"}, batch.Batch.SourceMessageIDs)
	assert.True(t, start.Equal(batch.Start) && end.Equal(batch.End))
	assert.Equal(t, core.MethodExtractive, batch.Batch.Method)
	assert.Contains(t, batch.Text, "Saturday 14 March")

	// Questions made only of stop words still search for those words.
	hits, err = s.Search(ctx, "what did you think?", store.SearchOptions{})
	require.NoError(t, err)
	assert.Contains(t, hitIDs(hits), "q4")
}

// testSearchSkipsSupersededClipArchives: every compaction after the
// first moves the clip-archive it replaces into recall; it stays there
// (provenance) but is never a hit, whether the commit said so with an
// empty search_text or said nothing.
func testSearchSkipsSupersededClipArchives(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 6)
	archive := func(id string) core.InsertMessage {
		ca := clipArchive("c1", id)
		ca.Content = "[Context Summary — 2 messages compressed across 1 compaction cycle(s)]\n\n[Batch 1 — depth 0]\nThe zeppelin migration was planned."
		return ca
	}
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"c1-m1"},
		Insert: archive("ca1"), ArchiveWrites: []core.ArchiveWrite{batchWrite("c1", "op1", "The zeppelin migration was planned.", base, base, "c1-m1")}}))
	// The plug-in's commit: search_text "" for the superseded clip-archive.
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op2", RemoveMessageIDs: []string{"ca1", "c1-m2"},
		Insert:     archive("ca2"),
		SearchText: []core.SearchText{{MessageID: "ca1"}, {MessageID: "c1-m2", Text: "message number 2 of c1"}}}))
	// A host's commit without search_text.
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op3", RemoveMessageIDs: []string{"ca2", "c1-m3"},
		Insert: archive("ca3")}))
	for _, id := range []string{"ca1", "ca2"} {
		r, err := s.Recall(ctx, "c1", id)
		require.NoError(t, err, "a superseded clip-archive stays in recall storage")
		assert.Contains(t, r.Content, "zeppelin")
	}
	for _, q := range []string{"zeppelin", "Context Summary", "compaction cycle", "zeppelin migration planned"} {
		hits, err := s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err)
		for _, h := range hits {
			assert.NotContains(t, []string{"ca1", "ca2", "ca3"}, h.ID, "query %q: a clip-archive is never a hit", q)
		}
	}
	hits, err := s.Search(ctx, "zeppelin", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 1, "only the batch: %v", hitIDs(hits))
	assert.Equal(t, store.HitBatch, hits[0].Kind)
	// A system message that is not a clip-archive is searchable.
	recallAs(t, s, "c2", "op4", []store.Message{msg("c2", "sys1", "system", "You are a zeppelin pilot.", 0)}, nil)
	hits, err = s.Search(ctx, "zeppelin pilot", store.SearchOptions{ConversationID: "c2"})
	require.NoError(t, err)
	assert.Equal(t, []string{"sys1"}, hitIDs(hits))
}

// filler pads a text to n words with words no query uses.
func filler(text string, n int) string {
	words := strings.Fields(text)
	pad := []string{"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "eiusmod"}
	for i := 0; len(words) < n; i++ {
		words = append(words, pad[i%len(pad)])
	}
	return strings.Join(words, " ")
}

// testSearchInterleavesKinds: messages and batches are ranked on one
// scale: with equal lengths, the more often a document says the word the
// higher it ranks, whatever its kind.
func testSearchInterleavesKinds(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	rep := func(k int) string { return filler(strings.Repeat("quokka ", k), 40) }
	recallAs(t, s, "c1", "op1",
		[]store.Message{msg("c1", "m4", "user", rep(4), 0), msg("c1", "m2", "user", rep(2), 1)}, nil,
		batchWrite("c1", "op1", rep(3), base, base.Add(time.Minute), "m4"),
		batchWrite("c1", "op1", rep(1), base.Add(time.Minute), base.Add(2*time.Minute), "m2"))
	// Unrelated documents, so the word is rare in the corpus.
	var others []store.Message
	for i := 0; i < 8; i++ {
		others = append(others, msg("c1", fmt.Sprintf("o%d", i), "user", filler("nothing here", 40), 10+i))
	}
	recallAs(t, s, "c1", "op2", others, nil)
	hits, err := s.Search(ctx, "quokka", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 4)
	kinds := make([]store.HitKind, len(hits))
	for i, h := range hits {
		kinds[i] = h.Kind
		if i > 0 {
			assert.Greater(t, hits[i-1].Score, h.Score, "strictly decreasing scores")
		}
	}
	assert.Equal(t, []store.HitKind{store.HitMessage, store.HitBatch, store.HitMessage, store.HitBatch}, kinds)
	assert.Equal(t, "m4", hits[0].ID)
	assert.Equal(t, "m2", hits[2].ID)
	assert.Equal(t, strings.Count(hits[1].Text, "quokka"), 3)
}

// testSearchToolText: tool names, tool inputs and tool outputs are
// searchable, through the commit's search_text.
func testSearchToolText(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	call := msg("c1", "call1", "assistant", "", 0)
	call.Raw = json.RawMessage(`{"id":"call1","role":"assistant","content":"","tool_calls":[{"id":"t1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Reykjavik\"}"}}]}`)
	result := msg("c1", "res1", "tool", "3 degrees, gale-force winds", 1)
	other := msg("c1", "u1", "user", "thanks", 2)
	recallAs(t, s, "c1", "op1", []store.Message{call, result, other}, []core.SearchText{
		{MessageID: "call1", Text: `get_weather {"city":"Reykjavik"}`},
		{MessageID: "res1", Text: "3 degrees, gale-force winds"},
		{MessageID: "u1", Text: "thanks"},
	})
	for q, want := range map[string]string{"get_weather": "call1", "Reykjavik": "call1", "city": "call1", "gale winds": "res1"} {
		hits, err := s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, hits, "query %q", q)
		assert.Equal(t, want, hits[0].ID, "query %q", q)
	}
	hits, err := s.Search(ctx, "Reykjavik", store.SearchOptions{})
	require.NoError(t, err)
	assert.Equal(t, `get_weather {"city":"Reykjavik"}`, hits[0].Text, "a message hit's text is what was indexed")
	r, err := s.Recall(ctx, "c1", "call1")
	require.NoError(t, err)
	assert.Equal(t, string(call.Raw), string(r.Raw), "the message itself is unchanged")
	assert.Equal(t, "", r.Content)
}

// testSearchTiesToMoreRecent: equal scores go to the more recent hit — a
// message by its created_at, a batch by its end.
func testSearchTiesToMoreRecent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	text := "the narwhal plan"
	// The same words in another order score alike but are not the same
	// text (a repeated text is folded, see testSearchFoldsRepeats); two
	// messages apart, so neither is the other's neighbour.
	recallAs(t, s, "c1", "op1", []store.Message{msg("c1", "old", "user", text, 0), msg("c1", "mid", "assistant", "unrelated words", 15),
		msg("c1", "new", "user", "the plan narwhal", 30)}, nil,
		batchWrite("c1", "op1", text, base, base.Add(10*time.Minute), "old"),
		batchWrite("c1", "op1", text, base.Add(40*time.Minute), base.Add(50*time.Minute), "new"))
	hits, err := s.Search(ctx, "narwhal", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 4)
	for _, h := range hits[1:] {
		require.InDelta(t, hits[0].Score, h.Score, 1e-9, "identical texts score alike")
	}
	want := []time.Time{base.Add(50 * time.Minute), base.Add(30 * time.Minute), base.Add(10 * time.Minute), base}
	for i, h := range hits {
		assert.True(t, want[i].Equal(h.End), "hit %d (%s %s) ends %v, want %v", i, h.Kind, h.ID, h.End, want[i])
	}
}

// testSearchFoldsRepeats: five hits are five places, not one place five
// times. A message whose own words repeat a better hit's of the same
// conversation is folded into it (the more recent of equals stays), and
// so is a message found only through its context (the words of its
// exchange, after core.SearchContextSep) right next to a better hit; a
// neighbour that matches by its own words stays, and so does a
// context-only hit with no better neighbour. Own words outrank the same
// words as context.
func testSearchFoldsRepeats(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	sep := core.SearchContextSep
	msgs := []store.Message{
		msg("c1", "q1", "user", "Did last night's backup work?", 0),
		msg("c1", "a1", "assistant", "Yes, it ran cleanly.", 1),
		msg("c1", "q2", "user", "Did last night's backup work?", 2),
		msg("c1", "a2", "assistant", "Yes, it ran cleanly.", 3),
		msg("c1", "x1", "user", "Any news?", 4),
		msg("c1", "x2", "user", "We adopted a cat called Pickle.", 5),
		msg("c1", "x3", "assistant", "A cat! Photos please.", 6),
		msg("c1", "y1", "user", "Unrelated small talk.", 10),
		msg("c1", "y2", "assistant", "More small talk.", 11),
	}
	st := []core.SearchText{
		{MessageID: "q1", Text: "Did last night's backup work?" + sep + "Yes, it ran cleanly."},
		{MessageID: "a1", Text: "Yes, it ran cleanly." + sep + "Did last night's backup work?"},
		{MessageID: "q2", Text: "Did last night's backup work?" + sep + "Yes, it ran cleanly."},
		{MessageID: "a2", Text: "Yes, it ran cleanly." + sep + "Did last night's backup work?"},
		{MessageID: "x1", Text: "Any news?" + sep + "We adopted a cat called Pickle."},
		{MessageID: "x2", Text: "We adopted a cat called Pickle." + sep + "A cat! Photos please."},
		{MessageID: "x3", Text: "A cat! Photos please." + sep + "We adopted a cat called Pickle."},
		{MessageID: "y1", Text: "Unrelated small talk." + sep + "More small talk."},
		{MessageID: "y2", Text: "More small talk." + sep + "the nightly backup is fine"},
	}
	recallAs(t, s, "c1", "op1", msgs, st)

	hits, err := s.Search(ctx, "backup", store.SearchOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"q2", "y2"}, hitIDs(hits),
		"q1 repeats q2's words; a1, a2 are found through their context next to a better hit; y2 has no better neighbour")
	assert.Greater(t, hits[0].Score, hits[1].Score, "own words outrank context")

	hits, err = s.Search(ctx, "cat pickle", store.SearchOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"x2", "x3"}, hitIDs(hits), "x3 says cat itself and stays; x1 is only x2's context")
}

// testReadByID: any recalled message or archived block is read in full
// by its id.
func testReadByID(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	m := msg("c1", "m1", "user", "the full original text", 0)
	w := batchWrite("c1", "op1", "the full summary", base, base.Add(time.Hour), "m1")
	recallAs(t, s, "c1", "op1", []store.Message{m}, nil, w)
	hits, err := s.Search(ctx, "full", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	for _, h := range hits {
		r, err := store.Read(ctx, s, h.ConversationID, h.ID)
		require.NoError(t, err)
		assert.Equal(t, h.Kind, r.Kind)
		switch h.Kind {
		case store.HitMessage:
			require.NotNil(t, r.Message)
			assert.Equal(t, string(m.Raw), string(r.Message.Raw))
		case store.HitBatch:
			require.NotNil(t, r.Block)
			b := r.Block
			assert.Equal(t, h.ID, b.ID)
			assert.Equal(t, w.Content, b.Content, "the block exactly as written, metadata line included")
			assert.Equal(t, w.Label, b.Label)
			assert.Equal(t, "archival", b.Tier)
			assert.Equal(t, "c1", b.ConversationID)
			assert.Equal(t, "op1", b.OperationID)
			assert.Equal(t, "test", b.Reason)
			assert.False(t, b.CreatedAt.IsZero())
			require.NotNil(t, b.Batch)
			assert.Equal(t, "the full summary", b.Batch.Content)
			assert.Equal(t, []string{"m1"}, b.Batch.SourceMessageIDs)
		}
	}
	for _, id := range []string{"nope", "", "blk_000000000000000000000000"} {
		_, err = store.Read(ctx, s, "", id)
		assert.ErrorIs(t, err, store.ErrNotFound, "id %q", id)
		_, err = s.Block(ctx, id)
		assert.ErrorIs(t, err, store.ErrNotFound, "id %q", id)
	}
	// A block that is not a batch reads back without metadata.
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c2", OperationID: "op2", Insert: clipArchive("c2", "ca2"),
		ArchiveWrites: []core.ArchiveWrite{{Label: "notes", Content: "plain note", Tier: "archival"}}}))
	hits, err = s.Search(ctx, "plain note", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Nil(t, hits[0].Batch)
	assert.Equal(t, "plain note", hits[0].Text)
	b, err := s.Block(ctx, hits[0].ID)
	require.NoError(t, err)
	assert.Nil(t, b.Batch)
	assert.Equal(t, "plain note", b.Content)
}

func testConcurrentCommits(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	orig := seed(t, s, "c1", 10)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	startGun := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-startGun
			op := fmt.Sprintf("op%d", i)
			errs[i] = s.Commit(ctx, &core.Commit{
				ConversationID: "c1",
				OperationID:    op,
				ArchiveWrites: []core.ArchiveWrite{{
					Label: core.BatchLabelPrefix("c1") + fmt.Sprintf("2026-02-28T10:0%d:00.000Z", i), Tier: "archival",
					Content: batchContent("c1", op, "summary by "+op, "c1-m1", "c1-m2", "c1-m3", "c1-m4", "c1-m5"),
				}},
				RemoveMessageIDs: []string{"c1-m1", "c1-m2", "c1-m3", "c1-m4", "c1-m5"},
				Insert:           clipArchive("c1", fmt.Sprintf("ca%d", i)),
			})
		}(i)
	}
	close(startGun)
	wg.Wait()

	winner := -1
	conflicts := 0
	for i, err := range errs {
		switch {
		case err == nil:
			require.Equal(t, -1, winner, "two commits won: %d and %d", winner, i)
			winner = i
		case errors.Is(err, core.ErrConflict):
			conflicts++
		default:
			t.Errorf("commit %d: want success or ErrConflict, got %v", i, err)
		}
	}
	require.NotEqual(t, -1, winner, "no commit won: %v", errs)
	assert.Equal(t, n-1, conflicts)

	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprintf("ca%d", winner), "c1-m6", "c1-m7", "c1-m8", "c1-m9", "c1-m10"}, ids(active))
	activeIDs := map[string]bool{}
	for _, m := range active {
		activeIDs[m.ID] = true
	}
	for _, m := range orig {
		if activeIDs[m.ID] {
			continue
		}
		r, err := s.Recall(ctx, m.ConversationID, m.ID)
		require.NoError(t, err, "message %s is neither active nor in recall", m.ID)
		assert.Equal(t, string(m.Raw), string(r.Raw))
	}
	blocks, err := s.ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	require.Len(t, blocks, 1, "only the winner's batch is archived")
	assert.Contains(t, blocks[0].Content, fmt.Sprintf("summary by op%d", winner))
}

func testMigrateIsIdempotent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	seed(t, s, "c1", 2)
	m, ok := s.(store.Migrator)
	require.True(t, ok, "%T must implement store.Migrator for the conformance suite", s)
	before := dump(t, s)
	for i := 0; i < 2; i++ {
		n, err := m.Migrate(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "an up-to-date schema applies nothing")
	}
	assert.Equal(t, before, dump(t, s))
}
