package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// numbered is conv's messages msg_0..msg_<n-1>: the ids every
// conversation of a caller numbering its own messages has.
func numbered(conv string, n int) []store.Message {
	out := make([]store.Message, n)
	for i := range out {
		out[i] = msg(conv, fmt.Sprintf("msg_%d", i), "user", fmt.Sprintf("turn %d of %s about %s", i, conv, topic[conv]), i)
	}
	return out
}

// topic gives each conversation of the same-id tests words of its own.
var topic = map[string]string{"c1": "walrus husbandry", "c2": "glacier drilling", "c3": "lighthouse keeping", "c4": "beekeeping"}

// testSameIDsInTwoConversations: message ids are unique within a
// conversation only. Two conversations numbering their messages alike
// are stored, compacted, recalled and searched apart; an id repeated
// within one conversation is still refused.
func testSameIDsInTwoConversations(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	one, two := numbered("c1", 5), numbered("c2", 5)
	require.NoError(t, s.AppendMessages(ctx, "c1", one))
	require.NoError(t, s.AppendMessages(ctx, "c2", two), "another conversation's ids are not this one's")

	before := dump(t, s)
	err := s.AppendMessages(ctx, "c2", []store.Message{msg("c2", "msg_9", "user", "new", 9), msg("c2", "msg_3", "user", "again", 9)})
	var dup *store.DuplicateIDError
	require.ErrorAs(t, err, &dup, "an id the conversation holds is refused")
	assert.Equal(t, []string{"msg_3"}, dup.IDs)
	assert.Contains(t, err.Error(), `"c2"`)
	assert.Equal(t, before, dump(t, s), "a refused append changes nothing")

	// Both compact their first three, each under the same clip-archive id.
	for _, conv := range []string{"c1", "c2"} {
		require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: conv, OperationID: "op-" + conv,
			RemoveMessageIDs: []string{"msg_0", "msg_1", "msg_2"}, Insert: clipArchive(conv, "clip_1"),
			ArchiveWrites: []core.ArchiveWrite{batchWrite(conv, "op-"+conv, "batch of "+topic[conv], base, at(2), "msg_0", "msg_1", "msg_2")}}),
			"commit of %s", conv)
	}
	for conv, orig := range map[string][]store.Message{"c1": one, "c2": two} {
		active, err := s.ActiveMessages(ctx, conv)
		require.NoError(t, err)
		assert.Equal(t, []string{"clip_1", "msg_3", "msg_4"}, ids(active), conv)
		assert.Equal(t, string(orig[4].Raw), string(active[2].Raw), "%s keeps its own msg_4", conv)
		for _, m := range orig[:3] {
			r, err := s.Recall(ctx, conv, m.ID)
			require.NoError(t, err, "%s %s", conv, m.ID)
			assert.Equal(t, string(m.Raw), string(r.Raw), "%s's own %s", conv, m.ID)
			assert.Equal(t, conv, r.ConversationID)
		}
	}
	// A repeated id of the conversation is refused at a commit too.
	before = dump(t, s)
	err = s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op-again", RemoveMessageIDs: []string{"msg_3"},
		Insert: clipArchive("c1", "msg_0")})
	require.ErrorAs(t, err, &dup, "the clip-archive's id is the conversation's already (in recall)")
	assert.False(t, errors.Is(err, core.ErrConflict))
	assert.Equal(t, before, dump(t, s))

	// Read without a conversation: ambiguous when several hold the id.
	_, err = s.Recall(ctx, "", "msg_0")
	var amb *store.AmbiguousIDError
	require.ErrorAs(t, err, &amb)
	assert.Equal(t, []string{"c1", "c2"}, amb.ConversationIDs)
	assert.False(t, errors.Is(err, store.ErrNotFound))
	assert.Contains(t, err.Error(), `"c1"`)
	assert.Contains(t, err.Error(), `"c2"`)
	_, err = store.Read(ctx, s, "", "msg_1")
	require.ErrorAs(t, err, &amb, "Read answers the same")
	_, err = s.Recall(ctx, "c3", "msg_0")
	assert.ErrorIs(t, err, store.ErrNotFound, "a conversation that does not hold it")
	r, err := store.Read(ctx, s, "c2", "msg_1")
	require.NoError(t, err)
	require.Equal(t, store.HitMessage, r.Kind)
	assert.Equal(t, string(two[1].Raw), string(r.Message.Raw))
	// An id only one conversation holds needs no conversation.
	recallAs(t, s, "c2", "op-solo", []store.Message{msg("c2", "solo", "user", "only in c2", 20)}, nil)
	m, err := s.Recall(ctx, "", "solo")
	require.NoError(t, err)
	assert.Equal(t, "c2", m.ConversationID)

	for conv, other := range map[string]string{"c1": "c2", "c2": "c1"} {
		hits, err := s.Search(ctx, topic[conv], store.SearchOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, hits, conv)
		for _, h := range hits {
			assert.Equal(t, conv, h.ConversationID, "%s's words find %s's messages and batch only", conv, conv)
			assert.NotContains(t, h.Text, topic[other])
		}
		inContext := 0
		for _, h := range hits {
			if h.InContext {
				inContext++
			}
		}
		assert.Len(t, hits, 6, "%s: its three recalled messages, its batch and its two active messages", conv)
		assert.Equal(t, 2, inContext, "%s: the two active messages are in context", conv)
	}
}

// testSameIDsCallerOwned: caller-owned commits of two conversations write
// the same ids to recall storage each for its own conversation; sending
// the list again writes nothing new.
func testSameIDsCallerOwned(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	for round := 0; round < 2; round++ {
		for _, conv := range []string{"c3", "c4"} {
			ms := numbered(conv, 3)
			c := &core.Commit{ConversationID: conv, OperationID: fmt.Sprintf("op-%s-%d", conv, round), HistoryOwner: core.OwnerCaller,
				Insert: clipArchive(conv, "clip_1")}
			for _, m := range ms {
				c.RecallWrites = append(c.RecallWrites, recallWrite(m, m.Content))
			}
			require.NoError(t, s.Commit(ctx, c), "%s, round %d", conv, round)
		}
	}
	for _, conv := range []string{"c3", "c4"} {
		for _, m := range numbered(conv, 3) {
			r, err := s.Recall(ctx, conv, m.ID)
			require.NoError(t, err)
			assert.Equal(t, string(m.Raw), string(r.Raw))
		}
		hits, err := s.Search(ctx, topic[conv], store.SearchOptions{Limit: 50})
		require.NoError(t, err)
		assert.Len(t, hits, 3, "%s: each message once, however often the list came", conv)
		for _, h := range hits {
			assert.Equal(t, conv, h.ConversationID)
		}
	}
}

// testSameIDsVectors: a message's vector is its conversation's: two
// conversations' messages of the same id each get, keep and are ranked by
// their own.
func testSameIDsVectors(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	vi := vectorIndex(t, s)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	answer := "The sedan is at the workshop for repairs."
	recallAs(t, s, "c1", "op1", []store.Message{
		msg("c1", "p1", "user", "We booked a table for the birthday party on the terrace.", 0),
		msg("c1", "p2", "assistant", answer, 1)}, nil)
	recallAs(t, s, "c2", "op2", []store.Message{
		msg("c2", "p1", "user", "The quarterly report is due next month.", 0),
		msg("c2", "p2", "assistant", "Remember the peanut allergy when ordering.", 1)}, nil)

	n, err := store.EmbedMissing(ctx, s, e, "")
	require.NoError(t, err)
	assert.Equal(t, 4, n, "four documents, four vectors")
	missing, err := vi.MissingVectors(ctx, "", e.Model(), 0, 100)
	require.NoError(t, err)
	assert.Empty(t, missing)

	hits, err := s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: e})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "c1", hits[0].ConversationID)
	assert.Equal(t, "p2", hits[0].ID)
	assert.Equal(t, answer, hits[0].Text)
	assert.Equal(t, 1, hits[0].VectorRank)
	for _, h := range hits[1:] {
		assert.NotEqual(t, answer, h.Text, "c1's answer once, not again under c2's id")
	}

	got, err := vi.HitsByRef(ctx, []store.DocRef{{Kind: store.HitMessage, ConversationID: "c2", ID: "p2"},
		{Kind: store.HitMessage, ConversationID: "c1", ID: "p2"}, {Kind: store.HitMessage, ConversationID: "c3", ID: "p2"}})
	require.NoError(t, err)
	texts := map[string]string{}
	for _, h := range got {
		texts[h.ConversationID] = h.Text
	}
	assert.Equal(t, map[string]string{"c1": answer, "c2": "Remember the peanut allergy when ordering."}, texts)

	// A vector for a conversation that does not hold the id is not stored.
	n, err = vi.PutVectors(ctx, e.Model(), []store.DocVector{{DocRef: store.DocRef{Kind: store.HitMessage, ConversationID: "c3", ID: "p1"},
		Vector: []float32{1, 0}}})
	require.NoError(t, err)
	assert.Zero(t, n)
}

// testSearchAfterNUL: a NUL character is text like any other: the words
// after it, in a message's own text, in its context and in a batch
// summary, are found; the message reads back exactly.
func testSearchAfterNUL(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	own := msg("c1", "n1", "user", "before\x00 after quokka", 0)
	plain := msg("c1", "n2", "user", "plain\x00 wombat text", 1)
	recallAs(t, s, "c1", "op1", []store.Message{own, plain}, []core.SearchText{
		{MessageID: "n1", Text: "before\x00 after quokka" + core.SearchContextSep + "asked\x00 about narwhal"}},
		batchWrite("c1", "op1", "the batch\x00 then platypus", base, at(1), "n1", "n2"))
	for q, want := range map[string]string{"quokka": "n1", "narwhal": "n1", "wombat": "n2", "platypus": "batch"} {
		hits, err := s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, hits, "%q is after a NUL and must be found", q)
		if want == "batch" {
			assert.Equal(t, store.HitBatch, hits[0].Kind, q)
			continue
		}
		assert.Equal(t, want, hits[0].ID, q)
	}
	r, err := s.Recall(ctx, "c1", "n1")
	require.NoError(t, err)
	assert.Equal(t, string(own.Raw), string(r.Raw), "the raw JSON is exact")
	// The active history holds a NUL too.
	require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{msg("c1", "n3", "user", "still\x00 active", 5)}))
	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	require.Len(t, active, 2)
	assert.Equal(t, string(msg("c1", "n3", "user", "still\x00 active", 5).Raw), string(active[1].Raw))
}

// ReuseIDsAfterUpgrade checks a store upgraded from a database whose
// conversation "c1" holds msg_0 in recall and two active messages:
// another conversation numbering its messages alike is stored, compacted
// and searched on its own, and reading msg_0 without a conversation
// names both. The SQLite and PostgreSQL upgrade tests run it.
func ReuseIDsAfterUpgrade(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.AppendMessages(ctx, "c2", []store.Message{{ID: "msg_0", Role: "user", Content: "a glacier question"},
		{ID: "msg_2", Role: "assistant", Content: "a glacier answer"}}))
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c2", OperationID: "op2", RemoveMessageIDs: []string{"msg_0"},
		Insert: core.InsertMessage{ID: "ca1", Content: "[Context Summary]"}}))
	hits, err := s.Search(ctx, "glacier", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 2, "the recalled question and the active answer")
	for _, h := range hits {
		assert.Equal(t, "c2", h.ConversationID)
		assert.Equal(t, h.ID == "msg_2", h.InContext, h.ID)
	}
	_, err = s.Recall(ctx, "", "msg_0")
	var amb *store.AmbiguousIDError
	require.ErrorAs(t, err, &amb)
	assert.Equal(t, []string{"c1", "c2"}, amb.ConversationIDs)
	r, err := s.Recall(ctx, "c1", "msg_0")
	require.NoError(t, err)
	assert.Equal(t, `{"id":"msg_0"}`, string(r.Raw), "c1's own, as it was")
	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Len(t, active, 2, "c1's active history untouched")
}
