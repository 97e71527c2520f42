#!/usr/bin/env bash
# test/tools/coverage.sh: line and branch coverage of ddl_notify's C code
# under the test suites (gcc --coverage, gcov -b -c).
#
# Usage:
#   coverage.sh [FILE.c ...]   (make coverage)
#     FILE.c: the source files whose uncovered error paths are listed
#     (default: every src/*.c); the per-file table always shows every file.
#   ONLY=regex coverage.sh     only those tests (passed to run-tests.sh)
#
# Rules:
# - The repository is never built with --coverage: as mutate.sh does, the
#   working tree (without .git, objects and test results) is copied into a
#   fresh mktemp -d directory, built there with COPT=--coverage (PGXS adds
#   COPT to both CFLAGS and LDFLAGS) and -Werror, and installed into the
#   PG_CONFIG installation.
# - The server processes write their counts (.gcda) next to the objects of
#   that copy, by absolute path; they run as the postgres OS user, so as root
#   the copy is handed to that user after the build.
# - The suites are the copy's test/tools/run-tests.sh (ONLY passes through).
#   Counts come only from processes that exit through exit(): a backend or a
#   background worker ended by SIGTERM writes them, a process killed by
#   SIGKILL or SIGQUIT (crash tests, immediate shutdown) does not, so a line
#   only such a process ran shows as not run.
# - Whatever happened, even on interrupt, the repository's own build is
#   installed again (test/tools/build.sh) and the copy removed: the
#   instrumented library is never left installed. Do not run other tests
#   against the same PG_CONFIG meanwhile.
# - Output: run-tests.sh's own, then one line per src/*.c (lines run %,
#   branches taken at least once %), then for each FILE.c the lines never run
#   that are error paths: ereport/elog at ERROR, FATAL, PANIC or WARNING,
#   PG_CATCH, PG_RE_THROW, ReThrowError and "return false", each with what
#   accounts for it: a comment "/* not reached: why */" (cannot happen) or
#   "/* untested: why */" (can, but no test here reaches it) on that line or
#   one of the two before, else "NO TEST, NO COMMENT". The annotated sources
#   (NAME.c.gcov, "#####" = never run) stay in test/results/coverage/.
# - Needs gcov (from gcc) only; make test does not, so deps.sh does not
#   check for it.
# - Exit status: that of the test run (a failed test fails the coverage run,
#   whose figures then mean little), 1 if no counts were written.
set -euo pipefail
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"
# shellcheck source=scratch.sh
source "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
pg_paths
command -v gcov >/dev/null 2>&1 || die "gcov not found (it comes with gcc)"

OUT_DIR=$REPO/test/results/coverage
ERROR_PATH_RE='(ereport|elog)[[:space:]]*\((ERROR|FATAL|PANIC|WARNING)|PG_CATCH|PG_RE_THROW|ReThrowError|return false'

# never leave the instrumented build installed
scratch_guard coverage.sh "coverage instrumentation"

files=("$@")
if ((${#files[@]} == 0)); then
	mapfile -t files < <(cd "$REPO" && ls src/*.c)
fi
for f in "${files[@]}"; do
	[[ -f $REPO/$f ]] || die "no such source file: $f"
done

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/ddl_notify_coverage.XXXXXX")
scratch_copy "$SCRATCH"

echo "== coverage.sh: building with --coverage in $SCRATCH"
COPT=--coverage WERROR=1 bash "$SCRATCH/test/tools/build.sh"
if is_root; then
	chown -R "$(pg_run_user)": "$SCRATCH"
fi

rc=0
bash "$SCRATCH/test/tools/run-tests.sh" || rc=$?

rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
if ! compgen -G "$SCRATCH/src/*.gcda" >/dev/null; then
	echo "coverage.sh: no .gcda file was written (did any server process exit normally?)" >&2
	exit 1
fi

# gcov -b -c per file: "File 'src/x.c'", "Lines executed:P% of N",
# "Branches executed:...", "Taken at least once:P% of N".
(cd "$SCRATCH" && gcov -b -c -o src src/*.c) >"$OUT_DIR/gcov.log" 2>&1 || true
mv "$SCRATCH"/*.c.gcov "$OUT_DIR"/ 2>/dev/null || true
rm -f "$SCRATCH"/*.gcov

echo "== coverage (gcov -b -c; branches = taken at least once)"
awk '
	/^File / { file = $2; gsub(/\047/, "", file); keep = (file ~ /^src\/[^\/]+\.c$/); next }
	!keep { next }
	/^Lines executed:/ { split($0, a, /[:% ]+/); lines[file] = sprintf("%6.1f%% of %4d", a[3], a[5]) }
	/^Taken at least once:/ { split($0, a, /[:% ]+/); br[file] = sprintf("%6.1f%% of %4d", a[5], a[7]) }
	/^No branches/ { br[file] = "    (no branches)" }
	END {
		for (f in lines)
			printf "%-20s %-16s %-16s\n", f, lines[f], br[f]
	}' "$OUT_DIR/gcov.log" | LC_ALL=C sort >"$OUT_DIR/summary.txt"
printf '%-20s %-16s %-16s\n' file lines branches
cat "$OUT_DIR/summary.txt"

echo "== error paths never run (file:line: source [what accounts for it])"
for f in "${files[@]}"; do
	g=$OUT_DIR/${f##*/}.gcov
	[[ -f $g ]] || { echo "${f}: no counts"; continue; }
	awk -F: -v file="$f" -v re="$ERROR_PATH_RE" '
		function why(s) {
			if (s ~ /not reached:/) return "not reached"
			if (s ~ /untested:/) return "untested"
			return ""
		}
		# source lines only ("COUNT:LINE:text"), not gcov -b branch/call lines
		!/^ *[^:]+: *[0-9]+:/ { next }
		{
			src = $0
			sub(/^[^:]*:[^:]*:/, "", src)
			w = why(src)
			if (w == "")
				w = prev1
			if (w == "")
				w = prev2
			if ($1 ~ /#####/ && src ~ re) {
				gsub(/^[ \t]+/, "", src)
				printf "%s:%d: %s [%s]\n", file, $2 + 0, src, (w == "" ? "NO TEST, NO COMMENT" : w)
			}
			prev2 = prev1
			prev1 = why(src)
		}' "$g"
done | tee "$OUT_DIR/error-paths.txt"

exit "$rc"
