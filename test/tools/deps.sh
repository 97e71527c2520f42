#!/usr/bin/env bash
# test/tools/deps.sh: make sure this machine can build and test ddl_notify.
#
# Checks for: the PostgreSQL server (postgresql-MAJOR), gcc, make, every
# PostgreSQL header that src/ includes, under $PG_CONFIG --includedir-server
# (postgresql-server-dev-MAJOR), PGXS ($PG_CONFIG --pgxs), pg_regress,
# pg_isolation_regress and PostgreSQL::Test::Cluster (postgresql-client-MAJOR
# ships these on Debian 12, postgresql-server-dev-MAJOR elsewhere, so a
# missing one asks for the latter, which depends on the former), prove and
# Test::More (perl), IPC::Run (libipc-run-perl), runuser (util-linux); for
# the CDC tests (test/t/061_cdc_consumers.pl): wal2json.so in $PG_CONFIG
# --pkglibdir (postgresql-MAJOR-wal2json; not asked for where apt has no such
# package, as for 19: the assertions that need it then skip), pg_recvlogical in its --bindir
# (postgresql-client-MAJOR), and psycopg2 importable by /usr/bin/python3
# (python3-psycopg2; Debian's package serves the system python, not one a
# user put first on PATH).
#
# Usage: deps.sh           check, and install what is missing (as root)
#        deps.sh --check   check only: print what is missing and the packages
#                          that bring it, exit 1 if anything is; install nothing
#        PG_CONFIG=/path/to/pg_config deps.sh ...   check that installation
#
# Rules:
# - MAJOR is the newest installed server (see pg-env.sh); no version is
#   hard-coded except as the fallback there.
# - Quiet when nothing is missing.
# - Each check looks for the file that is used, never for a neighbour from the
#   same package: the headers are the ones src/*.[ch] include, found from the
#   sources themselves, so a new #include is checked without editing this file;
#   one under a PG_VERSION_NUM guard (src/compat.h) only where the guard holds.
# - The server is looked for next to $PG_CONFIG (any layout), else in Debian's
#   /usr/lib/postgresql/MAJOR/bin.
# - Something missing and we are root: apt-get update, then apt-get install -y
#   --no-install-recommends of exactly the missing packages, then check again.
# - Something missing and we are not root: print the packages and the command
#   to install them, and exit 1.
set -euo pipefail
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"

CHECK_ONLY=
case ${1:-} in
--check) CHECK_ONLY=1 ;;
"") ;;
*) die "usage: deps.sh [--check]" ;;
esac

# The PostgreSQL headers the sources include: every "name.h" in an #include of
# src/*.c or src/*.h that is not one of the project's own files, and that the
# installed major's build reads: an #include under "#if PG_VERSION_NUM OP N"
# (src/compat.h has some), #elif or #else is only taken where that holds for
# PG_MAJOR (compared as MAJOR*10000); any other condition counts as true.
server_headers()
{
	local h
	awk -v V=$((PG_MAJOR * 10000)) '
		function holds(line,   op, n) {
			if (!match(line, /PG_VERSION_NUM[[:space:]]*(>=|<=|==|!=|>|<)[[:space:]]*[0-9]+/))
				return -1
			line = substr(line, RSTART + 14, RLENGTH - 14)
			gsub(/[[:space:]]/, "", line)
			match(line, /[0-9]+/)
			n = substr(line, RSTART) + 0
			op = substr(line, 1, RSTART - 1)
			return (op == ">=" && V >= n) || (op == "<=" && V <= n) || (op == "==" && V == n) ||
				(op == "!=" && V != n) || (op == ">" && V > n) || (op == "<" && V < n)
		}
		function active(   i) {
			for (i = 1; i <= depth; i++)
				if (!on[i]) return 0
			return 1
		}
		FNR == 1 { depth = 0 }
		/^[[:space:]]*#[[:space:]]*if/ {
			r = holds($0); depth++
			on[depth] = (r != 0); taken[depth] = (r != 0); known[depth] = (r >= 0)
			next
		}
		/^[[:space:]]*#[[:space:]]*elif/ {
			r = holds($0)
			on[depth] = !taken[depth] && (r != 0); taken[depth] = taken[depth] || on[depth]
			next
		}
		/^[[:space:]]*#[[:space:]]*else/ { on[depth] = known[depth] ? !taken[depth] : 1; next }
		/^[[:space:]]*#[[:space:]]*endif/ { depth--; next }
		/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]/ {
			if (!active()) next
			h = $0
			sub(/^[^<"]*[<"]/, "", h)
			sub(/[>"].*/, "", h)
			print h
		}' "$REPO"/src/*.c "$REPO"/src/*.h | LC_ALL=C sort -u |
		while IFS= read -r h; do
			[[ -f $REPO/src/$h ]] || printf '%s\n' "$h"
		done
}

# Is there no wal2json package for PG_MAJOR?  True only when apt's lists are
# there (they know postgresql-PG_MAJOR) and name no postgresql-PG_MAJOR-wal2json
# (none for 19 yet): then the CDC tests that need it skip, saying so.
no_wal2json_package()
{
	local server w2j
	command -v apt-cache >/dev/null 2>&1 || return 1
	# (read whole first: grep -q would end apt-cache early, failing the pipe)
	server=$(apt-cache policy "postgresql-$PG_MAJOR" 2>/dev/null || true)
	w2j=$(apt-cache policy "postgresql-$PG_MAJOR-wal2json" 2>/dev/null || true)
	[[ $server == *"Candidate: "[0-9]* && $w2j != *"Candidate: "[0-9]* ]]
}

# Fills PKGS (Debian packages to install) and WHY (what is missing).
check()
{
	PKGS=()
	WHY=()
	local dev=postgresql-server-dev-$PG_MAJOR pgxs pkglib incdir bindir h

	# the server next to pg_config (a build of one's own), else Debian's place
	if [[ -n $PG_CONFIG ]] && bindir=$("$PG_CONFIG" --bindir 2>/dev/null) && [[ -x $bindir/postgres ]]; then
		:
	elif [[ ! -x /usr/lib/postgresql/$PG_MAJOR/bin/postgres ]]; then
		need "postgresql-$PG_MAJOR" "the PostgreSQL $PG_MAJOR server"
	fi
	command -v gcc >/dev/null 2>&1 || need gcc "gcc"
	command -v make >/dev/null 2>&1 || need make "make"
	if [[ -z $PG_CONFIG ]]; then
		need "$dev" "pg_config"
	else
		pgxs=$("$PG_CONFIG" --pgxs 2>/dev/null || true)
		pkglib=$("$PG_CONFIG" --pkglibdir 2>/dev/null || true)
		incdir=$("$PG_CONFIG" --includedir-server 2>/dev/null || true)
		while IFS= read -r h; do
			if [[ -z $incdir || ! -f $incdir/$h ]]; then
				need "$dev" "the server headers (${incdir:-pg_config --includedir-server}/$h)"
				break
			fi
		done < <(server_headers)
		[[ -n $pgxs && -f $pgxs ]] ||
			need "$dev" "PGXS (${pgxs:-pg_config --pgxs})"
		[[ -x $pkglib/pgxs/src/test/regress/pg_regress ]] ||
			need "$dev" "pg_regress"
		[[ -x $pkglib/pgxs/src/test/isolation/pg_isolation_regress ]] ||
			need "$dev" "pg_isolation_regress"
		[[ -f $pkglib/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm ]] ||
			need "$dev" "PostgreSQL::Test::Cluster"
		[[ -n $pkglib && -f $pkglib/wal2json.so ]] || no_wal2json_package ||
			need "postgresql-$PG_MAJOR-wal2json" "wal2json (${pkglib:-pg_config --pkglibdir}/wal2json.so)"
		bindir=$("$PG_CONFIG" --bindir 2>/dev/null || true)
		[[ -n $bindir && -x $bindir/pg_recvlogical ]] ||
			need "postgresql-client-$PG_MAJOR" "pg_recvlogical (${bindir:-pg_config --bindir}/pg_recvlogical)"
	fi
	command -v prove >/dev/null 2>&1 || need perl "prove"
	perl -MTest::More -e 1 >/dev/null 2>&1 || need perl "perl's Test::More"
	perl -MIPC::Run -e 1 >/dev/null 2>&1 || need libipc-run-perl "perl's IPC::Run"
	command -v runuser >/dev/null 2>&1 || need util-linux "runuser"
	/usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1 ||
		need python3-psycopg2 "psycopg2 for /usr/bin/python3"
}

# need PACKAGE WHAT: record WHAT as missing, fixed by installing PACKAGE.
need()
{
	local p
	WHY+=("$2")
	for p in "${PKGS[@]}"; do
		[[ $p == "$1" ]] && return 0
	done
	PKGS+=("$1")
}

check
[[ ${#PKGS[@]} -eq 0 ]] && exit 0

missing=$(printf '%s, ' "${WHY[@]}")
missing=${missing%, }
if [[ -n $CHECK_ONLY ]]; then
	echo "deps.sh: missing: $missing"
	echo "deps.sh: packages: ${PKGS[*]}"
	exit 1
fi
if ! is_root; then
	{
		echo "deps.sh: missing: $missing"
		echo "deps.sh: install these packages, then run make again:"
		echo "    sudo apt-get install -y --no-install-recommends ${PKGS[*]}"
	} >&2
	exit 1
fi

echo "== installing ${PKGS[*]} (missing: $missing)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq </dev/null || die "apt-get update failed"
apt-get install -y -qq --no-install-recommends "${PKGS[@]}" </dev/null ||
	die "apt-get install ${PKGS[*]} failed"

# If there was no pg_config before, the freshly installed one is the one.
if [[ -z $PG_CONFIG ]]; then
	unset PG_CONFIG
	# shellcheck source=pg-env.sh
	source "$TOOLS_DIR/pg-env.sh"
fi
check
if [[ ${#PKGS[@]} -gt 0 ]]; then
	missing=$(printf '%s, ' "${WHY[@]}")
	die "still missing after installing: ${missing%, }"
fi
echo "== dependencies installed"
