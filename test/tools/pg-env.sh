# test/tools/pg-env.sh: shared settings and helpers for the scripts in test/tools/.
#
# Sourced by deps.sh, build.sh, run-tests.sh and demo.sh; never run on its own.
#
# Rules:
# - REPO is found from this file's own location, so callers work from any
#   directory and from a fresh clone.
# - PG_MAJOR is the newest installed server (/usr/lib/postgresql/*/bin/postgres);
#   15 only when none is found. Nothing else here names a version.
# - PG_CONFIG is the one pg_config every script and every make call uses: an
#   explicit path already in the environment wins, then
#   /usr/lib/postgresql/$PG_MAJOR/bin/pg_config, then pg_config from PATH. It is
#   exported; it is empty when there is none (deps.sh reports that).
# - Servers never run as root: pg_run_user is postgres for root, else the caller.

# The variables set here are used by the scripts that source this file.
# shellcheck disable=SC2034

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$TOOLS_DIR/../.." && pwd)
PG_MAJOR_FALLBACK=15

# die MESSAGE...: print to stderr, prefixed with the script's name, and exit 1.
die()
{
	printf '%s: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

is_root()
{
	[[ $(id -u) -eq 0 ]]
}

# The newest major version with a server binary under /usr/lib/postgresql.
pg_detect_major()
{
	local bin major best=
	for bin in /usr/lib/postgresql/*/bin/postgres; do
		[[ -x $bin ]] || continue
		major=${bin#/usr/lib/postgresql/}
		major=${major%%/*}
		if [[ -z $best ]] || [[ $(printf '%s\n%s\n' "$best" "$major" | sort -V | tail -n 1) == "$major" ]]; then
			best=$major
		fi
	done
	printf '%s\n' "${best:-$PG_MAJOR_FALLBACK}"
}

if [[ -n ${PG_CONFIG:-} && $PG_CONFIG == */* && -x $PG_CONFIG ]]; then
	PG_MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
else
	PG_MAJOR=$(pg_detect_major)
	if [[ -x /usr/lib/postgresql/$PG_MAJOR/bin/pg_config ]]; then
		PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
	else
		PG_CONFIG=$(command -v pg_config || true)
	fi
fi
export PG_CONFIG

# pg_paths: set PG_BINDIR, PG_PKGLIBDIR, PG_PGXS and PGXS_TEST (the directory
# holding pg_regress, pg_isolation_regress and the TAP perl modules).
pg_paths()
{
	[[ -n $PG_CONFIG ]] || die "no pg_config found; run test/tools/deps.sh"
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
	PG_PGXS=$("$PG_CONFIG" --pgxs)
	PGXS_TEST=$PG_PKGLIBDIR/pgxs/src/test
}

# The OS user that runs initdb, postgres and the test programs.
pg_run_user()
{
	if is_root; then
		id postgres >/dev/null 2>&1 ||
			die "running as root needs the 'postgres' OS user (created by the postgresql-common package)"
		echo postgres
	else
		id -un
	fi
}

# run_as USER COMMAND...: run COMMAND as USER, with this PATH. From root that
# goes through runuser (no password, no terminal, no stdin needed).
run_as()
{
	local user=$1
	shift
	if is_root && [[ $user != root ]]; then
		runuser -u "$user" -- env PATH="$PATH" "$@"
	else
		"$@"
	fi
}

# The libpq variables that would point psql, pg_ctl or the test drivers at
# some other server.
unset_pg_env()
{
	unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGDATA PGSERVICE \
		PGSERVICEFILE PGOPTIONS PGPASSWORD PGPASSFILE PGSSLMODE PGTZ \
		PGDATESTYLE PGCLIENTENCODING PGAPPNAME PGTARGETSESSIONATTRS PG_COLOR
}

# free_port: a port nothing listens on over TCP and no socket in the usual
# places uses (the clusters' sockets live in their own directories, so this
# is belt and braces).
free_port()
{
	local port
	for _ in {1..100}; do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null &&
			[[ ! -e /tmp/.s.PGSQL.$port && ! -e /var/run/postgresql/.s.PGSQL.$port ]]; then
			echo "$port"
			return 0
		fi
	done
	die "found no free port"
}

# kill_postmaster DATADIR: end the postmaster of DATADIR without pg_ctl
# (pg_ctl could not stop it, or the run that started it is gone): SIGQUIT,
# up to 10 s to go, then SIGKILL.
kill_postmaster()
{
	local pid
	pid=$(head -n 1 "$1/postmaster.pid" 2>/dev/null || true)
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 0
	kill -QUIT "$pid" 2>/dev/null || true
	for _ in {1..50}; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null || true
}
