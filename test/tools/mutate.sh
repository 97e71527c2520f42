#!/usr/bin/env bash
# test/tools/mutate.sh: run tests against a deliberately broken build, to
# check that they catch the bug (a "mutation").
#
# Usage:
#   mutate.sh PATCH [TESTREGEX]   one mutation; TESTREGEX defaults to the
#                                 patch's "Caught-by:" header line
#   mutate.sh --all               every test/mutations/*.patch, with its own
#                                 Caught-by tests; a table at the end
#   (make mutate runs --all; make mutate MUTATION=NAME runs one)
#
# A mutation is a patch under test/mutations/NAME.patch (diff -u or git diff
# format, paths from the top of the tree).  Before the diff, header lines
# say what it breaks and what catches it:
#   Mutation: one line, the bug it reintroduces
#   Guarantee: the G-ids (docs/guarantees.md) it breaks
#   Caught-by: an ONLY regular expression (run-tests.sh) naming the tests
#   Needs: PostgreSQL N (optional): what it breaks exists from N on only
#     (a NOT NULL constraint's name); on an older server it is not tried,
#     and --all lists it as skipped without failing
#
# What it does, for one mutation:
# 1. copies the working tree (without .git and test results) into a fresh
#    mktemp -d directory and applies the patch there (git apply, else
#    patch -p1); the repository itself is never changed;
# 2. builds and installs that copy into the PG_CONFIG installation, and runs
#    ONLY=TESTREGEX bash test/tools/run-tests.sh in it;
# 3. whatever happened, builds and installs the repository's own tree again,
#    and removes the copy.
# The installed extension is the mutant while the tests run: do not run
# other tests against the same PG_CONFIG meanwhile.
#
# Result, one line: "mutation NAME: CAUGHT (...)" when the tests failed,
# "mutation NAME: NOT CAUGHT (...)" when they passed.  Exit status: 0 caught,
# 1 not caught, 2 the mutation could not be tried (the patch does not apply,
# the mutant does not build, no test matches), 3 skipped (Needs).  With
# --all: 0 only if every mutation tried was caught.  The run's log stays in
# test/results/mutations/NAME.log.
set -euo pipefail
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"
# shellcheck source=scratch.sh
source "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"

MUT_DIR=$REPO/test/mutations
LOG_DIR=$REPO/test/results/mutations

usage()
{
	die "usage: mutate.sh PATCH [TESTREGEX] | mutate.sh --all"
}

# header_field PATCH FIELD: the value of "FIELD: value" before the diff.
header_field()
{
	awk -v f="$2" '
		/^(diff |--- |Index: )/ { exit }
		index($0, f ":") == 1 { sub("^" f ":[ \t]*", ""); print; exit }' "$1"
}

# apply_patch DIR PATCH
apply_patch()
{
	if command -v git >/dev/null 2>&1; then
		git -C "$1" apply --whitespace=nowarn "$2"
	elif command -v patch >/dev/null 2>&1; then
		patch -d "$1" -p1 -s --batch --no-backup-if-mismatch <"$2"
	else
		echo "mutate.sh: neither git nor patch is installed" >&2
		return 1
	fi
}

# try_mutant PATCH NAME REGEX SCRATCH LOG: apply, build, test; prints the
# result line, returns 0/1/2.
try_mutant()
{
	local patch=$1 name=$2 regex=$3 scratch=$4 log=$5 rc summary

	scratch_copy "$scratch"
	if ! apply_patch "$scratch" "$patch" >"$log" 2>&1; then
		cat "$log"
		echo "mutation $name: NOT TRIED (the patch does not apply)"
		return 2
	fi
	if ! bash "$scratch/test/tools/build.sh" >>"$log" 2>&1; then
		tail -n 20 "$log"
		echo "mutation $name: NOT TRIED (the mutant does not build)"
		return 2
	fi
	rc=0
	ONLY=$regex bash "$scratch/test/tools/run-tests.sh" >>"$log" 2>&1 || rc=$?
	summary=$(tail -n 1 "$log")
	if [[ ! $summary =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		echo "mutation $name: NOT TRIED (the test run did not finish: $summary)"
		return 2
	fi
	if grep -q '^run-tests.sh: no tests found' "$log"; then
		echo "mutation $name: NOT TRIED (no test matches $regex)"
		return 2
	fi
	if ((rc != 0 && BASH_REMATCH[2] > 0)); then
		echo "mutation $name: CAUGHT ($summary; log: ${log#"$REPO"/})"
		grep -E '^(not ok |[-+][a-z_ ]+[|])' "$log" | head -n 12 | sed 's/^/   /' || true
		return 0
	fi
	echo "mutation $name: NOT CAUGHT ($summary; log: ${log#"$REPO"/})"
	return 1
}

# run_one PATCH [TESTREGEX]: one mutation, then the unmutated build again.
run_one()
{
	local patch=$1 regex=${2:-} name need rc=0
	[[ -f $patch ]] || die "no such patch: $patch"
	patch=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
	name=$(basename "$patch" .patch)
	[[ -n $regex ]] || regex=$(header_field "$patch" Caught-by)
	[[ -n $regex ]] || die "$name: no TESTREGEX given and no Caught-by: line in $patch"
	need=$(header_field "$patch" Needs | sed -nE 's/^PostgreSQL ([0-9]+)$/\1/p')
	if [[ -n $need ]] && ((PG_MAJOR < need)); then
		echo "mutation $name: SKIPPED (it needs PostgreSQL $need or later; this is $PG_MAJOR)"
		return 3
	fi

	mkdir -p "$LOG_DIR"
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/ddl_notify_mutant.XXXXXX")
	echo "== mutation $name: $(header_field "$patch" Mutation)"
	echo "   tests: $regex"
	try_mutant "$patch" "$name" "$regex" "$SCRATCH" "$LOG_DIR/$name.log" || rc=$?
	rm -rf "$SCRATCH"
	SCRATCH=
	scratch_reinstall mutate.sh mutant
	return "$rc"
}

# Interrupted: never leave the mutant installed.
scratch_guard mutate.sh mutant

case ${1:-} in
--all)
	(($# == 1)) || usage
	shopt -s nullglob
	patches=("$MUT_DIR"/*.patch)
	((${#patches[@]})) || die "no mutations in $MUT_DIR"
	results=()
	status=0
	for p in "${patches[@]}"; do
		rc=0
		run_one "$p" || rc=$?
		case $rc in
		0) results+=("CAUGHT      $(basename "$p" .patch)") ;;
		1) results+=("NOT CAUGHT  $(basename "$p" .patch)"); status=1 ;;
		3) results+=("SKIPPED     $(basename "$p" .patch) (needs a newer PostgreSQL)") ;;
		*) results+=("NOT TRIED   $(basename "$p" .patch)"); status=1 ;;
		esac
	done
	echo "== mutations"
	printf '%s\n' "${results[@]}"
	exit "$status"
	;;
-h | --help | "")
	usage
	;;
*)
	(($# <= 2)) || usage
	run_one "$@"
	;;
esac
