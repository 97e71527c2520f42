#!/usr/bin/env bash
# test/pgregress/run.sh: PostgreSQL's own regression suite, run with and
# without ddl_notify, must give the same results (G0). `make test-pg-regress`.
#
# What it does, in this order:
# 1. Source.  The installed server's Debian source package (postgresql-MAJOR)
#    is fetched with `apt-get source` through a private apt configuration
#    under the cache directory: the machine's own deb entries
#    (/etc/apt/sources.list, /etc/apt/sources.list.d/*.list and *.sources)
#    turned into deb-src entries, with their own lists and cache directories.
#    Nothing of the system's apt state changes.  The installed version is
#    asked for first; if the mirror no longer has it, the newest source of the
#    same major version that it has (the regression tests of one major version
#    change only with bug fixes, and both runs use the same ones).  dpkg-dev
#    (dpkg-source) is installed if missing, as root; otherwise the script says
#    what to install and stops.
# 2. regress.so, the suite's C helper functions, built from that source's
#    src/test/regress/regress.c with PGXS against the installed server, and
#    refint.so and autoinc.so from its contrib/spi (the triggers test loads
#    them from the same directory, as upstream's makefile arranges).
#    Source and build stay in the cache directory (gitignored) between runs.
# 3. Two runs of parallel_schedule with pg_regress, each in a temporary
#    instance of its own, as the postgres OS user (initdb refuses root):
#      plain       the suite as it is;
#      ddl_notify  shared_preload_libraries = 'ddl_notify', CREATE EXTENSION
#                  ddl_notify in the regression database (pg_regress
#                  --load-extension), and before the schedule a test of ours
#                  (ddl_notify_setup.sql) that subscribes a handler recording
#                  every event it gets; after it, ddl_notify_check.sql, which
#                  waits until every recorded event is delivered and shows that
#                  the subscriber saw no error, handled each event exactly
#                  once, and that the queue is empty.  The workers deliver
#                  while the suite runs, as they would for a user.
# 4. Comparison, test by test.  A test of the ddl_notify run that pg_regress
#    passes (its output is one of upstream's expected outputs) is the same.
#    A test it fails must have, in the plain run, the same output, or every
#    changed line of the difference between the two outputs must match an
#    entry of allowed-differences.txt for that test (each entry gives its
#    reason).  Anything else is a failure: a difference nobody has explained.
#    A crash (PANIC, a terminated server process) in either server log is a
#    failure too.
# 5. The last line is "N passed, M failed" (one per test of the schedule,
#    plus the setup and check tests, plus the server logs); the exit status
#    is 0 only when M is 0.  Differences, diffs and server logs go to
#    test/results/pgregress/ (gitignored).
#
# Environment: PGREGRESS_CACHE (default test/pgregress/cache), PG_CONFIG (see
# test/tools/pg-env.sh), PGREGRESS_KEEP=1 keeps the work directory.
set -euo pipefail
shopt -s nullglob
# shellcheck source=../tools/pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/pg-env.sh"

HERE=$REPO/test/pgregress
CACHE=${PGREGRESS_CACHE:-$HERE/cache}
RESULTS=$REPO/test/results/pgregress
START=$SECONDS

say() { printf '== %s\n' "$*"; }
phase_done() { printf '   (%d s so far)\n' $((SECONDS - START)); }
# steps 1 and 2 (find_source, build_regress_so): shared with test/replay/run.sh
# shellcheck source=source.sh
source "$HERE/source.sh"

# ---------------------------------------------------------------------------
# 3. the two runs
# ---------------------------------------------------------------------------

prepare_work()
{
	local rsrc=$SRC/src/test/regress
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddl_notify_pgregress.XXXXXX")
	mkdir -p "$WORK/input" "$WORK/lib"
	cp -R "$rsrc/sql" "$rsrc/expected" "$rsrc/data" "$rsrc/parallel_schedule" "$rsrc/resultmap" "$WORK/input/"
	cp "$HERE/ddl_notify_setup.sql" "$HERE/ddl_notify_check.sql" "$WORK/input/sql/"
	cp "$HERE/expected/ddl_notify_setup.out" "$HERE/expected/ddl_notify_check.out" "$WORK/input/expected/"
	cp "${REGRESS_SO[@]}" "$WORK/lib/"
	{
		echo "test: ddl_notify_setup"
		grep -v '^ddl_notify' "$WORK/input/parallel_schedule"
		echo "test: ddl_notify_check"
	} >"$WORK/ddl_notify_schedule"
	cp "$WORK/input/parallel_schedule" "$WORK/plain_schedule"
	cp "$HERE/server.conf" "$WORK/plain.conf"
	{
		cat "$HERE/server.conf"
		echo "shared_preload_libraries = 'ddl_notify'"
	} >"$WORK/ddl_notify.conf"
	is_root && chown -R "$(pg_run_user)": "$WORK"
	return 0
}

# run_suite NAME EXTRA_ARGS...: one pg_regress run in its own temporary instance.
run_suite()
{
	local name=$1 t0=$SECONDS rc
	shift
	say "run '$name': parallel_schedule with pg_regress"
	set +e
	run_as "$(pg_run_user)" env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE -u PGOPTIONS \
		"$PGXS_TEST/regress/pg_regress" \
		--temp-instance="$WORK/inst_$name" \
		--temp-config="$WORK/$name.conf" \
		--bindir="$PG_BINDIR" \
		--inputdir="$WORK/input" \
		--outputdir="$WORK/$name" \
		--dlpath="$WORK/lib" \
		--schedule="$WORK/${name}_schedule" \
		--max-concurrent-tests=20 \
		--no-locale --encoding=UTF8 \
		"$@" </dev/null >"$WORK/$name.log" 2>&1
	rc=$?
	set -e
	printf '   run %s: pg_regress exit status %d, %d s, %s\n' "$name" "$rc" $((SECONDS - t0)) \
		"$(grep -E '^[ #]*(All|[0-9]+ of) [0-9]+ tests' "$WORK/$name.log" | tr -d '=' | sed 's/^[ #]*//' || true)"
	eval "RC_$name=$rc"
}

# status FILE: "NAME ok|FAILED" per test, from pg_regress's output: up to
# 15 "test NAME ... ok" ("     NAME ... ok" inside a parallel group), from
# 16 on TAP-like "ok 12 - NAME  30 ms" or "not ok 12 + NAME  30 ms" (+ in a
# parallel group).
statuses()
{
	awk '
		/^(test +| +)[^ ]+ +\.\.\. +ok( |$)/			{ sub(/^test +/, ""); sub(/^ +/, ""); print $1, "ok"; next }
		/^(test +| +)[^ ]+ +\.\.\. +(FAILED|failed)/	{ sub(/^test +/, ""); sub(/^ +/, ""); print $1, "FAILED"; next }
		/^ok +[0-9]+ +[-+] +[^ ]+/						{ print $4, "ok"; next }
		/^not ok +[0-9]+ +[-+] +[^ ]+/					{ print $5, "FAILED"; next }
	' "$1"
}

# ---------------------------------------------------------------------------
# 4. the comparison
# ---------------------------------------------------------------------------

# The allow-list, as "TEST<tab>REGEX" lines (reasons are checked to exist).
read_allow_list()
{
	awk -v file="$HERE/allowed-differences.txt" '
		function flush() {
			if (test != "") {
				if (match_re == "" || reason == "") {
					printf "%s: the entry of test %s needs a match: and a reason: line\n", file, test > "/dev/stderr"
					bad = 1
				}
				print test "\t" match_re
			}
			test = ""; match_re = ""; reason = ""
		}
		/^[[:space:]]*#/	{ next }
		/^[[:space:]]*$/	{ flush(); next }
		/^test:/			{ flush(); test = $2; next }
		/^match:/			{ sub(/^match:[[:space:]]*/, ""); match_re = $0; next }
		/^reason:/			{ sub(/^reason:[[:space:]]*/, ""); reason = $0; next }
		/^[[:space:]]+/		{ next }	# continued reason
		{ printf "%s: cannot read line: %s\n", file, $0 > "/dev/stderr"; bad = 1 }
		END { flush(); exit bad }' "$HERE/allowed-differences.txt" >"$WORK/allow.tsv"
}

# changed_lines A B: the lines that differ between two outputs, each with its
# "-" or "+" sign.
changed_lines()
{
	diff -U0 "$1" "$2" | grep -E '^[-+]' | grep -vE '^(\+\+\+|---) ' || true
}

compare()
{
	local name st_plain st_ext plain_out ext_out line re unexplained
	PASSED=0
	FAILED=0
	mkdir -p "$RESULTS"
	: >"$RESULTS/differences.txt"
	: >"$WORK/allow_used"
	statuses "$WORK/plain.log" >"$WORK/plain.status"
	statuses "$WORK/ddl_notify.log" >"$WORK/ddl_notify.status"

	# our own two tests
	for name in ddl_notify_setup ddl_notify_check; do
		st_ext=$(awk -v t="$name" '$1 == t { print $2 }' "$WORK/ddl_notify.status")
		if [[ $st_ext == ok ]]; then
			PASSED=$((PASSED + 1))
		else
			FAILED=$((FAILED + 1))
			echo "FAIL $name: ${st_ext:-no result} (see regression.diffs of the ddl_notify run)" |
				tee -a "$RESULTS/differences.txt"
		fi
	done

	while read -r name st_plain; do
		st_ext=$(awk -v t="$name" '$1 == t { print $2 }' "$WORK/ddl_notify.status")
		plain_out=$WORK/plain/results/$name.out
		ext_out=$WORK/ddl_notify/results/$name.out
		if [[ $st_ext == ok ]]; then
			PASSED=$((PASSED + 1))
			continue
		fi
		if [[ -z $st_ext || ! -f $ext_out || ! -f $plain_out ]]; then
			FAILED=$((FAILED + 1))
			echo "FAIL $name: no output to compare (plain: $st_plain, ddl_notify: ${st_ext:-no result})" |
				tee -a "$RESULTS/differences.txt"
			continue
		fi
		if cmp -s "$plain_out" "$ext_out"; then
			# the same failure without ddl_notify: this machine, not us
			PASSED=$((PASSED + 1))
			echo "same $name: fails against upstream's expected output in both runs, identically" \
				>>"$RESULTS/differences.txt"
			continue
		fi
		unexplained=0
		while IFS= read -r line; do
			local ok=0
			while IFS=$'\t' read -r t re; do
				[[ $t == "$name" ]] || continue
				if printf '%s\n' "${line:1}" | grep -qE -- "$re"; then
					ok=1
					printf '%s\t%s\n' "$t" "$re" >>"$WORK/allow_used"
					break
				fi
			done <"$WORK/allow.tsv"
			((ok)) || unexplained=$((unexplained + 1))
		done < <(changed_lines "$plain_out" "$ext_out")
		{
			echo "--- $name: plain ($st_plain) against ddl_notify ($st_ext)"
			diff -u "$plain_out" "$ext_out" | sed 1,2d || true
		} >>"$RESULTS/differences.diff"
		if ((unexplained == 0)); then
			PASSED=$((PASSED + 1))
			echo "allowed $name: every changed line is in allowed-differences.txt" >>"$RESULTS/differences.txt"
		else
			FAILED=$((FAILED + 1))
			echo "FAIL $name: $unexplained changed line(s) not in allowed-differences.txt:" |
				tee -a "$RESULTS/differences.txt"
			diff -u "$plain_out" "$ext_out" | sed 1,2d | head -n 60 | tee -a "$RESULTS/differences.txt" || true
		fi
	done <"$WORK/plain.status"

	# crashes
	local log
	for name in plain ddl_notify; do
		log=$WORK/$name/log/postmaster.log
		if [[ -f $log ]] && grep -qE 'PANIC|TRAP:|was terminated by signal|server process .* exited with exit code [^0]' "$log"; then
			FAILED=$((FAILED + 1))
			echo "FAIL server log of run '$name': a crash" | tee -a "$RESULTS/differences.txt"
			grep -E 'PANIC|TRAP:|was terminated by signal|exited with exit code' "$log" | head -n 20 |
				tee -a "$RESULTS/differences.txt"
		else
			PASSED=$((PASSED + 1))
		fi
	done

	while IFS=$'\t' read -r t re; do
		grep -qFx -- "$(printf '%s\t%s' "$t" "$re")" "$WORK/allow_used" ||
			echo "   note: allowed-differences.txt entry ($t: $re) matched nothing in this run"
	done <"$WORK/allow.tsv"
}

# ---------------------------------------------------------------------------

main()
{
	local rc=0
	pg_paths
	[[ -x $PGXS_TEST/regress/pg_regress ]] || die "pg_regress not found; run test/tools/deps.sh"
	unset_pg_env

	find_source
	say "source: postgresql-$PG_MAJOR $SRC_VERSION in ${SRC#"$REPO"/}; server: $("$PG_CONFIG" --version)"
	build_regress_so
	phase_done

	prepare_work
	trap 'if [[ -z ${PGREGRESS_KEEP:-} ]]; then rm -rf "$WORK"; else echo "work directory kept: $WORK"; fi' EXIT
	read_allow_list || die "allowed-differences.txt is malformed"

	run_suite plain
	phase_done
	run_suite ddl_notify --load-extension=ddl_notify
	phase_done

	rm -rf "$RESULTS"
	mkdir -p "$RESULTS"
	compare
	for name in plain ddl_notify; do
		mkdir -p "$RESULTS/$name"
		cp "$WORK/$name.log" "$RESULTS/$name/pg_regress.log"
		[[ -f $WORK/$name/regression.diffs ]] && cp "$WORK/$name/regression.diffs" "$RESULTS/$name/"
		[[ -f $WORK/$name/log/postmaster.log ]] && cp "$WORK/$name/log/postmaster.log" "$RESULTS/$name/"
	done
	[[ -f $WORK/ddl_notify/ddl_notify_counts.txt ]] &&
		sed 's/^/   /' "$WORK/ddl_notify/ddl_notify_counts.txt"
	say "differences and logs: ${RESULTS#"$REPO"/}/ (took $((SECONDS - START)) s)"
	((FAILED == 0)) || rc=1
	echo "$PASSED passed, $FAILED failed"
	return $rc
}

main "$@"
