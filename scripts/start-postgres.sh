#!/usr/bin/env bash
# start-postgres.sh — a throwaway PostgreSQL server for clipfold's store tests.
#
# The PostgreSQL store is tested against a real server (Debian's package),
# never a mock: the commit's locking and the full-text ranking are exactly
# what a mock would get wrong. This script gives tests one, cheaply:
#
#   eval "$(scripts/start-postgres.sh)"      # start (or reuse) and export the URL
#   go test ./hostfuncs/store/... -race -count=1
#   scripts/start-postgres.sh stop            # stop the server (data kept)
#   scripts/start-postgres.sh destroy         # stop and delete the cluster
#   scripts/start-postgres.sh url             # print the URL of the running server
#
# What it does:
#   1. finds the server binaries (pg_ctl, initdb, postgres) on PATH or under
#      /usr/lib/postgresql/*/bin; if there are none, installs Debian's
#      `postgresql` package with apt-get;
#   2. initdb's a cluster in $CLIPFOLD_PG_DIR (default: a per-user dir under
#      ${TMPDIR:-/tmp}), trust auth, listening on 127.0.0.1 only;
#   3. starts it on $CLIPFOLD_PG_PORT (default 54329, or the next free port);
#      as root, the server runs as the `postgres` user (created if missing),
#      since PostgreSQL refuses to run as root;
#   4. creates the database $CLIPFOLD_PG_DB (default clipfold_test);
#   5. prints `export CLIPFOLD_TEST_POSTGRES_URL=postgres://…` on stdout
#      (everything else goes to stderr) and, under GitHub Actions, appends it
#      to $GITHUB_ENV.
# Running it again reuses the running cluster (idempotent).
set -euo pipefail

PG_DIR="${CLIPFOLD_PG_DIR:-${TMPDIR:-/tmp}/clipfold-pg-$(id -u)}"
PG_DB="${CLIPFOLD_PG_DB:-clipfold_test}"
PG_SUPERUSER=postgres
DEFAULT_PORT="${CLIPFOLD_PG_PORT:-54329}"
DATA="$PG_DIR/data"
SOCK="$PG_DIR/sock"
LOG="$PG_DIR/server.log"
PORT_FILE="$PG_DIR/port"

log() { printf 'start-postgres: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# find_bindir prints the directory holding pg_ctl, initdb and postgres, or
# nothing. PATH first (this machine links them into /usr/local/bin), then
# Debian's versioned directories, newest version first.
find_bindir() {
	local p d
	if p="$(command -v pg_ctl 2>/dev/null)" && [ -n "$p" ]; then
		d="$(dirname "$(readlink -f "$p")")"
		if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
			printf '%s\n' "$d"
			return
		fi
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4 -n -r); do
		if [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
			printf '%s\n' "$d"
			return
		fi
	done
}

ensure_bindir() {
	BINDIR="$(find_bindir)"
	if [ -z "$BINDIR" ]; then
		command -v apt-get >/dev/null 2>&1 || die "no PostgreSQL server binaries found and no apt-get to install them"
		log "no PostgreSQL server binaries found; installing the postgresql package"
		local sudo=""
		[ "$(id -u)" -ne 0 ] && sudo="sudo"
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
		BINDIR="$(find_bindir)"
		[ -n "$BINDIR" ] || die "postgresql installed but pg_ctl/initdb/postgres still not found"
	fi
	log "using server binaries in $BINDIR ($("$BINDIR/postgres" --version))"
}

# as_owner runs a command as the cluster's owner: the current user, or the
# postgres user when we are root.
RUN_USER=""
setup_user() {
	if [ "$(id -u)" -eq 0 ]; then
		RUN_USER=postgres
		if ! id "$RUN_USER" >/dev/null 2>&1; then
			log "creating system user $RUN_USER to run the server (it refuses to run as root)"
			useradd --system --no-create-home --shell /bin/sh "$RUN_USER"
		fi
	fi
}
as_owner() {
	if [ -n "$RUN_USER" ]; then
		if command -v runuser >/dev/null 2>&1; then
			runuser -u "$RUN_USER" -- "$@"
		else
			su -s /bin/sh "$RUN_USER" -c "$(printf '%q ' "$@")"
		fi
	else
		"$@"
	fi
}

port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

is_running() {
	[ -d "$DATA" ] && [ -n "${BINDIR:-}" ] && as_owner "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

url() {
	printf 'postgres://%s@127.0.0.1:%s/%s?sslmode=disable\n' "$PG_SUPERUSER" "$(cat "$PORT_FILE")" "$PG_DB"
}

psql_cmd() {
	local psql="$BINDIR/psql"
	[ -x "$psql" ] || psql="$(command -v psql)" || die "psql not found"
	"$psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(cat "$PORT_FILE")" -U "$PG_SUPERUSER" "$@"
}

start() {
	ensure_bindir
	setup_user
	if ! is_running; then
		mkdir -p "$PG_DIR"
		if [ -n "$RUN_USER" ]; then
			chown "$RUN_USER" "$PG_DIR"
			# The server user must be able to reach $PG_DIR.
			chmod 755 "$PG_DIR"
		fi
		if [ ! -f "$DATA/PG_VERSION" ]; then
			log "initdb in $DATA"
			as_owner "$BINDIR/initdb" -D "$DATA" -U "$PG_SUPERUSER" --auth=trust \
				--encoding=UTF8 --no-locale >"$PG_DIR/initdb.log" 2>&1 ||
				{ cat "$PG_DIR/initdb.log" >&2; die "initdb failed"; }
		fi
		as_owner mkdir -p "$SOCK"
		local port="$DEFAULT_PORT"
		while port_in_use "$port"; do
			port=$((port + 1))
			[ "$port" -lt $((DEFAULT_PORT + 100)) ] || die "no free port in $DEFAULT_PORT..$port"
		done
		printf '%s\n' "$port" >"$PORT_FILE"
		log "starting server on 127.0.0.1:$port (log: $LOG)"
		as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
			-o "-p $port -k $SOCK -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
			start >&2 || { tail -n 30 "$LOG" >&2 || true; die "pg_ctl start failed"; }
	else
		log "reusing the running server in $DATA (port $(cat "$PORT_FILE"))"
	fi
	if [ "$(psql_cmd -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != "1" ]; then
		log "creating database $PG_DB"
		psql_cmd -d postgres -c "CREATE DATABASE \"$PG_DB\""
	fi
	local u
	u="$(url)"
	printf 'export CLIPFOLD_TEST_POSTGRES_URL=%q\n' "$u"
	if [ -n "${GITHUB_ENV:-}" ]; then
		printf 'CLIPFOLD_TEST_POSTGRES_URL=%s\n' "$u" >>"$GITHUB_ENV"
	fi
}

stop() {
	BINDIR="$(find_bindir)"
	setup_user
	if is_running; then
		log "stopping the server in $DATA"
		as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >&2
	else
		log "no server running in $DATA"
	fi
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
destroy)
	stop
	log "removing $PG_DIR"
	rm -rf "$PG_DIR"
	;;
url)
	BINDIR="$(find_bindir)"
	setup_user
	is_running || die "no server running in $DATA; run $0 first"
	url
	;;
*)
	die "usage: $0 [start|stop|destroy|url]"
	;;
esac
