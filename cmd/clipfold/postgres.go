package main

import (
	"context"
	"errors"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/internal/redact"
	"github.com/jackc/pgx/v5/pgconn"
)

// openPostgres connects to the PostgreSQL archive, with errors that say
// what to check: the URL's syntax, the server's refusal of the user,
// password or database it names, or a server that cannot be reached.
func openPostgres(ctx context.Context, url string) (store.Store, error) {
	st, err := postgres.Open(ctx, url)
	if err == nil {
		return st, nil
	}
	var parse *pgconn.ParseConfigError
	var connect *pgconn.ConnectError
	var refused *pgconn.PgError
	switch {
	case errors.As(err, &parse):
		// Every message is redacted, and "user:password@" in a
		// template reads as a password: the template shows none.
		return nil, usagef("--postgres: %v (expected postgres://user@host:port/database, with :password after the user when the server needs one)", err)
	case errors.As(err, &connect) && errors.As(err, &refused):
		return nil, failf("PostgreSQL at %s refused the connection: %v (are the user, password and database in the URL right?)", redact.URL(url), err)
	case errors.As(err, &connect):
		return nil, failf("cannot reach PostgreSQL at %s: %v (is the server running? is the URL right?)", redact.URL(url), err)
	}
	return nil, failf("opening PostgreSQL at %s: %v", redact.URL(url), err)
}
