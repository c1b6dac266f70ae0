package sqlite_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
)

// snapshot is a directory's files and their contents' hashes.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func names(m map[string][32]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// archiveAt writes a small archive at path, at schema version (0: the
// current one), and closes it: c1 and c2 both number msg_0, msg_1.
func archiveAt(t *testing.T, path string, version int) {
	t.Helper()
	ctx := context.Background()
	var s *sqlite.Store
	var err error
	if version == 0 {
		s, err = sqlite.Open(path)
	} else {
		s, err = sqlite.OpenAt(path, version)
	}
	require.NoError(t, err)
	convs := []string{"c1", "c2"}
	if version != 0 && version < 5 {
		convs = convs[:1] // ids were unique across the store
	}
	for _, conv := range convs {
		require.NoError(t, s.AppendMessages(ctx, conv, []store.Message{
			{ID: "msg_0", Role: "user", Content: "the " + conv + " walrus is hungry"},
			{ID: "msg_1", Role: "assistant", Content: "feed the " + conv + " walrus herring"},
			{ID: "msg_2", Role: "user", Content: "thanks"}}))
		require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: conv, OperationID: "op-" + conv,
			RemoveMessageIDs: []string{"msg_0", "msg_1"}, Insert: core.InsertMessage{ID: "ca1", Content: "[Context Summary]"}}))
	}
	require.NoError(t, s.Close())
}

// TestOpenReadOnly: reading never writes. The file (and every file
// beside it) is byte for byte what it was; SQLite itself refuses a write
// (mode=ro, which a test running as root proves where file permissions
// cannot); the store's writes say it is read-only.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "archive.db")
	archiveAt(t, path, 0)
	require.NoError(t, os.Chmod(path, 0o444))
	before := snapshot(t, dir)
	require.Equal(t, []string{"archive.db"}, names(before), "a closed WAL database is one file")

	s, err := sqlite.OpenReadOnly(path)
	require.NoError(t, err)
	assert.True(t, s.ReadOnly())
	hits, err := s.Search(ctx, "herring", store.SearchOptions{})
	require.NoError(t, err)
	assert.Len(t, hits, 2)
	m, err := s.Recall(ctx, "c2", "msg_1")
	require.NoError(t, err)
	assert.Equal(t, "feed the c2 walrus herring", m.Content)
	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Len(t, active, 2)

	for what, err := range map[string]error{
		"append": s.AppendMessages(ctx, "c1", []store.Message{{ID: "new", Role: "user", Content: "x"}}),
		"commit": s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op", RemoveMessageIDs: []string{"msg_2"},
			Insert: core.InsertMessage{ID: "ca2", Content: "x"}}),
		"migrate": func() error { _, err := s.Migrate(ctx); return err }(),
		"vectors": func() error {
			_, err := s.PutVectors(ctx, "m", []store.DocVector{{DocRef: store.DocRef{Kind: store.HitMessage, ConversationID: "c1", ID: "msg_0"},
				Vector: []float32{1}}})
			return err
		}(),
	} {
		require.ErrorIs(t, err, store.ErrReadOnly, what)
		assert.Contains(t, err.Error(), "read-only", what)
	}
	_, err = s.DB().ExecContext(ctx, `DELETE FROM recall`)
	require.Error(t, err, "SQLite refuses writes on the connection itself")
	assert.Contains(t, err.Error(), "readonly")
	require.NoError(t, s.Close())
	assert.Equal(t, before, snapshot(t, dir), "nothing written, nothing created, nothing left behind")
}

// TestOpenReadOnlyVersions: a version-4 database is read as it is (not
// migrated); an older one is refused with what to do; a file that is no
// clipfold database, or none at all, is refused and not created.
func TestOpenReadOnlyVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v4 := filepath.Join(dir, "v4.db")
	archiveAt(t, v4, 4)
	s, err := sqlite.OpenReadOnly(v4)
	require.NoError(t, err)
	hits, err := s.Search(ctx, "walrus", store.SearchOptions{})
	require.NoError(t, err)
	assert.Len(t, hits, 2)
	m, err := s.Recall(ctx, "", "msg_0")
	require.NoError(t, err)
	assert.Equal(t, "c1", m.ConversationID)
	var version int
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&version))
	assert.Equal(t, 4, version, "reading does not migrate")
	require.NoError(t, s.Close())

	v3 := filepath.Join(dir, "v3.db")
	archiveAt(t, v3, 3)
	before := snapshot(t, dir)
	_, err = sqlite.OpenReadOnly(v3)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema version 3")
	assert.Contains(t, err.Error(), "open the database writable once")
	assert.Equal(t, before, snapshot(t, dir))

	other := filepath.Join(dir, "other.db")
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	_, err = sqlite.OpenReadOnly(other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a clipfold database")

	_, err = sqlite.OpenReadOnly(filepath.Join(dir, "missing.db"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(filepath.Join(dir, "missing.db"))
	assert.ErrorIs(t, err, os.ErrNotExist, "opening for reading creates nothing")
	for _, p := range []string{"", sqlite.MemoryPath, dir, "a?b.db"} {
		_, err = sqlite.OpenReadOnly(p)
		assert.Error(t, err, "%q", p)
	}

	// A newer schema than this build knows is refused, naming both.
	cur := filepath.Join(dir, "cur.db")
	archiveAt(t, cur, 0)
	w, err := sqlite.Open(cur)
	require.NoError(t, err)
	_, err = w.DB().ExecContext(ctx, `INSERT INTO schema_migrations VALUES (99, 'from the future', '')`)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = sqlite.OpenReadOnly(cur)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema version 99")
}

// TestOpenReadOnlySemantic: a search with an embedder through a read-only
// store ranks the vectors stored, embeds nothing more (it only asks for
// the query's vector) and says what it left out.
func TestOpenReadOnlySemantic(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "archive.db")
	archiveAt(t, path, 0)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	w, err := sqlite.Open(path)
	require.NoError(t, err)
	_, err = store.EmbedMissing(ctx, w, e, "c1")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	sent := len(srv.Texts())

	s, err := sqlite.OpenReadOnly(path)
	require.NoError(t, err)
	defer s.Close()
	var warned []string
	hits, err := s.Search(ctx, "herring", store.SearchOptions{Embedder: e, Warn: func(err error) { warned = append(warned, err.Error()) }})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, sent+1, len(srv.Texts()), "the query alone is embedded")
	require.Len(t, warned, 1)
	assert.True(t, strings.Contains(warned[0], "read-only"), warned[0])
	var vectorHit bool
	for _, h := range hits {
		vectorHit = vectorHit || h.VectorRank > 0
	}
	assert.True(t, vectorHit, "c1's stored vectors rank")
}

// TestOpenReadOnlyBesideAWriter: while a writer has the database open
// (its -shm and -wal exist, commits still in the -wal), a read-only store
// shares them: it reads the writer's latest commits, the writer keeps
// writing, and once both close the directory is as the writer leaves it.
func TestOpenReadOnlyBesideAWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "archive.db")
	archiveAt(t, path, 0)
	w, err := sqlite.Open(path)
	require.NoError(t, err)
	require.NoError(t, w.AppendMessages(ctx, "c3", []store.Message{{ID: "msg_0", Role: "user", Content: "a fresh lighthouse note"}}))
	require.NoError(t, w.Commit(ctx, &core.Commit{ConversationID: "c3", OperationID: "op-c3", RemoveMessageIDs: []string{"msg_0"},
		Insert: core.InsertMessage{ID: "ca1", Content: "[Context Summary]"}}))
	wal, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	require.Positive(t, wal.Size(), "the writer's commits are in its write-ahead log")

	s, err := sqlite.OpenReadOnly(path)
	require.NoError(t, err)
	hits, err := s.Search(ctx, "lighthouse", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 1, "the reader sees what the writer committed")
	assert.Equal(t, "c3", hits[0].ConversationID)
	require.NoError(t, w.AppendMessages(ctx, "c3", []store.Message{{ID: "msg_1", Role: "user", Content: "and another"}}))
	active, err := s.ActiveMessages(ctx, "c3")
	require.NoError(t, err)
	assert.Len(t, active, 2, "and keeps seeing it")
	require.NoError(t, s.Close())
	require.NoError(t, w.Close())
	assert.Equal(t, []string{"archive.db"}, names(snapshot(t, dir)))
}
