#!/usr/bin/env bash
# devdb.sh [DBNAME] - print a PostgreSQL connection URL for a development database.
# devdb.sh --stop   - stop the private development cluster (see 3. below) if it runs.
# devdb.sh --reset [DBNAME]
#                   - start afresh: stop the private cluster and delete it with all its
#                     data, and drop DBNAME (default contactbook) on 127.0.0.1:$DEVDB_PORT_PROBE
#                     when a server answers there. The next run recreates what it needs.
#
# Stdout: exactly one line, the URL. Everything else (progress, tool output) goes to stderr,
# so callers can do: DATABASE_URL="$(scripts/devdb.sh contactbook)".
#
# Resolution order:
#   1. $DATABASE_URL, if set and non-empty, is printed unchanged.
#   2. A server answering on 127.0.0.1:$DEVDB_PORT_PROBE (default 5432): the database is
#      created there if missing (user postgres, trust auth).
#   3. Otherwise a private cluster under <repo>/.data/pg is initialised (if needed) and
#      started on 127.0.0.1:$DEVDB_PRIVATE_PORT (default 54329), installing the PostgreSQL
#      server packages with apt-get if they are missing. It keeps running after the caller
#      ends (the next run finds it up); --stop stops it, --reset deletes it.
#
# Environment overrides:
#   DATABASE_URL         use this URL as is
#   DEVDB_PORT_PROBE     port probed for an existing server (default 5432)
#   DEVDB_PRIVATE_PORT   port of the private cluster (default 54329)
set -euo pipefail

log() { printf 'devdb: %s\n' "$*" >&2; }
die() { printf 'devdb: ERROR: %s\n' "$*" >&2; exit 1; }

ACTION=url
case "${1:-}" in
--stop) ACTION=stop; shift ;;
--reset) ACTION=reset; shift ;;
-*) die "unknown option '$1' (usage: devdb.sh [DBNAME] | --stop | --reset [DBNAME])" ;;
esac
NAME="${1:-contactbook}"
[[ "$NAME" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] ||
	die "invalid database name '$NAME' (allowed: letters, digits, underscore; not starting with a digit)"

PROBE_PORT="${DEVDB_PORT_PROBE:-5432}"
PRIVATE_PORT="${DEVDB_PRIVATE_PORT:-54329}"
HOST=127.0.0.1
[[ "$PROBE_PORT" =~ ^[0-9]+$ ]] || die "DEVDB_PORT_PROBE must be a port number, got '$PROBE_PORT'"
[[ "$PRIVATE_PORT" =~ ^[0-9]+$ ]] || die "DEVDB_PRIVATE_PORT must be a port number, got '$PRIVATE_PORT'"

# Keep caller PG* settings from changing what the explicit flags below mean.
unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGSERVICE PGOPTIONS PGPASSWORD PGPASSFILE PGSSLMODE
export PGCONNECT_TIMEOUT=5

IS_ROOT=0
if [[ "$(id -u)" -eq 0 ]]; then IS_ROOT=1; fi

# Directory with the PostgreSQL server binaries, newest major version first; optionally
# preferring a given major version (the one an existing cluster was created with).
pg_bindir() {
	local want="${1:-}" d best=""
	if [[ -n "$want" && -x "/usr/lib/postgresql/$want/bin/pg_ctl" ]]; then
		printf '%s\n' "/usr/lib/postgresql/$want/bin"
		return 0
	fi
	shopt -s nullglob
	for d in /usr/lib/postgresql/*/bin; do
		[[ -x "$d/pg_ctl" && -x "$d/initdb" && -x "$d/postgres" ]] || continue
		if [[ -z "$best" ]] || [[ "$(printf '%s\n%s\n' "$best" "$d" | sort -V | tail -n1)" == "$d" ]]; then
			best="$d"
		fi
	done
	shopt -u nullglob
	[[ -n "$best" ]] || return 1
	printf '%s\n' "$best"
}

# Path of a client tool: PATH first, then the server bin dir.
pg_tool() {
	local tool="$1" dir
	if command -v "$tool" >/dev/null 2>&1; then
		command -v "$tool"
		return 0
	fi
	if dir="$(pg_bindir)" && [[ -x "$dir/$tool" ]]; then
		printf '%s\n' "$dir/$tool"
		return 0
	fi
	return 1
}

apt_install() {
	[[ "$IS_ROOT" -eq 1 ]] || die "PostgreSQL package(s) $* missing and not running as root; install them (apt-get install $*) or set DATABASE_URL"
	command -v apt-get >/dev/null 2>&1 || die "PostgreSQL package(s) $* missing and apt-get is not available; install them or set DATABASE_URL"
	log "installing $* with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2 9>&-
	apt-get install -y --no-install-recommends "$@" >&2 9>&- # fd 9: see as_owner
}

# Does something accept connections on 127.0.0.1:$1?
server_up() {
	local port="$1" isready
	if isready="$(pg_tool pg_isready)"; then
		"$isready" -q -h "$HOST" -p "$port" -t 3
	else
		timeout 3 bash -c "exec 3<>/dev/tcp/$HOST/$port" 2>/dev/null
	fi
}

# Create database $NAME on 127.0.0.1:$1 unless it already exists. $2: directory of client
# tools to prefer (optional).
ensure_database() {
	local port="$1" bindir="${2:-}" psql createdb exists
	if [[ -n "$bindir" && -x "$bindir/psql" && -x "$bindir/createdb" ]]; then
		psql="$bindir/psql" createdb="$bindir/createdb"
	else
		if ! psql="$(pg_tool psql)" || ! createdb="$(pg_tool createdb)"; then
			apt_install postgresql-client
			psql="$(pg_tool psql)" || die "psql not found after installing postgresql-client"
			createdb="$(pg_tool createdb)" || die "createdb not found after installing postgresql-client"
		fi
	fi
	db_exists() {
		exists="$("$psql" -X -h "$HOST" -p "$port" -U postgres -d postgres -tAc \
			"SELECT 1 FROM pg_database WHERE datname='$NAME'")" ||
			die "cannot query $HOST:$port as user postgres (is trust auth configured?)"
		[[ "$exists" == 1 ]]
	}
	if db_exists; then
		log "database '$NAME' exists on $HOST:$port"
		return 0
	fi
	log "creating database '$NAME' on $HOST:$port"
	if ! "$createdb" -h "$HOST" -p "$port" -U postgres "$NAME" >&2; then
		# Lost a race with a concurrent run? Then the database is there now.
		db_exists || die "createdb '$NAME' failed on $HOST:$port"
	fi
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
ROOT_HASH="$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)"

# Run a postgres binary as the cluster owner (postgres when we are root: postgres
# refuses to run as root). cd / so runuser does not complain about an unreadable cwd.
# fd 9 (the lock below) is closed for the child: a postmaster inheriting it would hold
# the lock for as long as it runs.
as_owner() {
	if [[ "$IS_ROOT" -eq 1 ]]; then
		(cd / && runuser -u postgres -- "$@") 9>&-
	else
		"$@" 9>&-
	fi
}

# The directories the private cluster may live in (see 3. below), whether or not it exists.
cluster_bases() {
	printf '%s\n' "$ROOT/.data" "/tmp/contactbook-pg-$ROOT_HASH"
}

# Stop the private cluster in base directory $1 if it runs.
stop_cluster() {
	local base="$1" version bindir
	[[ -f "$base/pg/PG_VERSION" ]] || return 0
	version="$(<"$base/pg/PG_VERSION")"
	if ! bindir="$(pg_bindir "$version")"; then
		log "cannot stop the cluster in $base/pg: PostgreSQL $version binaries are not installed"
		return 0
	fi
	if as_owner "$bindir/pg_ctl" -D "$base/pg" status >/dev/null 2>&1; then
		log "stopping the private cluster in $base/pg"
		as_owner "$bindir/pg_ctl" -D "$base/pg" -m fast -w stop >&2
	else
		log "the private cluster in $base/pg is not running"
	fi
}

case "$ACTION" in
stop)
	found=0
	while IFS= read -r base; do
		if [[ -f "$base/pg/PG_VERSION" ]]; then
			found=1
			stop_cluster "$base"
		fi
	done < <(cluster_bases)
	if [[ "$found" -eq 0 ]]; then
		log "there is no private development cluster; nothing to stop (a PostgreSQL server of the machine is not ours to stop)"
	fi
	exit 0
	;;
reset)
	while IFS= read -r base; do
		if [[ -f "$base/pg/PG_VERSION" ]]; then
			stop_cluster "$base"
		fi
		if [[ -e "$base/pg" ]]; then
			log "deleting the private cluster in $base/pg"
			rm -rf "$base/pg" "$base/pg-socket" "$base/pg.log"
		fi
	done < <(cluster_bases)
	rm -rf "/tmp/contactbook-pg-$ROOT_HASH-socket"
	if server_up "$PROBE_PORT"; then
		psql="$(pg_tool psql)" || die "psql not found"
		log "dropping database '$NAME' on $HOST:$PROBE_PORT"
		"$psql" -X -q -h "$HOST" -p "$PROBE_PORT" -U postgres -d postgres \
			-c "DROP DATABASE IF EXISTS \"$NAME\" WITH (FORCE)" >&2
	fi
	exit 0
	;;
esac

# 1. Explicit URL wins.
if [[ -n "${DATABASE_URL:-}" ]]; then
	log "using DATABASE_URL from the environment"
	printf '%s\n' "$DATABASE_URL"
	exit 0
fi

# 2. A server is already listening (normally the system PostgreSQL).
if server_up "$PROBE_PORT"; then
	log "PostgreSQL is answering on $HOST:$PROBE_PORT"
	ensure_database "$PROBE_PORT"
	printf 'postgres://postgres@%s:%s/%s?sslmode=disable\n' "$HOST" "$PROBE_PORT" "$NAME"
	exit 0
fi

# 3. Private development cluster.
log "nothing answers on $HOST:$PROBE_PORT; using a private cluster on $HOST:$PRIVATE_PORT"

if [[ "$IS_ROOT" -eq 1 ]] && ! id postgres >/dev/null 2>&1; then
	# The postgres user comes with the server packages.
	apt_install postgresql
fi

BASE="$ROOT/.data"
if [[ "$IS_ROOT" -eq 1 ]]; then
	# The cluster runs as postgres, which must be able to reach it (not the case under
	# e.g. /root): fall back to a per-checkout directory under /tmp.
	if runuser -u postgres -- test -x "$ROOT"; then
		mkdir -p "$BASE"
	fi
	if ! runuser -u postgres -- test -x "$BASE"; then
		BASE="/tmp/contactbook-pg-$ROOT_HASH"
		log "user postgres cannot enter $ROOT/.data; putting the cluster under $BASE instead"
		mkdir -p "$BASE"
		chmod 0755 "$BASE"
	fi
else
	mkdir -p "$BASE"
fi

PGDATA_DIR="$BASE/pg"
SOCK_DIR="$BASE/pg-socket"
LOG_FILE="$BASE/pg.log"
# Unix socket paths are limited to 107 bytes; fall back to a short path if needed.
if (( ${#SOCK_DIR} + ${#PRIVATE_PORT} + 10 > 100 )); then
	SOCK_DIR="/tmp/contactbook-pg-$ROOT_HASH-socket"
	log "socket directory path too long; using $SOCK_DIR"
fi

# Serialise concurrent runs (e.g. parallel make targets) around initdb/start.
exec 9>"$BASE/.devdb.lock"
flock 9

PG_VERSION_WANT=""
if [[ -f "$PGDATA_DIR/PG_VERSION" ]]; then PG_VERSION_WANT="$(<"$PGDATA_DIR/PG_VERSION")"; fi
if ! BINDIR="$(pg_bindir "$PG_VERSION_WANT")"; then
	apt_install postgresql
	BINDIR="$(pg_bindir "$PG_VERSION_WANT")" || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin after installing"
fi
if [[ -n "$PG_VERSION_WANT" && "$BINDIR" != "/usr/lib/postgresql/$PG_VERSION_WANT/bin" ]]; then
	die "cluster $PGDATA_DIR was created by PostgreSQL $PG_VERSION_WANT, whose binaries are not installed (found $BINDIR); remove $PGDATA_DIR to recreate it"
fi
log "using server binaries in $BINDIR"

mkdir -p "$SOCK_DIR"
if [[ ! -f "$PGDATA_DIR/PG_VERSION" ]]; then
	mkdir -p "$PGDATA_DIR"
	chmod 0700 "$PGDATA_DIR"
	if [[ "$IS_ROOT" -eq 1 ]]; then chown postgres:postgres "$PGDATA_DIR"; fi
	log "initialising cluster in $PGDATA_DIR"
	as_owner "$BINDIR/initdb" -U postgres --auth=trust -E UTF8 -D "$PGDATA_DIR" >&2
fi
if [[ "$IS_ROOT" -eq 1 ]]; then
	touch "$LOG_FILE"
	chown postgres:postgres "$SOCK_DIR" "$LOG_FILE"
fi

if as_owner "$BINDIR/pg_ctl" -D "$PGDATA_DIR" status >/dev/null 2>&1; then
	log "private cluster already running"
else
	log "starting private cluster (log: $LOG_FILE)"
	if ! as_owner "$BINDIR/pg_ctl" -D "$PGDATA_DIR" \
		-o "-p $PRIVATE_PORT -k '$SOCK_DIR' -c listen_addresses=$HOST" \
		-l "$LOG_FILE" -w start >&2; then
		tail -n 20 "$LOG_FILE" >&2 || true # best-effort diagnostics; we fail below regardless
		die "could not start the private cluster (see $LOG_FILE)"
	fi
fi

ensure_database "$PRIVATE_PORT" "$BINDIR"
exec 9>&- # release the lock
printf 'postgres://postgres@%s:%s/%s?sslmode=disable\n' "$HOST" "$PRIVATE_PORT" "$NAME"
