#!/usr/bin/env bash
# test/bench/perf.sh: where the time goes, with perf record (sampling, real
# time, kernel included).  Not part of `make bench`; run it by hand as root:
#     bash test/bench/perf.sh
#
# What it prints (flat profiles, top PERF_TOP symbols, and the split by
# shared object):
# - capture: the two pgbench backends running test/bench/ddl.pgbench in a
#   database with ddl_notify (one no-op subscriber), PERF_SECS seconds; the
#   same backends' profile in a database without it; and the ddl_notify
#   worker delivering meanwhile.
# - delivery: the worker draining a backlog of PERF_EVENTS CREATE TABLE
#   events to 4 no-op subscribers (held off while the backlog is built by a
#   next_retry_at in the future, as run.sh does).
#
# Rules: as run.sh (test/bench/lib.sh).  perf must be installed (linux-perf)
# and allowed to record other users' processes (root, or
# kernel.perf_event_paranoid <= 1).  The postgres binary of Debian is
# stripped: its static functions show as addresses; ddl_notify.so has
# symbols.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECS=${PERF_SECS:-10}
EVENTS=${PERF_EVENTS:-10000}
TOP=${PERF_TOP:-30}

command -v perf >/dev/null 2>&1 || die "perf is not installed (apt-get install linux-perf)"
if ! is_root && (($(cat /proc/sys/kernel/perf_event_paranoid) > 1)); then
	die "perf cannot record the server's processes: run as root or set kernel.perf_event_paranoid = 1"
fi

bench_init
bench_files
PERF_DIR=$BENCH_TMP/perf
mkdir -p "$PERF_DIR"

cluster_start P "shared_preload_libraries = 'ddl_notify'
synchronous_commit = off
max_locks_per_transaction = 256"

report()
{
	local data=$1 title=$2
	printf '\n-- %s\n' "$title"
	echo "   by shared object:"
	perf report -i "$data" --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 8 | sed 's/^/   /' || true
	echo "   top symbols:"
	perf report -i "$data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n "$TOP" | sed 's/^/   /' || true
}

# profile_pgbench DB NAME: perf record the pgbench backends of DB (and the
# worker WORKER_PID when set) for SECS seconds.
profile_pgbench()
{
	local db=$1 name=$2 pids bg
	as_user pgbench -h "$BENCH_TMP/P" -p "${BENCH_PORT[P]}" -n -c 2 -j 2 -T $((SECS + 3)) \
		-f "$FILES/ddl.pgbench" "$db" >"$BENCH_TMP/pgbench.$name.out" 2>&1 </dev/null &
	bg=$!
	BENCH_CHILDREN+=("$bg")
	for _ in $(seq 1 50); do
		pids=$(q P postgres "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE application_name = 'pgbench' AND datname = '$db'")
		[[ $pids == *,* ]] && break
		sleep 0.1
	done
	[[ $pids == *,* ]] || die "pgbench did not connect to $db"
	perf record -q -o "$PERF_DIR/$name.backends.data" -p "$pids" -- sleep "$SECS" 2>/dev/null &
	local rec1=$! rec2=
	if [[ -n ${WORKER_PID:-} ]]; then
		perf record -q -o "$PERF_DIR/$name.worker.data" -p "$WORKER_PID" -- sleep "$SECS" 2>/dev/null &
		rec2=$!
	fi
	wait "$rec1" || true
	[[ -n $rec2 ]] && { wait "$rec2" || true; }
	wait "$bg" || die "pgbench failed in $db: $(cat "$BENCH_TMP/pgbench.$name.out")"
	sed -n 's/^tps = /   tps = /p' "$BENCH_TMP/pgbench.$name.out"
}

q P postgres "CREATE DATABASE b_none"
q P postgres "CREATE DATABASE b_ddln"
q P postgres "CREATE DATABASE b_drain"
q_file P b_ddln "$FILES/sql/capture_ddln.sql" >/dev/null
q_file P b_drain "$FILES/sql/drain.sql" >/dev/null

echo "== capture: pgbench -c 2 -j 2, test/bench/ddl.pgbench, $SECS s of samples each"
WORKER_PID=$(wait_worker P b_ddln)
profile_pgbench b_ddln ddln
WORKER_PID=
profile_pgbench b_none none
report "$PERF_DIR/ddln.backends.data" "capture: pgbench backends WITH ddl_notify"
report "$PERF_DIR/none.backends.data" "capture: pgbench backends WITHOUT ddl_notify"
report "$PERF_DIR/ddln.worker.data" "capture: the ddl_notify worker delivering meanwhile"

echo
echo "== delivery: the worker drains $EVENTS CREATE TABLE events to 4 no-op subscribers"
q P b_drain "SELECT ddl_notify.subscribe('s' || g, 'public.bench_noop(ddl_notify.event)') FROM generate_series(1, 4) g" >/dev/null
WORKER_PID=$(wait_worker P b_drain)
q P b_drain "UPDATE ddl_notify.subscriber SET next_retry_at = now() + interval '1 day'"
awk -v n="$EVENTS" 'BEGIN { for (i = 1; i <= n; i++) printf "CREATE TABLE d_%d (id int);\n", i }' >"$BENCH_TMP/create.sql"
q_file P b_drain "$BENCH_TMP/create.sql" -1
q P b_drain "VACUUM ANALYZE ddl_notify.event" >/dev/null
perf record -q -o "$PERF_DIR/drain.data" -p "$WORKER_PID" 2>/dev/null &
REC=$!
sleep 0.5
t0=$(q P b_drain "SELECT clock_timestamp()")
q P b_drain "UPDATE ddl_notify.subscriber SET next_retry_at = NULL"
q P b_drain "COMMENT ON TABLE public.bench_target IS 'go'"
q P b_drain "SELECT ddl_notify.wait_for_delivery('600s')" >/dev/null
kill -INT "$REC"
wait "$REC" || true
q P b_drain "SELECT format('   drained in %s s: %s deliveries/s', round(extract(epoch FROM max(last_delivered_at) - '$t0'::timestamptz)::numeric, 2),
	round(sum(delivered) / extract(epoch FROM max(last_delivered_at) - '$t0'::timestamptz))) FROM ddl_notify.subscriber"
report "$PERF_DIR/drain.data" "delivery: the worker draining the backlog"
if [[ ${BENCH_KEEP:-0} == 1 ]]; then
	echo
	echo "perf data files: $PERF_DIR"
fi
