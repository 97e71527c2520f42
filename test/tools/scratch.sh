# shellcheck shell=bash
# test/tools/scratch.sh: a scratch copy of the tree whose build is installed
# for a while, for mutate.sh (a mutant) and coverage.sh (a --coverage
# build).  Sourced after pg-env.sh, never run.
#
# Rules:
# - scratch_copy DIR copies the working tree into DIR without .git, test
#   results and build products (objects, libraries, bitcode, gcov files), so
#   the copy builds from its sources alone.  The repository is never changed.
# - scratch_guard TOOL WHAT installs the EXIT and signal traps: whenever the
#   script ends while SCRATCH names a directory, that directory is removed and
#   the repository's own build is installed again (scratch_reinstall), so a
#   mutant or an instrumented build is never left installed.  The caller sets
#   SCRATCH when it creates the copy and clears it once it reinstalled.
# - scratch_reinstall TOOL WHAT: build.sh of the repository itself; a failure
#   is a warning naming WHAT was left installed, not an exit.

scratch_copy()
{
	tar -C "$REPO" --exclude=./.git --exclude=./test/results --exclude='./tmp_check*' \
		--exclude=./results --exclude=./log --exclude='*.o' --exclude='*.so' \
		--exclude='*.bc' --exclude='*.gcno' --exclude='*.gcda' -cf - . | tar -C "$1" -xf -
}

scratch_reinstall()
{
	echo "== $1: installing the repository's own build again"
	bash "$REPO/test/tools/build.sh" >/dev/null ||
		echo "$1: WARNING: could not reinstall the build without the $2; run test/tools/build.sh" >&2
}

scratch_guard()
{
	SCRATCH_TOOL=$1
	SCRATCH_WHAT=$2
	SCRATCH=
	trap scratch_on_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}

scratch_on_exit()
{
	local rc=$?
	trap - EXIT INT TERM HUP
	if [[ -n ${SCRATCH:-} ]]; then
		rm -rf "$SCRATCH"
		scratch_reinstall "$SCRATCH_TOOL" "$SCRATCH_WHAT"
	fi
	exit "$rc"
}
