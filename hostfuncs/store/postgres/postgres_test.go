package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
)

// urlEnv names the server the tests use; scripts/start-postgres.sh starts
// one and prints it. Unset, the tests skip — except under CI=true, where
// a skipped PostgreSQL suite would hide a broken store, so they fail.
const urlEnv = "CLIPFOLD_TEST_POSTGRES_URL"

func serverURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(urlEnv)
	if u != "" {
		return u
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set and CI=true: start a server with `eval \"$(scripts/start-postgres.sh)\"`; the PostgreSQL store must not go untested in CI", urlEnv)
	}
	t.Skipf("%s is not set: skipping the PostgreSQL store tests (run `eval \"$(scripts/start-postgres.sh)\"` to enable them)", urlEnv)
	return ""
}

// withSearchPath returns base with search_path set to schema, in either
// connection-string syntax pgx accepts.
func withSearchPath(t testing.TB, base, schema string) string {
	t.Helper()
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		require.NoError(t, err)
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return base + " search_path=" + schema
}

// freshSchema creates an empty schema for one test and drops it after, so
// tests stay isolated and can run against a shared server.
func freshSchema(t testing.TB) (schemaURL string) {
	t.Helper()
	ctx := context.Background()
	base := serverURL(t)
	var b [6]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	schema := "clipfold_test_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err, "connecting to %s", urlEnv)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if !assert.NoError(t, err) {
			return
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		assert.NoError(t, err)
	})
	return withSearchPath(t, base, schema)
}

func openOrFail(t testing.TB, u string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), u)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

func TestConformance(t *testing.T) {
	serverURL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return openOrFail(t, freshSchema(t))
	})
}

// Reopening applies no migration and keeps the data.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	u := freshSchema(t)
	s, err := postgres.Open(ctx, u)
	require.NoError(t, err)
	require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{{ID: "m1", Role: "user", Content: "x"}}))
	before, err := s.Dump(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = openOrFail(t, u)
	after, err := s.Dump(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after, "reopening must not change the database")
	versions, err := s.QueryInt(ctx, `SELECT COUNT(*) FROM schema_migrations`)
	require.NoError(t, err)
	assert.EqualValues(t, 6, versions)
}

func TestOpenErrors(t *testing.T) {
	base := serverURL(t)
	ctx := context.Background()
	_, err := postgres.Open(ctx, "postgres://%zz")
	assert.Error(t, err)
	_, err = postgres.Open(ctx, withSearchPath(t, base, "clipfold_no_such_schema"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema")
}

// TestVectorBackend: the pgvector column exists exactly when the server
// offers the extension (and it could be created); otherwise the store
// ranks its bytea vectors itself — the path the conformance suite tests
// here, since Debian 12's PostgreSQL 15 packages do not ship pgvector.
func TestVectorBackend(t *testing.T) {
	ctx := context.Background()
	s := openOrFail(t, freshSchema(t))
	available, err := s.QueryInt(ctx, `SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'`)
	require.NoError(t, err)
	column, err := s.QueryInt(ctx, `SELECT count(*) FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'embeddings' AND column_name = 'embedding'`)
	require.NoError(t, err)
	if available == 0 {
		assert.Zero(t, column)
		assert.True(t, strings.HasPrefix(s.VectorBackend(), "bytea (the server has no pgvector column"), s.VectorBackend())
		t.Logf("pgvector is not available on this server: vectors are ranked by the store (%s)", s.VectorBackend())
		return
	}
	if column == 1 {
		assert.Equal(t, "pgvector", s.VectorBackend())
	} else {
		assert.True(t, strings.HasPrefix(s.VectorBackend(), "bytea"), s.VectorBackend())
	}
}

// The vector cache of one store sees what another store (another
// process, in life) commits to the same schema (the scope's fingerprint).
func TestVectorCacheSeesOtherWriters(t *testing.T) {
	u := freshSchema(t)
	storetest.SharedDatabase(t, openOrFail(t, u), openOrFail(t, u))
}

// Two stores on one schema (two processes, in life) syncing the same list
// at once append each message once, and neither fails.
func TestAppendNewTwoHandles(t *testing.T) {
	u := freshSchema(t)
	storetest.AppendNewRace(t, openOrFail(t, u), openOrFail(t, u))
}

// stateSQL is testdata/store/state.sql in PostgreSQL: the three tables'
// rows as the store vectors compare them (recall and blocks in the order
// written: their identity pos).
const stateSQL = `SELECT json_build_object(
	'messages', (SELECT COALESCE(json_agg(json_build_object('conversation_id', conversation_id, 'seq', seq, 'id', id, 'role', role,
		'content', content, 'created_at', created_at, 'raw', raw, 'search_text', search_text) ORDER BY conversation_id COLLATE "C", seq), '[]') FROM messages),
	'recall', (SELECT COALESCE(json_agg(json_build_object('conversation_id', conversation_id, 'seq', seq, 'id', id, 'role', role,
		'content', content, 'created_at', created_at, 'raw', raw, 'removed_at', removed_at, 'operation_id', operation_id,
		'search_text', search_text) ORDER BY conversation_id COLLATE "C", pos), '[]') FROM recall),
	'blocks', (SELECT COALESCE(json_agg(json_build_object('tier', tier, 'label', label, 'content', content, 'created_at', created_at,
		'conversation_id', conversation_id, 'reason', reason, 'operation_id', operation_id) ORDER BY pos), '[]') FROM blocks))::text`

// The store vectors of testdata/store.
func TestVectors(t *testing.T) {
	serverURL(t)
	storetest.RunVectors(t, func(t *testing.T) store.Store {
		return openOrFail(t, freshSchema(t))
	}, func(ctx context.Context, s store.Store) ([]byte, error) {
		state, err := s.(*postgres.Store).QueryText(ctx, stateSQL)
		return []byte(state), err
	})
}
