#!/usr/bin/env bash
# test/tools/deps.sh: make sure this machine can build and test ddl_notify.
#
# Checks for: gcc, make, PGXS ($PG_CONFIG --pgxs), pg_regress,
# pg_isolation_regress and PostgreSQL::Test::Cluster (all from
# postgresql-server-dev-MAJOR), prove and Test::More (perl), IPC::Run
# (libipc-run-perl).
#
# Rules:
# - MAJOR is the newest installed server (see pg-env.sh); no version is
#   hard-coded except as the fallback there.
# - Quiet when nothing is missing.
# - Something missing and we are root: apt-get update, then apt-get install -y
#   --no-install-recommends of exactly the missing packages, then check again.
# - Something missing and we are not root: print the packages and the command
#   to install them, and exit 1.
set -euo pipefail
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"

# Fills PKGS (Debian packages to install) and WHY (what is missing).
check()
{
	PKGS=()
	WHY=()
	local dev=postgresql-server-dev-$PG_MAJOR pgxs pkglib

	[[ -x /usr/lib/postgresql/$PG_MAJOR/bin/postgres ]] ||
		need "postgresql-$PG_MAJOR" "the PostgreSQL $PG_MAJOR server"
	command -v gcc >/dev/null 2>&1 || need gcc "gcc"
	command -v make >/dev/null 2>&1 || need make "make"
	if [[ -z $PG_CONFIG ]]; then
		need "$dev" "pg_config"
	else
		pgxs=$("$PG_CONFIG" --pgxs 2>/dev/null || true)
		pkglib=$("$PG_CONFIG" --pkglibdir 2>/dev/null || true)
		[[ -n $pgxs && -f $pgxs ]] ||
			need "$dev" "PGXS (${pgxs:-pg_config --pgxs})"
		[[ -x $pkglib/pgxs/src/test/regress/pg_regress ]] ||
			need "$dev" "pg_regress"
		[[ -x $pkglib/pgxs/src/test/isolation/pg_isolation_regress ]] ||
			need "$dev" "pg_isolation_regress"
		[[ -f $pkglib/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm ]] ||
			need "$dev" "PostgreSQL::Test::Cluster"
	fi
	command -v prove >/dev/null 2>&1 || need perl "prove"
	perl -MTest::More -e 1 >/dev/null 2>&1 || need perl "perl's Test::More"
	perl -MIPC::Run -e 1 >/dev/null 2>&1 || need libipc-run-perl "perl's IPC::Run"
	command -v runuser >/dev/null 2>&1 || need util-linux "runuser"
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
