package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// OpenAt opens url with the schema migrated up to version only, to test
// upgrades of databases written by older versions.
func OpenAt(ctx context.Context, url string, version int) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return openAt(ctx, cfg, version)
}

// MigrationSQL is each step's name and SQL, by version.
func MigrationSQL() map[int][2]string {
	out := map[int][2]string{}
	for _, m := range migrations {
		out[m.version] = [2]string{m.name, m.sql}
	}
	return out
}
