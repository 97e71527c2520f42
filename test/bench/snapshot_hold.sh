#!/usr/bin/env bash
# test/bench/snapshot_hold.sh: does an old snapshot make delivery dearer the
# longer it is held? (`make bench-snapshot` builds and installs the extension
# first, then runs this; issue 38, docs/performance.md "What is left".)
#
# A throwaway cluster with the extension preloaded, one database, 2 no-op
# subscribers, delivery by the worker pool (never CALL deliver).  pgbench
# makes about SNAPSHOT_RATE events a second (one COMMENT ON TABLE per
# transaction, rate-limited with -R) for the whole run:
#   before  SNAPSHOT_BEFORE seconds, no old snapshot: the baseline;
#   hold    a REPEATABLE READ session takes a snapshot and keeps it (it sits
#           in pg_sleep, as pg_dump, a long report or an idle transaction
#           would) for SNAPSHOT_HOLD seconds;
#   after   SNAPSHOT_AFTER seconds once it has ended.
# Every SNAPSHOT_INTERVAL seconds one line, its columns:
#   elapsed     seconds since the start, at the end of the interval
#   phase       before, hold or after
#   delivered   deliveries in the interval (the sum of the subscribers'
#               delivered counters in subscriber_status, its increase)
#   cpu_ms      the CPU the database's ddl_notify workers used in the
#               interval (utime + stime from /proc/PID/stat of every process
#               pg_stat_activity lists as a "ddl_notify worker")
#   ms/1000     cpu_ms per 1,000 deliveries
#   status_*    of `SELECT * FROM ddl_notify.subscriber_status`,
#   wait_*      of `SELECT ddl_notify.wait_for_delivery('10s')`, each read
#               in its own sessions (so no session start-up is counted),
#               SNAPSHOT_CALLS calls a line after one call that warms the
#               session's caches:
#     _ms       the median time of the calls (psql's \timing: the round
#               trip, a wait included)
#     _blk      the median of the shared buffers one call touches (Shared
#               Hit + Shared Read Blocks of the top plan node of EXPLAIN
#               (ANALYZE, BUFFERS, FORMAT JSON) of the call: its execution
#               and every block it reads, the catalogs' included, its
#               planning not), over SNAPSHOT_CALLS runs in a second session
#     _us       the backend's CPU per call in microseconds: its on-CPU time
#               (/proc/self/schedstat, nanoseconds, read by the backend
#               itself with pg_read_file just before the first timed call
#               and just after the last) over the calls, divided by their
#               number: the mean, and what a call costs, not how long it
#               slept (wait_for_delivery sleeps 10 ms between looks when a
#               delivery is under way at the call, and pgbench never stops;
#               the looks themselves are counted)
#   ratio       after ms/1000 and after each status_ and wait_ figure: its
#               ratio to the baseline ("-" in the before phase, "n/a"
#               without a figure)
#   and for context the queue's live and dead rows (pg_stat_user_tables)
#   and its heap and index sizes, the number of workers, the load average.
# The baseline is the before phase without its first interval (start-up,
# cold caches): the CPU per 1,000 deliveries over those intervals together;
# for the medians, the median of all their calls pooled; for the CPU per
# call, the mean of all their calls.  Last, a summary: the baselines, and
# the highest ratio during the hold of each of the seven, beside the goal
# (within 2x).  One 10 ms poll of wait_for_delivery in a 0.1 ms call makes
# a single time 100x, hence medians of many calls; the block counts do not
# depend on the machine's load, the CPU per call does a little (caches).
#
# Rules: as the other benches (lib.sh): prints figures, never fails for a
# missed goal; the cluster runs as the postgres OS user when run as root,
# is stopped and removed on exit (BENCH_KEEP=1 keeps its directory).  The
# machine may be shared: the load average is printed on every line.
#
# Environment: PG_CONFIG (which server, as every bench), SNAPSHOT_HOLD
# (default 600), SNAPSHOT_BEFORE (default 90), SNAPSHOT_AFTER (default 120),
# SNAPSHOT_INTERVAL (default 30), SNAPSHOT_RATE (events/s, default 1000),
# SNAPSHOT_TABLES (the tables the COMMENTs go to, default 1000),
# SNAPSHOT_CALLS (calls of each function a line, default 25),
# BENCH_RESULTS (the series and the summary are written there too).

set -euo pipefail
# lib.sh: followed by `shellcheck -x` from any directory, not by plain shellcheck
# shellcheck source=SCRIPTDIR/lib.sh disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HOLD=${SNAPSHOT_HOLD:-600}
BEFORE=${SNAPSHOT_BEFORE:-90}
AFTER=${SNAPSHOT_AFTER:-120}
INTERVAL=${SNAPSHOT_INTERVAL:-30}
RATE=${SNAPSHOT_RATE:-1000}
TABLES=${SNAPSHOT_TABLES:-1000}
CALLS=${SNAPSHOT_CALLS:-25}
GOAL=2
HZ=$(getconf CLK_TCK)
DB=snap
TOTAL=$((BEFORE + HOLD + AFTER))

bench_init
C=snapshot
cluster_start $C "shared_preload_libraries = 'ddl_notify'
ddl_notify.worker_idle_timeout = '1h'
synchronous_commit = off
max_connections = 50"

q $C postgres "CREATE DATABASE $DB" >/dev/null
psql_c $C $DB -c "CREATE EXTENSION ddl_notify" \
	-c "DO \$\$BEGIN FOR i IN 1..$TABLES LOOP EXECUTE format('CREATE TABLE public.bench_target%s ()', i); END LOOP; END\$\$" \
	-c "CREATE FUNCTION public.noop(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS 'BEGIN END'" \
	-c "SELECT ddl_notify.subscribe('s' || i, 'public.noop(ddl_notify.event)') FROM generate_series(1, 2) i" \
	-c "ALTER DATABASE $DB SET client_min_messages = error" >/dev/null 2>&1 ||
	die "could not set up database $DB"

# COMMENTs spread over TABLES tables: on one or two, every COMMENT walks the
# versions of its pg_description row that the old snapshot keeps (hundreds
# of thousands after minutes), and the load generator, not the delivery,
# slows down (PostgreSQL's own cost: docs/performance.md)
PGB=$(bench_file comment.pgbench)
printf '%s\n' "\\set t random(1, $TABLES)" "COMMENT ON TABLE public.bench_target:t IS 'x';" >"$PGB"
chmod 644 "$PGB"

# the first DDL starts the database's worker
q $C $DB "COMMENT ON TABLE public.bench_target1 IS 'start'" >/dev/null
q $C $DB "SELECT ddl_notify.wait_for_delivery('60s')" >/dev/null

# --- sampling -----------------------------------------------------------------
declare -A PREV_TICKS=()

# worker_ticks: TICKS = the CPU ticks the database's ddl_notify workers used
# since the previous call (a worker that started since counts from its
# start; one that ended since is lost, and printed as "workers N"
# changing).  Not in a subshell: it keeps PREV_TICKS.
WORKERS=0
TICKS=0
worker_ticks()
{
	local pid t sum=0 n=0
	declare -A seen=()
	for pid in $(q $C $DB "SELECT pid FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' AND datname = '$DB'"); do
		t=$(proc_ticks "$pid")
		[[ -n $t ]] || continue
		sum=$((sum + t - ${PREV_TICKS[$pid]:-0}))
		seen[$pid]=$t
		n=$((n + 1))
	done
	PREV_TICKS=()
	for pid in "${!seen[@]}"; do
		PREV_TICKS[$pid]=${seen[$pid]}
	done
	WORKERS=$n
	TICKS=$sum
}

delivered() { q $C $DB "SELECT coalesce(sum(delivered), 0) FROM ddl_notify.subscriber_status"; }

# The backend's own CPU time so far, in ns (the first field of
# /proc/self/schedstat, read by the backend itself: pg_read_file, so the
# bench's superuser): on CPU only, never the time it slept or waited.
CPU_SQL="SELECT 'cpu ' || split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)"

# call_times SQL FILE: one session: one call of SQL that warms the
# session's caches, then CALLS calls timed by psql's \timing (FILE gets
# their times in ms, one a line), the backend's CPU read just before the
# first and just after the last; prints the backend's CPU per call in
# microseconds, the mean over the CALLS calls ("n/a" if not read).
call_times()
{
	local args=(-c "$1" -c "$CPU_SQL" -c '\timing on') i
	for ((i = 0; i < CALLS; i++)); do
		args+=(-c "$1")
	done
	args+=(-c '\timing off' -c "$CPU_SQL")
	: >"$2"
	psql_c $C $DB "${args[@]}" |
		awk -v f="$2" -v n="$CALLS" '/^Time: / { print $2 > f; next }
			/^cpu [0-9]+$/ { c[++k] = $2 }
			END { close(f); if (k == 2) printf "%.1f\n", (c[2] - c[1]) / n / 1000; else print "n/a" }'
}

# call_blocks SQL FILE: one session: one plain call of SQL that warms the
# session's caches, then CALLS runs of EXPLAIN (ANALYZE, BUFFERS, FORMAT
# JSON) SQL; FILE gets the shared buffers (hit + read) each run touched,
# one a line.
call_blocks()
{
	local x="EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) $1" args=(-c "$1") i
	for ((i = 0; i < CALLS; i++)); do
		args+=(-c "$x")
	done
	# the first "Shared Hit Blocks" and "Shared Read Blocks" of each plan
	# are its top node's (a node's own figures come before its "Plans",
	# "Planning" after "Plan"), which include every node below it
	psql_c $C $DB "${args[@]}" |
		awk '/^\[/ { h = r = "" }
			/"Shared Hit Blocks":/ && h == "" { h = $NF + 0 }
			/"Shared Read Blocks":/ && r == "" { r = $NF + 0; print h + r }' >"$2"
}

# median FILE: the median of the numbers in FILE, "n/a" if none.
median()
{
	stats <"$1" | awk '{ print ($4 > 0) ? $1 : "n/a" }'
}

# ratio A B: A / B to two decimals, "n/a" when either is not a number > 0.
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b == "nan" || b == "" || b + 0 <= 0) print "n/a"; else printf "%.2f", a / b }'
}

# higher A M: the higher of ratio A and the highest so far, M.
higher()
{
	awk -v a="$1" -v m="$2" 'BEGIN { print (a != "n/a" && a + 0 > m + 0) ? a : m }'
}

queue_info()
{
	q $C $DB "SELECT coalesce(n_live_tup, 0) || ' live, ' || coalesce(n_dead_tup, 0) || ' dead, ' ||
		pg_size_pretty(pg_relation_size('ddl_notify.event')) || ' heap, ' ||
		pg_size_pretty(pg_indexes_size('ddl_notify.event')) || ' index'
		FROM pg_stat_user_tables WHERE relid = 'ddl_notify.event'::regclass"
}

HOLDER=
hold_state=before
phase()
{
	if [[ $hold_state == hold ]] && ! kill -0 "$HOLDER" 2>/dev/null; then
		hold_state=after
	fi
	echo "$hold_state"
}

start_hold()
{
	# the snapshot is taken by the first SELECT and kept until COMMIT
	psql_c $C $DB -c "BEGIN ISOLATION LEVEL REPEATABLE READ" \
		-c "SELECT count(*) FROM ddl_notify.subscriber" \
		-c "SELECT pg_sleep($HOLD)" -c "COMMIT" >/dev/null 2>&1 &
	HOLDER=$!
	BENCH_CHILDREN+=("$HOLDER")
	for _ in $(seq 1 100); do
		[[ $(q $C $DB "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep($HOLD)' AND backend_xmin IS NOT NULL") == 1 ]] && break
		sleep 0.1
	done
	hold_state=hold
}

# --- the run ------------------------------------------------------------------
LOG=$(bench_file pgbench.log)
as_user pgbench -n -h "$BENCH_TMP/$C" -p "${BENCH_PORT[$C]}" -c 2 -j 2 -R "$RATE" -T $((TOTAL + 5)) \
	-f "$PGB" $DB >"$LOG" 2>&1 </dev/null &
PGBENCH=$!
BENCH_CHILDREN+=("$PGBENCH")

SERIES=()
line()
{
	SERIES+=("$1")
	echo "$1"
}

echo "== an old snapshot held ${HOLD} s, ~${RATE} events/s to 2 subscribers (worker pool); one line every ${INTERVAL} s, ${CALLS} calls of each function a line; $(nproc) cores"
HEAD=$(printf '%7s %-6s %9s %7s %8s %6s %9s %6s %10s %6s %9s %6s %7s %6s %8s %6s %7s %6s  %s' \
	elapsed phase delivered cpu_ms ms/1000 ratio status_ms ratio status_blk ratio status_us ratio \
	wait_ms ratio wait_blk ratio wait_us ratio "queue; workers; load")
line "$HEAD"

ST_SQL="SELECT * FROM ddl_notify.subscriber_status"
WT_SQL="SELECT ddl_notify.wait_for_delivery('10s')"
# the calls of the baseline's intervals, pooled: one file per measure
BASE_FILES=(st_ms st_blk wt_ms wt_blk)
for f in "${BASE_FILES[@]}"; do
	: >"$BENCH_TMP/base_$f"
done
T0=$(date +%s)
worker_ticks
D_PREV=$(delivered)
BASE_CPU=0 BASE_DEL=0 BASE_CPUK=''
BASE_SU_LIST=() BASE_WU_LIST=()
declare -A BASE=() MAX=()
for k in cpu st sb su wt wb wu; do
	MAX[$k]=0
done
n=0
while :; do
	n=$((n + 1))
	next=$((T0 + n * INTERVAL))
	now=$(date +%s)
	((next > now)) && sleep $((next - now))
	ph=$(phase)
	worker_ticks
	d=$(delivered)
	dd=$((d - D_PREV))
	D_PREV=$d
	cpu=$((TICKS * 1000 / HZ))
	su=$(call_times "$ST_SQL" "$BENCH_TMP/st_ms")
	wu=$(call_times "$WT_SQL" "$BENCH_TMP/wt_ms")
	call_blocks "$ST_SQL" "$BENCH_TMP/st_blk"
	call_blocks "$WT_SQL" "$BENCH_TMP/wt_blk"
	st=$(median "$BENCH_TMP/st_ms")
	sb=$(median "$BENCH_TMP/st_blk")
	wt=$(median "$BENCH_TMP/wt_ms")
	wb=$(median "$BENCH_TMP/wt_blk")
	# a reading of the counters below the previous one (seen with two
	# workers in the database, before progress.c settled each move of the
	# counts once; docs/performance.md) gives no figure for the interval: n/a
	cpuk=$(awk -v c="$cpu" -v d="$dd" 'BEGIN { if (d > 0) printf "%.2f", c * 1000 / d; else print "n/a" }')
	declare -A R=([cpu]=- [st]=- [sb]=- [su]=- [wt]=- [wb]=- [wu]=-)
	if [[ $ph == before ]]; then
		if ((n > 1)); then
			BASE_CPU=$((BASE_CPU + cpu))
			BASE_DEL=$((BASE_DEL + dd))
			for f in "${BASE_FILES[@]}"; do
				cat "$BENCH_TMP/$f" >>"$BENCH_TMP/base_$f"
			done
			BASE_SU_LIST+=("$su")
			BASE_WU_LIST+=("$wu")
		fi
	else
		if [[ -z $BASE_CPUK ]]; then
			if ((BASE_DEL == 0)); then
				die "no baseline: raise SNAPSHOT_BEFORE to at least twice SNAPSHOT_INTERVAL"
			fi
			BASE_CPUK=$(awk -v c="$BASE_CPU" -v d="$BASE_DEL" 'BEGIN { printf "%.3f", c * 1000 / d }')
			BASE[st]=$(median "$BENCH_TMP/base_st_ms")
			BASE[sb]=$(median "$BENCH_TMP/base_st_blk")
			BASE[wt]=$(median "$BENCH_TMP/base_wt_ms")
			BASE[wb]=$(median "$BENCH_TMP/base_wt_blk")
			# every reading is the mean of CALLS calls: their mean is the
			# mean of all the calls
			BASE[su]=$(printf '%s\n' "${BASE_SU_LIST[@]}" | awk '$1 != "n/a" { s += $1; k++ } END { if (k) printf "%.1f", s / k; else print "n/a" }')
			BASE[wu]=$(printf '%s\n' "${BASE_WU_LIST[@]}" | awk '$1 != "n/a" { s += $1; k++ } END { if (k) printf "%.1f", s / k; else print "n/a" }')
		fi
		R[cpu]=$(ratio "$cpuk" "$BASE_CPUK")
		R[st]=$(ratio "$st" "${BASE[st]}")
		R[sb]=$(ratio "$sb" "${BASE[sb]}")
		R[su]=$(ratio "$su" "${BASE[su]}")
		R[wt]=$(ratio "$wt" "${BASE[wt]}")
		R[wb]=$(ratio "$wb" "${BASE[wb]}")
		R[wu]=$(ratio "$wu" "${BASE[wu]}")
		if [[ $ph == hold ]]; then
			for k in "${!R[@]}"; do
				MAX[$k]=$(higher "${R[$k]}" "${MAX[$k]}")
			done
		fi
	fi
	line "$(printf '%7s %-6s %9s %7s %8s %6s %9s %6s %10s %6s %9s %6s %7s %6s %8s %6s %7s %6s  %s; %s; %s' \
		"$((next - T0))" "$ph" "$dd" "$cpu" "$cpuk" "${R[cpu]}" \
		"$st" "${R[st]}" "$sb" "${R[sb]}" "$su" "${R[su]}" \
		"$wt" "${R[wt]}" "$wb" "${R[wb]}" "$wu" "${R[wu]}" \
		"$(queue_info)" "$WORKERS" "$(cut -d' ' -f1 /proc/loadavg)")"
	# the hold starts at the first sample at or past BEFORE seconds
	if [[ $hold_state == before ]] && ((next - T0 >= BEFORE)); then
		start_hold
	fi
	((next - T0 >= TOTAL)) && break
done

kill -TERM "$PGBENCH" 2>/dev/null || true
wait "$PGBENCH" 2>/dev/null || true

# summary_line LABEL KEY: the highest ratio of one measure during the hold.
summary_line()
{
	printf '%-62s %-10s %-8s %s' "$1" "${MAX[$2]}x" "<= ${GOAL}x" "$(verdict "${MAX[$2]}" '<=' $GOAL)"
}

SUMMARY=(
	"baseline (before, without its first interval; $CALLS calls of each function a line): $BASE_CPUK ms worker CPU per 1000 deliveries"
	"  subscriber_status: median ${BASE[st]} ms, median ${BASE[sb]} blocks (shared hit + read), ${BASE[su]} us backend CPU per call"
	"  wait_for_delivery: median ${BASE[wt]} ms, median ${BASE[wb]} blocks (shared hit + read), ${BASE[wu]} us backend CPU per call"
	"$(printf '%-62s %-10s %-8s %s' "highest ratio to the baseline during the hold" measured goal verdict)"
	"$(summary_line "  worker CPU per 1000 deliveries" cpu)"
	"$(summary_line "  $ST_SQL, median ms" st)"
	"$(summary_line "  subscriber_status, median blocks per call" sb)"
	"$(summary_line "  subscriber_status, backend CPU per call" su)"
	"$(summary_line "  $WT_SQL, median ms" wt)"
	"$(summary_line "  wait_for_delivery, median blocks per call" wb)"
	"$(summary_line "  wait_for_delivery, backend CPU per call" wu)"
)
echo
echo "== summary (hold ${HOLD} s at ${RATE} events/s)"
printf '%s\n' "${SUMMARY[@]}"
OUT=${BENCH_RESULTS:-$(mktemp /tmp/ddl_notify_bench_snapshot.XXXXXX)}
{ printf '%s\n' "${SERIES[@]}"; printf '%s\n' "${SUMMARY[@]}"; } >"$OUT"
echo "(series and summary written to $OUT)"
