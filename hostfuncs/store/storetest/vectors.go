package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// The store vectors (testdata/store, README.md there): one suite of
// appends, commits and reads with the state and answers every store must
// give — the Go SQLite and PostgreSQL stores here, the Python and Node
// stores from their own runners.

// StateFunc reads what s holds as the vectors compare it: one JSON object
// {"messages":[…],"recall":[…],"blocks":[…]} (testdata/store/state.sql
// for SQLite; PostgreSQL has its own query).
type StateFunc func(ctx context.Context, s store.Store) ([]byte, error)

// VectorDir is testdata/store of this repository.
func VectorDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "store")
}

// StateSQL is testdata/store/state.sql, the SQLite stores' state query.
func StateSQL(t testing.TB) string {
	b, err := os.ReadFile(filepath.Join(VectorDir(), "state.sql"))
	require.NoError(t, err)
	return string(b)
}

type vectorFile struct {
	Description string       `json:"description"`
	Cases       []vectorCase `json:"cases"`
}

type vectorCase struct {
	Name  string          `json:"name"`
	Steps []vectorStep    `json:"steps"`
	State json.RawMessage `json:"state"`
}

type vectorStep struct {
	Append *struct {
		ConversationID string            `json:"conversation_id"`
		Messages       []json.RawMessage `json:"messages"`
		NewOnly        bool              `json:"new_only"`
	} `json:"append"`
	Commit    json.RawMessage `json:"commit"`
	Now       string          `json:"now"`
	ReadBlock *struct {
		Label string `json:"label"`
	} `json:"read_block"`
	Recall *struct {
		ConversationID string `json:"conversation_id"`
		ID             string `json:"id"`
	} `json:"recall"`
	Search *struct {
		Query          string `json:"query"`
		ConversationID string `json:"conversation_id"`
	} `json:"search"`
	Want struct {
		OK       bool             `json:"ok"`
		Appended []string         `json:"appended"`
		Error    *vectorError     `json:"error"`
		Block    map[string]any   `json:"block"`
		Message  json.RawMessage  `json:"message"`
		Hits     []map[string]any `json:"hits"`
	} `json:"want"`
}

type vectorError struct {
	Kind string   `json:"kind"` // conflict, duplicate, not_found or invalid
	Says []string `json:"says"` // what the message must say
}

// RunVectors runs every case of testdata/store against stores made by open
// (each case gets a fresh one), reading their state with state.
func RunVectors(t *testing.T, open Opener, state StateFunc) {
	files, err := filepath.Glob(filepath.Join(VectorDir(), "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no store vectors in %s", VectorDir())
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var vf vectorFile
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&vf), f)
		require.NotEmpty(t, vf.Cases, f)
		for _, c := range vf.Cases {
			t.Run(strings.TrimSuffix(filepath.Base(f), ".json")+"/"+c.Name, func(t *testing.T) {
				s := open(t)
				for i, st := range c.Steps {
					runStep(t, s, i, &st)
				}
				got, err := state(context.Background(), s)
				require.NoError(t, err)
				assertState(t, c.State, got)
			})
		}
	}
}

var (
	blockID = regexp.MustCompile(`^blk_[0-9a-f]{24}$`)
	// blockRef is an archive_deletes entry naming a block by its label,
	// "block:LABEL": block ids are random.
	blockRef = regexp.MustCompile(`"block:[^"]*"`)
)

func runStep(t *testing.T, s store.Store, i int, st *vectorStep) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch {
	case st.Append != nil:
		msgs, derr := appendMessages(st.Append.ConversationID, st.Append.Messages)
		err = derr
		if err == nil {
			if st.Append.NewOnly {
				var added []store.Message
				added, err = s.AppendNew(ctx, st.Append.ConversationID, msgs)
				if err == nil && st.Want.Appended != nil {
					ids := make([]string, len(added))
					for k := range added {
						ids[k] = added[k].ID
					}
					assert.Equal(t, st.Want.Appended, ids, "step %d: appended", i)
				}
			} else {
				err = s.AppendMessages(ctx, st.Append.ConversationID, msgs)
			}
		}
	case st.Commit != nil:
		now, perr := time.Parse(time.RFC3339Nano, st.Now)
		require.NoError(t, perr, "step %d: now", i)
		s.(interface{ SetNow(func() time.Time) }).SetNow(func() time.Time { return now })
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, st.Commit))
		in := blockRef.ReplaceAllFunc(compact.Bytes(), func(ref []byte) []byte {
			b, err := readBlock(ctx, s, string(ref[len(`"block:`):len(ref)-1]))
			require.NoError(t, err, "step %d: %s", i, ref)
			return []byte(`"` + b.ID + `"`)
		})
		c, derr := api.DecodeCommit(in)
		err = derr
		if err == nil {
			err = s.Commit(ctx, &c)
		}
	case st.ReadBlock != nil:
		var b store.StoredBlock
		b, err = readBlock(ctx, s, st.ReadBlock.Label)
		if err == nil {
			assert.Regexp(t, blockID, b.ID)
			assertSubset(t, st.Want.Block, storedBlockJSON(&b), "step %d: block", i)
		}
	case st.Recall != nil:
		var m store.Message
		m, err = s.Recall(ctx, st.Recall.ConversationID, st.Recall.ID)
		if err == nil {
			assert.JSONEq(t, string(st.Want.Message), string(m.Raw), "step %d: recalled message", i)
		}
	case st.Search != nil:
		var hits []store.Hit
		hits, err = s.Search(ctx, st.Search.Query, store.SearchOptions{ConversationID: st.Search.ConversationID})
		if err == nil {
			require.Len(t, hits, len(st.Want.Hits), "step %d: hits", i)
			for k := range hits {
				assertSubset(t, st.Want.Hits[k], hitJSON(&hits[k]), "step %d: hit %d", i, k)
			}
		}
	default:
		t.Fatalf("step %d: no append, commit, read_block, recall or search", i)
	}
	if st.Want.Error == nil {
		require.NoError(t, err, "step %d", i)
		return
	}
	require.Error(t, err, "step %d", i)
	assert.Equal(t, st.Want.Error.Kind, errorKind(err), "step %d: %v", i, err)
	for _, w := range st.Want.Error.Says {
		assert.Contains(t, err.Error(), w, "step %d", i)
	}
}

// appendMessages reads an append step's messages as the Go host does
// (api.DecodeAppend), each with its compact JSON as raw.
func appendMessages(conversationID string, raws []json.RawMessage) ([]store.Message, error) {
	arr := []byte{'['}
	compact := make([][]byte, len(raws))
	for i, r := range raws {
		var b bytes.Buffer
		if err := json.Compact(&b, r); err != nil {
			return nil, err
		}
		compact[i] = b.Bytes()
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, compact[i]...)
	}
	arr = append(arr, ']')
	decoded, err := api.DecodeAppend(conversationID, arr)
	if err != nil {
		return nil, err
	}
	msgs := make([]store.Message, len(decoded))
	for i := range decoded {
		m := &decoded[i]
		msgs[i] = store.Message{ID: m.ID, ConversationID: conversationID, Role: m.Role.String(), Content: m.Content, Raw: compact[i]}
		if m.HasCreatedAt {
			msgs[i].CreatedAt = m.CreatedAt
		}
	}
	return msgs, nil
}

func readBlock(ctx context.Context, s store.Store, label string) (store.StoredBlock, error) {
	blocks, err := s.ListBlocks(ctx, "archival", label)
	if err != nil {
		return store.StoredBlock{}, err
	}
	for _, b := range blocks {
		if b.Label == label {
			return s.Block(ctx, b.ID)
		}
	}
	return store.StoredBlock{}, store.ErrNotFound
}

func errorKind(err error) string {
	var dup *store.DuplicateIDError
	switch {
	case errors.Is(err, core.ErrConflict):
		return "conflict"
	case errors.As(err, &dup):
		return "duplicate"
	case errors.Is(err, store.ErrNotFound):
		return "not_found"
	}
	return "invalid"
}

// batchJSON is a batch as the parseBlocks export answers it.
func batchJSON(b *core.Batch) any {
	if b == nil {
		return nil
	}
	ids := b.SourceMessageIDs
	if ids == nil {
		ids = []string{}
	}
	return map[string]any{"operation_id": b.OperationID, "depth": b.Depth, "start_time": core.FormatTime(b.Start),
		"end_time": core.FormatTime(b.End), "message_count": b.MessageCount, "source_message_ids": ids, "method": b.Method,
		"summary": b.Content}
}

func storedBlockJSON(b *store.StoredBlock) map[string]any {
	out := map[string]any{"tier": b.Tier, "label": b.Label, "content": b.Content, "conversation_id": b.ConversationID,
		"reason": b.Reason, "operation_id": b.OperationID, "created_at": store.FormatTime(b.CreatedAt), "batch": batchJSON(b.Batch)}
	if b.Malformed != "" {
		out["malformed"] = b.Malformed
	}
	return out
}

func hitJSON(h *store.Hit) map[string]any {
	out := map[string]any{"kind": string(h.Kind), "conversation_id": h.ConversationID, "role": h.Role, "label": h.Label,
		"text": h.Text, "in_context": h.InContext, "start_time": store.FormatTime(h.Start), "end_time": store.FormatTime(h.End)}
	if h.Kind == store.HitMessage {
		out["id"] = h.ID
	}
	if b := h.Batch; b != nil {
		ids := b.SourceMessageIDs
		if ids == nil {
			ids = []string{}
		}
		out["depth"], out["method"], out["message_count"], out["source_message_ids"] = b.Depth, b.Method, b.MessageCount, ids
	} else {
		out["depth"], out["method"], out["message_count"], out["source_message_ids"] = nil, nil, nil, nil
	}
	return out
}

// assertSubset checks that got has every key of want with an equal value
// (compared as JSON).
func assertSubset(t *testing.T, want, got map[string]any, msg string, args ...any) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := got[k]
		if !assert.True(t, ok, append([]any{msg + ": no %q"}, append(args, k)...)...) {
			continue
		}
		wj, _ := json.Marshal(want[k])
		gj, _ := json.Marshal(g)
		assert.JSONEq(t, string(wj), string(gj), append([]any{msg + ": %q"}, append(args, k)...)...)
	}
	if _, ok := want["malformed"]; !ok {
		assert.NotContains(t, got, "malformed", append([]any{msg + ": malformed"}, args...)...)
	}
}

// assertState compares a store's state with the vector's: every table
// row by row, each row's columns as JSON.
func assertState(t *testing.T, want json.RawMessage, got []byte) {
	t.Helper()
	var w, g map[string][]map[string]any
	require.NoError(t, json.Unmarshal(want, &w), "the case's state")
	require.NoError(t, json.Unmarshal(got, &g), "the store's state: %s", got)
	for _, table := range []string{"messages", "recall", "blocks"} {
		require.Contains(t, w, table, "the case's state lists every table")
		wj, _ := json.MarshalIndent(w[table], "", " ")
		gj, _ := json.MarshalIndent(g[table], "", " ")
		assert.JSONEq(t, string(wj), string(gj), "table %s", table)
	}
}
