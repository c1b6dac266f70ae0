// Package backend opens a store.Store from one connection string, so a
// command-line flag or a config key can pick the database:
//
//	postgres://… or postgresql://…   PostgreSQL (hostfuncs/store/postgres)
//	sqlite:PATH, sqlite::memory:      SQLite (hostfuncs/store/sqlite)
//	anything else                     a SQLite file path, or ":memory:"
//
// It lives apart from package store because it imports both backends,
// which themselves import store.
package backend

import (
	"context"
	"strings"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
)

// Open opens the store dsn names (see the package comment).
func Open(ctx context.Context, dsn string) (store.Store, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return postgres.Open(ctx, dsn)
	case strings.HasPrefix(dsn, "sqlite:"):
		return sqlite.Open(strings.TrimPrefix(dsn, "sqlite:"))
	default:
		return sqlite.Open(dsn)
	}
}
