#!/usr/bin/env bash
# test/tools/demo.sh: show ddl_notify at work in a throwaway PostgreSQL
# cluster (`make demo` builds and installs the extension first).
#
# Rules:
# - Never touches an existing cluster: initdb (-A trust, -E UTF8,
#   --no-locale) into a fresh mktemp -d directory; the server listens on a
#   unix socket in that directory only (listen_addresses = ''), on a free
#   port, with shared_preload_libraries = 'ddl_notify'.
# - The server runs as an unprivileged user: postgres when we are root
#   (initdb refuses root), else the caller.
# - Runs test/tools/demo.sql in a new database "demo" with
#   psql -X -v ON_ERROR_STOP=1 --echo-queries; the first failing statement
#   ends the demo.
# - On every exit, error and interrupt included, the server is stopped and
#   the directory removed.
# - Exit status: non-zero when any step or any SQL statement failed.
set -euo pipefail
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"

SQL=$TOOLS_DIR/demo.sql


cleanup()
{
	local rc=$?
	trap - EXIT INT TERM HUP
	[[ -n ${DIR:-} && -d $DIR ]] || exit "$rc"
	if [[ -n ${CHILD:-} ]]; then
		kill -TERM "$CHILD" 2>/dev/null || true
	fi
	echo "== stopping the cluster, removing $DIR"
	if [[ -f $DIR/data/postmaster.pid ]]; then
		run_as "$USER_NAME" pg_ctl -D "$DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
			kill_postmaster "$DIR/data"
	fi
	rm -rf "$DIR"
	exit "$rc"
}

# show_log FILE: the end of a log, after a step failed.
show_log()
{
	echo "-- last lines of $1:"
	tail -n 30 "$1" 2>/dev/null | sed 's/^/   /'
}

[[ -f $SQL ]] || die "$SQL is missing"
pg_paths
unset_pg_env
export PATH=$PG_BINDIR:$PATH
USER_NAME=$(pg_run_user)

DIR=$(mktemp -d "${TMPDIR:-/tmp}/ddl_notify_demo.XXXXXX")
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
cp "$SQL" "$DIR/demo.sql"
if is_root; then
	chown -R "$USER_NAME": "$DIR"
fi
cd "$DIR"
PORT=$(free_port)

echo "== starting a throwaway PostgreSQL cluster in $DIR"
echo "   (PostgreSQL $PG_MAJOR, OS user $USER_NAME, unix socket only, port $PORT)"
if ! run_as "$USER_NAME" initdb -D "$DIR/data" -A trust -E UTF8 --no-locale \
	>"$DIR/initdb.log" 2>&1 </dev/null; then
	show_log "$DIR/initdb.log"
	die "initdb failed"
fi
cat >>"$DIR/data/postgresql.conf" <<EOF

# Added by test/tools/demo.sh
listen_addresses = ''
unix_socket_directories = '$DIR'
port = $PORT
shared_preload_libraries = 'ddl_notify'
EOF
if ! run_as "$USER_NAME" pg_ctl -D "$DIR/data" -l "$DIR/server.log" -w -t 60 start \
	>/dev/null 2>&1 </dev/null; then
	show_log "$DIR/server.log"
	die "the server did not start"
fi
run_as "$USER_NAME" createdb -h "$DIR" -p "$PORT" demo </dev/null || die "createdb demo failed"

echo "== running test/tools/demo.sql in database \"demo\""
echo
rc=0
# In the background, so that a signal reaches cleanup at once, not when psql ends.
run_as "$USER_NAME" psql -X -v ON_ERROR_STOP=1 --echo-queries -P pager=off \
	-h "$DIR" -p "$PORT" -d demo -f "$DIR/demo.sql" </dev/null &
CHILD=$!
wait "$CHILD" || rc=$?
CHILD=
echo
if ((rc != 0)); then
	show_log "$DIR/server.log"
	echo "== the demo FAILED (psql exit status $rc)"
	exit "$rc"
fi
echo "== the demo ran to the end"
