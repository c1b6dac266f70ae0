package main

import (
	"context"
	"strings"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/internal/redact"
)

// openPostgres connects to the PostgreSQL archive, with errors that say
// what to check.
func openPostgres(ctx context.Context, url string) (store.Store, error) {
	st, err := postgres.Open(ctx, url)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "parsing the URL"):
			return nil, usagef("--postgres: %v (expected postgres://user[:password]@host[:port]/database)", err)
		case strings.Contains(msg, "connect") || strings.Contains(msg, "dial"):
			return nil, failf("cannot reach PostgreSQL at %s: %v (is the server running? is the URL right?)", redact.URL(url), err)
		}
		return nil, failf("opening PostgreSQL at %s: %v", redact.URL(url), err)
	}
	return st, nil
}
