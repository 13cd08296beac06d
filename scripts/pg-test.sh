#!/usr/bin/env bash
# pg-test.sh CMD [ARGS...]: run CMD with a throwaway PostgreSQL server.
#
# Installs Debian's postgresql package when no server binaries are found,
# initdb's a new cluster in a temporary directory (as the unprivileged
# user `postgres` when run as root, since the server refuses to run as
# root), starts it on a unix socket in that directory and on no TCP
# address, exports GAPBENCH_PG_DSN (a postgres:// URL for pgx) for CMD,
# and stops the server and removes the directory afterwards, whatever CMD
# returns. The exit status is CMD's.
#
#   bash scripts/pg-test.sh go test -count=1 ./internal/history/...
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: pg-test.sh CMD [ARGS...]" >&2
	exit 2
fi

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
BIN=$(bindir || true)
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
	echo "pg-test.sh: installing postgresql (Debian's package)" >&2
	if [ "$(id -u)" -ne 0 ]; then
		echo "pg-test.sh: no PostgreSQL server binaries and not root: install the postgresql package" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq postgresql >/dev/null
	BIN=$(bindir)
fi

DIR=$(mktemp -d /tmp/gapbench-pg.XXXXXX)
chmod 755 "$DIR"
as_owner() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
	if ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir "$DIR" --shell /usr/sbin/nologin postgres
	fi
	chown postgres "$DIR"
	as_owner() { runuser -u postgres -- "$@"; }
fi

# A free port number names the socket file (.s.PGSQL.PORT); no TCP
# listener is opened, so nothing collides with other servers.
PORT=$(( 20000 + RANDOM % 20000 ))

cleanup() {
	as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
trap cleanup EXIT

as_owner "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --no-sync >"$DIR/initdb.log" 2>&1 ||
	{ cat "$DIR/initdb.log" >&2; exit 1; }
if ! as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
	-o "-k $DIR -p $PORT -c listen_addresses='' -c fsync=off -c full_page_writes=off" start >/dev/null; then
	cat "$DIR/server.log" >&2
	exit 1
fi

export GAPBENCH_PG_DSN="postgres://postgres@/postgres?host=$DIR&port=$PORT&sslmode=disable"
echo "pg-test.sh: $("$BIN/postgres" --version | head -1) on socket $DIR/.s.PGSQL.$PORT" >&2
status=0
"$@" || status=$?
exit $status
