#!/usr/bin/env bash
# test/bench/scale.sh: does delivery stay fast at scale? (`make bench-scale`
# builds and installs the extension first, then runs this.)
#
# Each figure is printed beside its goal, in one run (docs/performance.md,
# "At scale"):
#   1. one transaction of N events (1k, 8k, 32k COMMENTs) drained by
#      CALL ddl_notify.deliver() in a fresh session (fresh generic plans),
#      once after ANALYZE of the drained queue (statistics: empty) and once
#      after ANALYZE of the full queue.  Goals: empty/full within 2x at each
#      N; time per event at 32k within 2x of 1k (linear).
#   2. cost per delivery with 4 and with 64 no-op subscribers: a backlog of
#      E events (200 transactions) drained by CALL deliver(), time per
#      delivery (event x subscriber).  Goal: 64 within 1.3x of 4.
#   3. an old snapshot: pgbench runs "one DDL; CALL ddl_notify.deliver()"
#      (one event, one batch per transaction) T times, with and without an
#      REPEATABLE READ session holding a snapshot taken before (it sleeps
#      in pg_sleep, which holds it as an idle one would); time
#      per 1000 deliveries.  Goal: within 2x.
#   4. subscriber_status with P pending events (4 subscribers).  Goal:
#      under 50 ms.
#   5. the drain rate: a backlog of D events, 4 subscribers, CALL deliver().
#      Goal: 215k deliveries/s; PgQ's 4 consumers on the same backlog are
#      measured beside it when PgQ is installed (run.sh installs it), and
#      half of their rate is printed as a second goal.
#   6. an outage's backlog: B events, 4 subscribers, CALL deliver().  Goals:
#      at least 150k deliveries/s, and per delivery within 1.25x of part 5's
#      backlog; the queue's heap and index sizes before, after the drain and
#      after a VACUUM (autovacuum's work; autovacuum is off here so that it
#      does not run during the other parts).
#
# Rules: as run.sh (prints figures, never fails for a missed goal; a
# throwaway cluster, stopped and removed on exit).  The machine may be
# shared: the load average before and after is printed with the figures.
#
# Environment: SCALE_SIZES (default "1000 8000 32000"), SCALE_EVENTS (2.,
# default 2000), SCALE_DDL (3., default 3000), SCALE_PENDING (4., default
# 1000000), SCALE_DRAIN (5., default 100000), SCALE_BIG (6., default
# 1000000), SCALE_PARTS (which of 1-6, default all), SCALE_SHARED_BUFFERS
# (default 1GB), BENCH_RESULTS (summary file).

set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES=${SCALE_SIZES:-1000 8000 32000}
EVENTS=${SCALE_EVENTS:-2000}
DDL=${SCALE_DDL:-3000}
PENDING=${SCALE_PENDING:-1000000}
DRAIN=${SCALE_DRAIN:-100000}
BIG=${SCALE_BIG:-1000000}
PARTS=${SCALE_PARTS:-1 2 3 4 5 6}
part() { [[ " $PARTS " == *" $1 "* ]]; }

bench_init
bench_files
C=scale
# shared_buffers: part 6's queue of 1M events is 521 MB; with the default
# 128 MB every page of it is read and written back through the kernel during
# the drain (3x the time per delivery here, docs/performance.md), which is
# the server's size, not the engine's cost.  SCALE_SHARED_BUFFERS changes it.
cluster_start $C "ddl_notify.max_workers = 0
shared_preload_libraries = 'ddl_notify'
shared_buffers = ${SCALE_SHARED_BUFFERS:-1GB}
max_locks_per_transaction = 256
autovacuum = off
fsync = off
synchronous_commit = off"

SUMMARY=()
row()
{
	# name, figure, goal, verdict
	SUMMARY+=("$(printf '%-58s %-26s %-18s %s' "$1" "$2" "$3" "$4")")
	printf '%-58s %-26s %-18s %s\n' "$1" "$2" "$3" "$4"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
LOAD_BEFORE=$(load)

# fresh_db DB NSUBS: a database with the extension and NSUBS no-op subscribers.
fresh_db()
{
	local db=$1 n=$2
	q $C postgres "DROP DATABASE IF EXISTS $db" >/dev/null
	q $C postgres "CREATE DATABASE $db" >/dev/null
	psql_c $C "$db" -c "CREATE EXTENSION ddl_notify" \
		-c "CREATE TABLE public.bench_target ()" \
		-c "CREATE FUNCTION public.noop(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS 'BEGIN END'" \
		-c "SELECT ddl_notify.subscribe('s' || i, 'public.noop(ddl_notify.event)') FROM generate_series(1, $n) i" \
		-c "ALTER DATABASE $db SET client_min_messages = error" >/dev/null 2>&1
}

# drain_ms DB: CALL ddl_notify.deliver() in a fresh session; its time in ms.
# The CPU time the cluster spent meanwhile (user + sys) goes to
# $BENCH_TMP/drain_cpu_ms: on a shared machine the wall time also counts the
# others' load.
drain_ms()
{
	local t0 t1 c0 c1
	read -r -a c0 <<<"$(cluster_cpu_ms $C)"
	t0=$(now_ms)
	q $C "$1" "CALL ddl_notify.deliver()" >/dev/null
	t1=$(now_ms)
	read -r -a c1 <<<"$(cluster_cpu_ms $C)"
	echo $(( c1[0] + c1[1] - c0[0] - c0[1] )) >"$BENCH_TMP/drain_cpu_ms"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
	[[ $(q $C "$1" "SELECT count(*) FROM ddl_notify.event") == 0 ]] || die "queue of $1 not drained"
}

# cpu_rate N MS: deliveries per CPU second, N events x 4 subscribers
cpu_rate() { awk -v ms="$2" -v n="$1" 'BEGIN { printf "%.0f", (ms > 0) ? n * 4 * 1000 / ms : 0 }'; }

# one_xact DB N: one transaction of N COMMENT events.
one_xact()
{
	q $C "$1" "DO \$\$BEGIN FOR i IN 1..$2 LOOP EXECUTE format('COMMENT ON TABLE public.bench_target IS %L', i::text); END LOOP; END\$\$" >/dev/null
}

if part 1; then
echo "== 1. one transaction of N events, statistics of an empty vs a full queue"
declare -A PER_EVENT=()
for n in $SIZES; do
	fresh_db st 1
	one_xact st 100
	q $C st "CALL ddl_notify.deliver()" >/dev/null
	q $C st "ANALYZE ddl_notify.event" >/dev/null
	one_xact st "$n"
	empty=$(drain_ms st)
	one_xact st "$n"
	q $C st "ANALYZE ddl_notify.event" >/dev/null
	full=$(drain_ms st)
	ratio=$(awk -v a="$empty" -v b="$full" 'BEGIN { printf "%.2f", a / b }')
	PER_EVENT[$n]=$(awk -v a="$empty" -v b="$full" -v n="$n" 'BEGIN { m = (a > b ? a : b); printf "%.4f", m / n }')
	row "drain ${n} events: empty stats vs full (ms)" "$empty vs $full = ${ratio}x" "<= 2x" "$(verdict "$ratio" '<=' 2)"
done
first=${SIZES%% *}
last=${SIZES##* }
lin=$(awk -v a="${PER_EVENT[$first]}" -v b="${PER_EVENT[$last]}" 'BEGIN { printf "%.2f", b / a }')
row "ms per event at $last vs at $first (worse of the two)" "${PER_EVENT[$last]} vs ${PER_EVENT[$first]} = ${lin}x" "<= 2x (linear)" "$(verdict "$lin" '<=' 2)"

fi

if part 2; then
echo "== 2. cost per delivery, 4 vs 64 subscribers ($EVENTS events)"
declare -A PER_DELIVERY=()
for s in 4 64; do
	fresh_db subs "$s"
	gen_comments "$(bench_file comments.sql)" "$EVENTS"
	# 200 transactions whatever EVENTS is
	awk -v per=$(( (EVENTS + 199) / 200 )) '/^BEGIN;|^COMMIT;/ { next } { if (n % per == 0) print "BEGIN;"; print; n++; if (n % per == 0) print "COMMIT;" } END { if (n % per) print "COMMIT;" }' \
		"$(bench_file comments.sql)" >"$(bench_file comments200.sql)"
	q_file $C subs "$(bench_file comments200.sql)" >/dev/null
	ms=$(drain_ms subs)
	PER_DELIVERY[$s]=$(awk -v ms="$ms" -v n="$EVENTS" -v s="$s" 'BEGIN { printf "%.2f", ms * 1000 / (n * s) }')
	echo "  $s subscribers: $ms ms, ${PER_DELIVERY[$s]} us per delivery"
done
ratio=$(awk -v a="${PER_DELIVERY[64]}" -v b="${PER_DELIVERY[4]}" 'BEGIN { printf "%.2f", a / b }')
row "us per delivery: 64 subscribers vs 4" "${PER_DELIVERY[64]} vs ${PER_DELIVERY[4]} = ${ratio}x" "<= 1.3x" "$(verdict "$ratio" '<=' 1.3)"

fi

if part 3; then
echo "== 3. a REPEATABLE READ session holding a snapshot ($DDL DDL, each delivered)"
printf "COMMENT ON TABLE public.bench_target IS 'x';\nCALL ddl_notify.deliver();\n" >"$(bench_file ddl_deliver.pgbench)"
declare -A PER_K=()
for mode in without with; do
	fresh_db snap 4
	holder=
	if [[ $mode == with ]]; then
		# holds its snapshot until terminated below
		psql_c $C snap -c "BEGIN ISOLATION LEVEL REPEATABLE READ" \
			-c "SELECT count(*) FROM ddl_notify.subscriber" \
			-c "SELECT pg_sleep(100000)" >/dev/null 2>&1 &
		holder=$!
		BENCH_CHILDREN+=("$holder")
		for _ in $(seq 1 100); do
			[[ $(q $C snap "SELECT count(*) FROM pg_stat_activity WHERE datname = 'snap' AND query LIKE '%pg_sleep(100000)%' AND backend_xmin IS NOT NULL AND pid <> pg_backend_pid()") == 1 ]] && break
			sleep 0.1
		done
	fi
	t0=$(now_ms)
	as_user pgbench -n -h "$BENCH_TMP/$C" -p "${BENCH_PORT[$C]}" -t "$DDL" -f "$(bench_file ddl_deliver.pgbench)" snap >"$(bench_file pgbench.log)" 2>&1 ||
		{ tail -n 5 "$(bench_file pgbench.log)" >&2; die "pgbench failed"; }
	t1=$(now_ms)
	PER_K[$mode]=$(awk -v a="$t0" -v b="$t1" -v n="$DDL" 'BEGIN { printf "%.1f", (b - a) * 4000 / (n * 4) }')
	echo "  $mode: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }') ms; subscriber table $(q $C snap "SELECT pg_relation_size('ddl_notify.subscriber')") bytes"
	if [[ -n $holder ]]; then
		q $C snap "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'snap' AND query LIKE '%pg_sleep(100000)%' AND pid <> pg_backend_pid()" >/dev/null
		wait "$holder" 2>/dev/null || true
	fi
done
ratio=$(awk -v a="${PER_K[with]}" -v b="${PER_K[without]}" 'BEGIN { printf "%.2f", a / b }')
row "ms per 1000 deliveries (DDL + deliver): old snapshot vs none" "${PER_K[with]} vs ${PER_K[without]} = ${ratio}x" "<= 2x" "$(verdict "$ratio" '<=' 2)"

fi

if part 4; then
echo "== 4. subscriber_status with $PENDING pending events, 4 subscribers"
fresh_db status 4
gen_comments "$(bench_file pending.sql)" "$PENDING"
q_file $C status "$(bench_file pending.sql)" >/dev/null
q $C status "VACUUM ANALYZE ddl_notify.event" >/dev/null
echo "  pending: $(q $C status "SELECT string_agg(pending::text, ' ') FROM ddl_notify.subscriber_status")"
# timed by psql in one session (\timing): a new session per query would add
# its start-up (30-60 ms on this machine) to the figure
best=$(psql_c $C status -c "\\timing on" \
	-c "SELECT name, pending, oldest_pending_id, oldest_pending_at FROM ddl_notify.subscriber_status" \
	-c "SELECT name, pending, oldest_pending_id, oldest_pending_at FROM ddl_notify.subscriber_status" \
	-c "SELECT name, pending, oldest_pending_id, oldest_pending_at FROM ddl_notify.subscriber_status" |
	awk '/^Time: / { print $2 }' | sort -g | head -n 1)
[[ -n $best ]] || die "subscriber_status was not timed"
row "subscriber_status, $PENDING pending (ms, best of 3)" "$best" "< 50 ms" "$(verdict "$best" '<=' 50)"
fi

# pgq_rate N: PgQ's 4 consumers on a backlog of N COMMENT events (the same
# file as part 5), deliveries/s; empty if PgQ is not installed.
pgq_rate()
{
	local n=$1 s t0 t1
	[[ -f $("$PG_CONFIG" --sharedir)/extension/pgq.control ]] || return 0
	q $C postgres "DROP DATABASE IF EXISTS pgqd" >/dev/null
	q $C postgres "CREATE DATABASE pgqd" >/dev/null
	q $C pgqd "CREATE TABLE public.bench_target ()" >/dev/null
	q_file $C pgqd "$BENCH_DIR/sql/pgq_capture.sql" >/dev/null
	q_file $C pgqd "$BENCH_DIR/sql/pgq_consumer.sql" >/dev/null
	q $C pgqd "SELECT pgq.register_consumer('ddl', 'c' || g) FROM generate_series(1, 4) g" >/dev/null
	q_file $C pgqd "$(bench_file drain.sql)" >/dev/null
	[[ -n $(q $C pgqd "SELECT pgq.ticker('ddl')") ]] || die "pgq: the ticker made no tick after the backlog"
	q $C pgqd "VACUUM ANALYZE" >/dev/null
	q $C pgqd "CHECKPOINT" >/dev/null
	s=$(psql_c $C pgqd -c "SELECT clock_timestamp()" \
		-c "CALL public.pgq_consume('c1')" -c "CALL public.pgq_consume('c2')" \
		-c "CALL public.pgq_consume('c3')" -c "CALL public.pgq_consume('c4')" \
		-c "SELECT clock_timestamp()")
	t0=$(sed -n 1p <<<"$s")
	t1=$(sed -n 2p <<<"$s")
	[[ $t0 == 20* && $t1 == 20* ]] || die "pgq: the consumers did not run: $s"
	q $C pgqd "SELECT round($((4 * n)) / extract(epoch FROM '$t1'::timestamptz - '$t0'::timestamptz))"
}

declare -A RATE=() CPURATE=()
if part 5; then
echo "== 5. drain rate: a backlog of $DRAIN events (1000 per transaction), 4 subscribers; PgQ's 4 consumers on the same backlog"
fresh_db drain 4
gen_comments "$(bench_file drain.sql)" "$DRAIN"
q_file $C drain "$(bench_file drain.sql)" >/dev/null
# as after an outage: a checkpoint since the events were written (each page's
# first change after it is written whole to the WAL)
q $C drain "CHECKPOINT" >/dev/null
ms=$(drain_ms drain)
RATE[$DRAIN]=$(awk -v ms="$ms" -v n="$DRAIN" 'BEGIN { printf "%.0f", n * 4 * 1000 / ms }')
cpu=$(cat "$BENCH_TMP/drain_cpu_ms")
CPURATE[$DRAIN]=$(cpu_rate "$DRAIN" "$cpu")
pgq=$(pgq_rate "$DRAIN")
echo "  ddl_notify: ${RATE[$DRAIN]}/s ($ms ms; cluster CPU $cpu ms: ${CPURATE[$DRAIN]} per CPU second); PgQ: ${pgq:-not installed}/s"
row "deliveries/s, $DRAIN x 4 subscribers (CALL deliver)" "${RATE[$DRAIN]} ($ms ms)" ">= 215000" "$(verdict "${RATE[$DRAIN]}" '>=' 215000)"
row "  the same per CPU second of the cluster" "${CPURATE[$DRAIN]} ($cpu ms)" ">= 215000" "$(verdict "${CPURATE[$DRAIN]}" '>=' 215000)"
[[ -n $pgq ]] && row "  PgQ, 4 consumers, same backlog (deliveries/s)" "$pgq" "(half: $((pgq / 2)))" "$(verdict "${RATE[$DRAIN]}" '>=' $((pgq / 2)))"
fi

if part 6; then
echo "== 6. an outage's backlog: $BIG events (1000 per transaction), 4 subscribers; the queue's size after VACUUM (what autovacuum runs)"
fresh_db big 4
gen_comments "$(bench_file big.sql)" "$BIG"
q_file $C big "$(bench_file big.sql)" >/dev/null
size() { q $C big "SELECT pg_size_pretty(pg_relation_size('ddl_notify.event')) || ' heap, ' || pg_size_pretty(pg_relation_size('ddl_notify.event_xid')) || ' index'"; }
echo "  before: $(size)"
q $C big "CHECKPOINT" >/dev/null
ms=$(drain_ms big)
RATE[$BIG]=$(awk -v ms="$ms" -v n="$BIG" 'BEGIN { printf "%.0f", n * 4 * 1000 / ms }')
cpu=$(cat "$BENCH_TMP/drain_cpu_ms")
CPURATE[$BIG]=$(cpu_rate "$BIG" "$cpu")
echo "  drained in $ms ms (cluster CPU $cpu ms: ${CPURATE[$BIG]} per CPU second): $(size)"
q $C big "VACUUM ddl_notify.event" >/dev/null
after=$(size)
echo "  after VACUUM: $after"
row "deliveries/s, $BIG x 4 subscribers (CALL deliver)" "${RATE[$BIG]} ($ms ms)" ">= 150000" "$(verdict "${RATE[$BIG]}" '>=' 150000)"
row "  the same per CPU second of the cluster" "${CPURATE[$BIG]} ($cpu ms)" ">= 150000" "$(verdict "${CPURATE[$BIG]}" '>=' 150000)"
if [[ -n ${RATE[$DRAIN]:-} ]]; then
	ratio=$(awk -v a="${RATE[$DRAIN]}" -v b="${RATE[$BIG]}" 'BEGIN { printf "%.2f", a / b }')
	row "per delivery, $BIG vs $DRAIN backlog (wall)" "${ratio}x" "<= 1.25x" "$(verdict "$ratio" '<=' 1.25)"
	ratio=$(awk -v a="${CPURATE[$DRAIN]}" -v b="${CPURATE[$BIG]}" 'BEGIN { printf "%.2f", a / b }')
	row "per delivery, $BIG vs $DRAIN backlog (CPU)" "${ratio}x" "<= 1.25x" "$(verdict "$ratio" '<=' 1.25)"
fi
row "ddl_notify.event after the drain and a VACUUM" "$after" "small" "-"
fi

echo
echo "== summary (load average before: $LOAD_BEFORE; after: $(load); $(nproc) cores)"
printf '%-58s %-26s %-18s %s\n' "figure" "measured" "goal" "verdict"
printf '%s\n' "${SUMMARY[@]}"
OUT=${BENCH_RESULTS:-$(mktemp /tmp/ddl_notify_bench_scale.XXXXXX)}
{ echo "load before: $LOAD_BEFORE; after: $(load)"; printf '%s\n' "${SUMMARY[@]}"; } >"$OUT"
echo "(summary written to $OUT)"
