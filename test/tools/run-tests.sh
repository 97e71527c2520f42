#!/usr/bin/env bash
# test/tools/run-tests.sh: run every test suite of ddl_notify against the
# installed extension (`make test` builds and installs it first).
#
# Suites, in this order, each only when it has tests:
#   pg_regress  sql/*.sql except sql/ddl_notify*.sql, sorted by name; expected/
#               server settings: test/regress.conf
#   isolation   test/specs/*.spec; test/expected/; settings: test/isolation.conf
#   tap         test/t/*.pl with prove and PostgreSQL::Test::Cluster, run from
#               the top of the tree; each file starts its own servers
#
# Rules:
# - The suites never run in the repository: the working tree (without .git) is
#   copied into a fresh mktemp -d directory. As root, the copy belongs to the
#   postgres OS user and the suites run as that user, because initdb and
#   postgres refuse root; otherwise they run as the caller.
# - pg_regress and isolation count one per test file, read from their per-test
#   "ok"/"FAILED" lines; TAP counts one per assertion ("ok N"/"not ok N").
#   A suite that cannot start, a test that reports nothing, a TAP file that
#   dies, bails out or stops short of its plan: each counts as a failure.
#   Finding no tests at all is a failure too.
# - One line per suite, then the last line of output is exactly
#   "N passed, M failed"; the exit status is 0 only when M is 0.
# - On failure the diffs, results, server logs and TAP logs of the failed
#   suites go to test/results/ (gitignored, emptied at every run), and the
#   start of each diff is printed so a CI log shows what failed.
# - Nothing survives the run: on any exit, interrupt included, the test
#   processes are ended, any server left in the copy is stopped, and the copy
#   is removed.
#
# Environment: ONLY, an extended regular expression: only the tests whose
# name (sql/NAME.sql, test/specs/NAME.spec, test/t/NAME.pl) matches it run,
# for work on one test; a suite with none left is skipped, and a run that
# selects nothing at all fails.  SUITE_TIMEOUT, seconds per suite or TAP file (default 1800);
# PG_TEST_TIMEOUT_DEFAULT and PG_TEST_NOCLEAN as PostgreSQL's TAP modules read
# them.
set -euo pipefail
shopt -s nullglob
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"

read -r -a SUITES <<<"${TEST_SUITES:-pg_regress isolation tap}"
export TAP_DIR=${TAP_DIR:-test/t}
export SUITE_TIMEOUT=${SUITE_TIMEOUT:-1800}

# stop_servers DIR: stop every server whose postmaster.pid lies under DIR.
stop_servers()
{
	local dir=$1 pidfile pid
	while IFS= read -r pidfile; do
		pid=$(head -n 1 "$pidfile" 2>/dev/null || true)
		[[ $pid =~ ^[0-9]+$ ]] || continue
		kill -0 "$pid" 2>/dev/null || continue
		[[ $(ps -o comm= -p "$pid" 2>/dev/null) == postgres* ]] || continue
		echo "run-tests.sh: stopping the server left running in ${pidfile%/postmaster.pid}"
		kill_postmaster "${pidfile%/postmaster.pid}"
	done < <(find "$dir" -name postmaster.pid 2>/dev/null)
}

# ---------------------------------------------------------------------------
# The inner part: runs inside the copy (REPO is the copy), as the
# unprivileged user. It writes one line per suite to $WORK/counts:
# "SUITE PASSED FAILED" or "SUITE skip REASON", then "done".
# ---------------------------------------------------------------------------

record()
{
	printf '%s %s %s\n' "$1" "$2" "$3" >>"$WORK/counts"
	printf '%s: %s passed, %s failed\n' "$1" "$2" "$3"
}

record_skip()
{
	printf '%s skip %s\n' "$1" "$2" >>"$WORK/counts"
	printf '%s: skipped (%s)\n' "$1" "$2"
}

# count_results LOG: print "PASSED FAILED" counted from the per-test lines of
# pg_regress or pg_isolation_regress: "test NAME ... ok" (PostgreSQL 15 and
# older; "     NAME ... ok" inside a parallel group) or "ok 1 - NAME" (16+).
count_results()
{
	awk '
		/^(test +| +)[^ ]+ +\.\.\. +ok( |$)/			{ p++; next }
		/^(test +| +)[^ ]+ +\.\.\. +(FAILED|failed)/	{ f++; next }
		/^ok +[0-9]+ +[-+] /							{ p++; next }
		/^not ok +[0-9]+ +[-+] /						{ f++; next }
		END { print p + 0, f + 0 }' "$1"
}

# run_driver SUITE DRIVER INPUTDIR CONF DBNAME TEST...: one pg_regress-style
# run with its own temporary instance.
run_driver()
{
	local suite=$1 driver=$2 inputdir=$3 conf=$4 dbname=$5
	shift 5
	local tests=("$@") n=$# out=$OUT/$suite t rc p f

	mkdir -p "$out" "$inputdir/expected"
	for t in "${tests[@]}"; do
		if [[ ! -f $inputdir/expected/$t.out ]]; then
			echo "$suite: ${inputdir#./}/expected/$t.out is missing, so $t fails;" \
				"its output will be in test/results/$suite/results/$t.out"
			: >"$inputdir/expected/$t.out"
		fi
	done

	echo "== $suite: $n test$( ((n == 1)) || echo s)"
	set +e
	timeout -k 30 "$SUITE_TIMEOUT" "$driver" \
		--temp-instance="$WORK/inst/$suite" \
		--temp-config="$conf" \
		--bindir="$PG_BINDIR" \
		--inputdir="$inputdir" \
		--outputdir="$out" \
		--dbname="$dbname" \
		--no-locale --encoding=UTF8 \
		"${tests[@]}" </dev/null 2>&1 | tee "$out/run.log"
	rc=${PIPESTATUS[0]}
	set -e
	((rc != 124)) || echo "$suite: timed out after $SUITE_TIMEOUT s (SUITE_TIMEOUT)"
	stop_servers "$WORK/inst/$suite"

	read -r p f < <(count_results "$out/run.log")
	if ((p + f < n)); then
		echo "$suite: $((n - p - f)) of $n tests reported no result" \
			"(${driver##*/} exited with status $rc)"
		f=$((n - p))
	fi
	if ((rc != 0 && f == 0)); then
		((rc == 124)) || echo "$suite: ${driver##*/} exited with status $rc"
		f=1
	fi
	record "$suite" "$p" "$f"
}

# run_tap NAME...: prove each test/t/NAME.pl on its own, count its assertions.
run_tap()
{
	local out=$OUT/tap file name rc p f plan sum_p=0 sum_f=0

	mkdir -p "$out"
	# Where the TAP modules put data directories and logs: 15 and 16 read
	# TESTDIR (then use its tmp_check/ and tmp_check/log/), 17+ read
	# TESTDATADIR and TESTLOGDIR; the same places either way.
	export TESTDIR=$out TESTDATADIR=$out/tmp_check TESTLOGDIR=$out/tmp_check/log
	export PG_REGRESS=$PGXS_TEST/regress/pg_regress
	unset TEMP_CONFIG
	echo "== tap: $# file$( (($# == 1)) || echo s)"
	for name in "$@"; do
		file=$TAP_DIR/$name.pl
		set +e
		timeout -k 30 "$SUITE_TIMEOUT" prove -v --merge -I "$PGXS_TEST/perl" -I "$TAP_DIR" -I test/t \
			"$file" </dev/null 2>&1 | tee "$out/prove_$name.log"
		rc=${PIPESTATUS[0]}
		set -e
		((rc != 124)) || echo "tap: $file timed out after $SUITE_TIMEOUT s (SUITE_TIMEOUT)"
		stop_servers "$out"

		# Top-level TAP lines only: subtests are indented. A TODO failure
		# is expected, as prove counts it.
		read -r p f plan < <(awk '
			/^ok [0-9]+/		{ p++ }
			/^not ok [0-9]+/	{ if ($0 ~ /# *TODO/) p++; else f++ }
			match($0, /(^|\.\. )1\.\.[0-9]+/) {
				s = substr($0, RSTART, RLENGTH); sub(/.*1\.\./, "", s); plan = s
			}
			END { print p + 0, f + 0, plan + 0 }' "$out/prove_$name.log")
		if ((plan > p + f)); then
			echo "tap: $file ran $((p + f)) of its $plan planned tests"
			f=$((f + plan - p - f))
		fi
		if ((rc != 0 && f == 0)); then
			((rc == 124)) ||
				echo "tap: $file failed without a failing assertion (died or bailed out; prove status $rc)"
			f=1
		fi
		((f == 0)) || echo "$name" >>"$WORK/tap_failed"
		sum_p=$((sum_p + p))
		sum_f=$((sum_f + f))
	done
	record tap "$sum_p" "$sum_f"
}

# wanted SUITE: SUITE is one of those this run is for (TEST_SUITES).
wanted()
{
	[[ " ${SUITES[*]} " == *" $1 "* ]]
}

# names_of GLOB SUFFIX: sorted base names of the files matching GLOB.
names_of()
{
	local f
	for f in $1; do
		f=${f##*/}
		printf '%s\n' "${f%"$2"}"
	done | LC_ALL=C sort
}

inner_main()
{
	WORK=$1
	OUT=$WORK/out
	cd "$REPO"
	pg_paths
	unset_pg_env
	export TMPDIR=$WORK/tmp
	export PATH=$PG_BINDIR:$PATH

	local regress=() specs=() taps=()
	! wanted pg_regress || mapfile -t regress < <(names_of 'sql/*.sql' .sql | grep -v '^ddl_notify')
	! wanted isolation || mapfile -t specs < <(names_of 'test/specs/*.spec' .spec)
	! wanted tap || mapfile -t taps < <(names_of "$TAP_DIR/*.pl" .pl)
	if [[ -n ${ONLY:-} ]]; then
		mapfile -t regress < <(printf '%s\n' "${regress[@]}" | grep -E -- "$ONLY" || true)
		mapfile -t specs < <(printf '%s\n' "${specs[@]}" | grep -E -- "$ONLY" || true)
		mapfile -t taps < <(printf '%s\n' "${taps[@]}" | grep -E -- "$ONLY" || true)
	fi

	if ! wanted pg_regress; then
		:
	elif ((${#regress[@]})); then
		run_driver pg_regress "$PGXS_TEST/regress/pg_regress" . \
			test/regress.conf contrib_regression "${regress[@]}"
	else
		record_skip pg_regress "no sql/*.sql tests"
	fi
	if ! wanted isolation; then
		:
	elif ((${#specs[@]})); then
		run_driver isolation "$PGXS_TEST/isolation/pg_isolation_regress" test \
			test/isolation.conf isolation_regression "${specs[@]}"
	else
		record_skip isolation "no test/specs/*.spec"
	fi
	if ! wanted tap; then
		:
	elif ((${#taps[@]})); then
		run_tap "${taps[@]}"
	else
		record_skip tap "no $TAP_DIR/*.pl"
	fi
	echo 'done' >>"$WORK/counts"
}

# ---------------------------------------------------------------------------
# The outer part: makes the copy, runs the inner part, reports, cleans up.
# ---------------------------------------------------------------------------

# The processes of session $1 (the inner run and everything it started,
# except servers, which pg_ctl starts in sessions of their own).
session_pids()
{
	ps -eo pid=,sid= | awk -v sid="$1" '$2 == sid { print $1 }'
}

# End the inner run if anything of it is still going.
stop_inner()
{
	local pids
	[[ -n ${INNER_PID:-} ]] || return 0
	if [[ -z ${INNER_SESSION:-} ]]; then
		kill -TERM "$INNER_PID" 2>/dev/null || true
		return 0
	fi
	pids=$(session_pids "$INNER_PID")
	[[ -n $pids ]] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null || true
	for _ in {1..25}; do
		pids=$(session_pids "$INNER_PID")
		[[ -n $pids ]] || return 0
		sleep 0.2
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}

cleanup()
{
	local rc=$?
	trap - EXIT INT TERM HUP
	if [[ -n ${WORK:-} && -d $WORK ]]; then
		stop_inner
		stop_servers "$WORK"
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# Copy what the failed suites left (not the data directories) to test/results/
# and show the start of each diff, or the end of the logs when there is none.
report_failures()
{
	local suite=$1 src=$OUT/$1 dst=$REPO/test/results/$1 f name
	[[ -d $src ]] || return 0
	mkdir -p "$dst"
	tar -C "$src" --exclude='t_*_data' --exclude=portlock -cf - . | tar -C "$dst" -xf - || true
	case $suite in
	tap)
		[[ -f $WORK/tap_failed ]] || return 0
		while IFS= read -r name; do
			f=$dst/tmp_check/log/regress_log_$name
			[[ -f $f ]] || continue
			echo "== tap: last 100 lines of ${f#"$REPO"/}"
			tail -n 100 "$f"
		done <"$WORK/tap_failed"
		;;
	*)
		if [[ -s $dst/regression.diffs ]]; then
			# Name the files as they are in the repository, not in the copy.
			sed -i -e "s#$WORK/src/##g" -e "s#$OUT/#test/results/#g" "$dst/regression.diffs"
			echo "== $suite: ${dst#"$REPO"/}/regression.diffs, the first 150 lines of each test's diff:"
			awk '
				/^diff / { n = 0 }
				{ n++ }
				n <= 150 { print; next }
				n == 151 { print "[... more lines in the file ...]" }' "$dst/regression.diffs"
		else
			# The server log says why a temporary instance did not start;
			# initdb's log only matters when there is no server log.
			f=$dst/log/postmaster.log
			[[ -s $f ]] || f=$dst/log/initdb.log
			if [[ -s $f ]]; then
				echo "== $suite: no diffs; last 40 lines of ${f#"$REPO"/}"
				tail -n 40 "$f"
			fi
		fi
		;;
	esac
}

outer_main()
{
	local user inner_rc suite line p f total_p=0 total_f=0 ran=0 summary=() failed=()

	pg_paths
	[[ -x $PGXS_TEST/regress/pg_regress ]] ||
		die "pg_regress not found under $PGXS_TEST; run test/tools/deps.sh"
	user=$(pg_run_user)

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddl_notify_test.XXXXXX")
	OUT=$WORK/out
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP

	mkdir -p "$WORK/src" "$OUT" "$WORK/inst" "$WORK/tmp"
	tar -C "$REPO" --exclude=./.git --exclude=./test/results --exclude='./tmp_check*' \
		--exclude=./results --exclude=./output_iso --exclude=./log \
		--exclude=./test/pgregress/cache -cf - . |
		tar -C "$WORK/src" -xf -
	: >"$WORK/counts"
	if is_root; then
		chown -R "$user": "$WORK"
	fi
	rm -rf "$REPO/test/results"

	echo "== running the test suites as OS user $user in $WORK"
	cd "$WORK"
	local cmd=(env PATH="$PG_BINDIR:$PATH" bash "$WORK/src/test/tools/run-tests.sh" --inner "$WORK")
	if is_root; then
		cmd=(runuser -u "$user" -- "${cmd[@]}")
	fi
	# A session of its own, so that cleanup can end all of it.
	INNER_SESSION=
	if command -v setsid >/dev/null 2>&1; then
		cmd=(setsid "${cmd[@]}")
		INNER_SESSION=1
	fi
	"${cmd[@]}" </dev/null &
	INNER_PID=$!
	inner_rc=0
	wait "$INNER_PID" || inner_rc=$?
	# Nothing may outlive the run, and nothing may print after the summary.
	stop_inner
	stop_servers "$WORK"

	for suite in "${SUITES[@]}"; do
		line=$(grep -m 1 "^$suite " "$WORK/counts" || true)
		if [[ -z $line ]]; then
			summary+=("$suite: not run")
			continue
		fi
		read -r _ p f <<<"$line"
		if [[ $p == skip ]]; then
			summary+=("$suite: skipped (${line#"$suite skip "})")
			continue
		fi
		ran=$((ran + 1))
		summary+=("$suite: $p passed, $f failed")
		total_p=$((total_p + p))
		total_f=$((total_f + f))
		((f == 0)) || failed+=("$suite")
	done
	if ! grep -qx 'done' "$WORK/counts"; then
		summary+=("run-tests.sh: the test run stopped before it finished (status $inner_rc)")
		total_f=$((total_f + 1))
	elif ((ran == 0)); then
		summary+=("run-tests.sh: no tests found (sql/*.sql, test/specs/*.spec, $TAP_DIR/*.pl)")
		total_f=$((total_f + 1))
	fi

	for suite in "${failed[@]}"; do
		report_failures "$suite"
	done

	echo "== summary"
	printf '%s\n' "${summary[@]}"
	if ((${#failed[@]})); then
		echo "outputs of the failed suites: $REPO/test/results/"
	fi
	echo "$total_p passed, $total_f failed"
	((total_f == 0))
}

if [[ ${1:-} == --inner ]]; then
	inner_main "$2"
else
	outer_main
fi
