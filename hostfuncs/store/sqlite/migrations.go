package sqlite

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The schema's steps and the shared queries are plain SQL files, read by
// this store (embedded) and by the Python store (bindings/python, from
// its package data or this directory), so no SQL is copied between
// languages. SCHEMA.md in the parent directory describes the tables.
//
//go:embed migrations/*.sql queries/*.sql
var sqlFiles embed.FS

// migration is one step of the schema. Steps are applied in version order,
// each in the transaction that records it in schema_migrations, so a crash
// half-way leaves the previous version intact. Never edit a released step
// (TestReleasedMigrationsUnchanged pins them): add a new file.
//
// migrations/NNNN.sql is version NNNN; its first line is "-- " and the
// step's name, the rest its SQL: plain SQLite, no driver-specific types,
// because the Python host runs the same file with Python's sqlite3.
type migration struct {
	version int
	name    string
	sql     string
}

var migrations = mustLoadMigrations()

func mustLoadMigrations() []migration {
	ms, err := loadMigrations(sqlFiles)
	if err != nil {
		panic("sqlite: " + err.Error())
	}
	return ms
}

func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		v, err := strconv.Atoi(strings.TrimSuffix(path.Base(n), ".sql"))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: the file name must be the version number, e.g. 0003.sql", n)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		first, sql, ok := strings.Cut(string(b), "\n")
		if !ok || !strings.HasPrefix(first, "-- ") {
			return nil, fmt.Errorf("migration %s: the first line must be \"-- \" and the step's name", n)
		}
		out = append(out, migration{version: v, name: strings.TrimPrefix(first, "-- "), sql: sql})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration versions must be 1, 2, 3, …: found %d where %d belongs", m.version, i+1)
		}
	}
	return out, nil
}

// query returns a shared query's SQL (queries/NAME.sql).
func query(name string) string {
	b, err := sqlFiles.ReadFile("queries/" + name + ".sql")
	if err != nil {
		panic("sqlite: " + err.Error())
	}
	return string(b)
}

var (
	searchSQL            = query("search")
	moveToRecallSQL      = query("move_to_recall")
	embeddingsMissingSQL = query("embeddings_missing")
	embeddingsPutSQL     = query("embeddings_put")
	searchByRefSQL       = query("search_by_ref")
	writeRecallSQL       = query("write_recall")
	indexActiveSQL       = query("index_active")
	searchInContextSQL   = query("search_in_context")
	commitCheckSQL       = query("commit_check")
	insertClipArchiveSQL = query("insert_clip_archive")
	removeMessagesSQL    = query("remove_messages")
	replaceMessageSQL    = query("replace_message")
	deleteBlocksSQL      = query("delete_blocks")
	writeBlockSQL        = query("write_block")
	heldIDsSQL           = query("held_ids")
	appendMessageSQL     = query("append_message")
)
