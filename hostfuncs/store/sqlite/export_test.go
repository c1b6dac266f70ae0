package sqlite

// OpenAt opens path with the schema migrated up to version only, to test
// upgrades of databases written by older versions.
func OpenAt(path string, version int) (*Store, error) { return openAt(path, version) }

// MigrationSQL is each step's name and SQL, by version.
func MigrationSQL() map[int][2]string {
	out := map[int][2]string{}
	for _, m := range migrations {
		out[m.version] = [2]string{m.name, m.sql}
	}
	return out
}

// The shared queries' SQL.
var (
	SearchSQL       = searchSQL
	MoveToRecallSQL = moveToRecallSQL
	SearchByRefSQL  = searchByRefSQL
	RecallHolders   = recallHoldersSQL
)
