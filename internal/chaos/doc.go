// Package chaos holds the crash and concurrency suite: the clipfold
// command, built from this checkout, killed with SIGKILL at random
// instants while it compacts, and run as many processes at once on one
// SQLite file or PostgreSQL database. After every kill and every round
// the archive is checked as a user would rely on it: the database is
// intact, every message of the conversation is either in the active
// history or in recall storage (never both — but for a message replaced
// in place to keep the window, whose replacement is active and original
// recalled — never lost), every other recalled message is covered by an
// archived batch, and the next compaction and search work.
//
// It has no API; its tests run in `go test ./...` and in `make chaos`.
// CHAOS_ROUNDS raises the number of kills and rounds (default: a short
// run fit for CI).
package chaos
