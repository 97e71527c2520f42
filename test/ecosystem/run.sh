#!/usr/bin/env bash
# test/ecosystem/run.sh: ddl_notify beside the extensions people run with it
# (`make test-ecosystem`, after make has built and installed ddl_notify).
#
# Steps:
#   1. The other extensions come from Debian: postgresql-M-pgaudit, -cron,
#      -partman, -repack, -pglogical, -pgl-ddl-deploy, -pgq3, -postgis-3, M
#      being the major version of PG_CONFIG (pg-env.sh chooses it), never a
#      fixed number.  As root, the missing ones are installed (apt-get update
#      once, then apt-get install -y --no-install-recommends); as another
#      user nothing is installed and the missing ones are listed.
#   2. Debian installs into /usr/lib/postgresql/M and /usr/share/postgresql/M.
#      When PG_CONFIG is another installation of the same major (a relocated
#      copy, as the developers use), the packages' files are copied into its
#      bindir, pkglibdir and sharedir, and this is said; with another major
#      there is nothing to copy and the tests of missing extensions skip.
#   3. The TAP files test/ecosystem/t/NNN_*.pl run through
#      test/tools/run-tests.sh (TEST_SUITES=tap, TAP_DIR=test/ecosystem/t):
#      same copy of the tree, same OS user, same counting, same last line
#      "N passed, M failed" and exit status.
#
# Each TAP file skips (skip_all, with the reason) when the extension it
# tests is not installed in PG_CONFIG's installation, so a machine without
# the packages and without root runs what it can; 000_packages.pl then fails
# once for each missing extension, so that the last line never reads as a
# full pass.
#
# Environment: ONLY and SUITE_TIMEOUT as for run-tests.sh (ONLY matches the
# TAP file names); ECOSYSTEM_NO_APT=1 skips step 1.
set -euo pipefail
# shellcheck source=../tools/pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/pg-env.sh"
pg_paths

PKGS=(pgaudit cron partman repack pglogical pgl-ddl-deploy pgq3 postgis-3)
debs=()
for p in "${PKGS[@]}"; do
	debs+=("postgresql-$PG_MAJOR-$p")
done

installed()
{
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == 'install ok installed' ]]
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
	for d in "${debs[@]}"; do
		installed "$d" || missing+=("$d")
	done
fi

if ((${#missing[@]})) && [[ -z ${ECOSYSTEM_NO_APT:-} ]]; then
	if is_root && command -v apt-get >/dev/null 2>&1; then
		echo "== installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
			missing=()
		else
			echo "test/ecosystem/run.sh: apt-get could not install ${missing[*]}; their tests will skip"
		fi
	else
		echo "test/ecosystem/run.sh: not root (or no apt-get): not installing ${missing[*]}; their tests will skip"
	fi
fi

# Step 2: a PG_CONFIG that is not the system installation of its major.
sys_lib=/usr/lib/postgresql/$PG_MAJOR
sys_share=/usr/share/postgresql/$PG_MAJOR
if [[ $PG_PKGLIBDIR != "$sys_lib/lib" ]]; then
	PG_SHAREDIR=$("$PG_CONFIG" --sharedir)
	if [[ -d $sys_lib/lib && -w $PG_PKGLIBDIR ]]; then
		echo "== PG_CONFIG ($PG_CONFIG) is not the system installation: copying the packages' files from $sys_lib and $sys_share into it"
		for d in "${debs[@]}"; do
			installed "$d" || continue
			while IFS= read -r f; do
				[[ -f $f ]] || continue
				case $f in
				"$sys_lib"/bin/*) dst=$PG_BINDIR/${f#"$sys_lib"/bin/} ;;
				"$sys_lib"/lib/*) dst=$PG_PKGLIBDIR/${f#"$sys_lib"/lib/} ;;
				"$sys_share"/*) dst=$PG_SHAREDIR/${f#"$sys_share"/} ;;
				*) continue ;;
				esac
				cmp -s "$f" "$dst" 2>/dev/null && continue
				mkdir -p "${dst%/*}"
				cp -p "$f" "$dst"
			done < <(dpkg -L "$d")
		done
	else
		echo "== PG_CONFIG ($PG_CONFIG) is not the system installation and $sys_lib is not there to copy from (or $PG_PKGLIBDIR is not writable): the tests of extensions it lacks will skip"
	fi
fi

export TEST_SUITES=tap TAP_DIR=test/ecosystem/t
exec bash "$TOOLS_DIR/run-tests.sh"
