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

// QueryText runs a query returning one text, for tests.
func (s *Store) QueryText(ctx context.Context, sql string, args ...any) (string, error) {
	var out string
	err := s.pool.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, sql, args...).Scan(&out)
	})
	return out, err
}
