#!/usr/bin/env bash
# test/bench/callgrind.sh: instruction counts of ddl_notify's capture path
# and delivery path, with valgrind --tool=callgrind.  Not part of `make bench`
# (it takes a few minutes and needs valgrind); run it by hand:
#     bash test/bench/callgrind.sh
#
# What it prints:
# - capture: instructions (Ir) per pgbench-style transaction (CREATE TABLE
#   with a primary key, ALTER TABLE ADD COLUMN, DROP TABLE: 3 autocommit DDL,
#   6 events) in a database without event triggers, with ddl_notify, and with
#   the do-it-yourself PL/pgSQL trigger; the marginal cost between a session
#   of CG_N1 and one of CG_N2 transactions, so connection start-up and the
#   first-call caches cancel out.
# - delivery: Ir per delivery of CALL ddl_notify.deliver() (4 no-op
#   subscribers, a backlog of CG_EVENTS COMMENT events), against the same
#   CALL with an empty backlog.
# - profiles: the top functions, by exclusive Ir, inside ddl_notify's entry
#   points only (valgrind --collect-atstart=no --toggle-collect=...):
#   capture_ddl_command_end, capture_sql_drop, capture_table_rewrite and the
#   commit callback DdlnXactCallback for the capture path; deliver (the CALL)
#   for the delivery path (the commit callback inside it is left out: it
#   toggles collection off while it runs).
#
# Rules: as run.sh (test/bench/lib.sh): a throwaway cluster as the postgres
# OS user, unix socket only, removed on exit.  The setup and the backlogs are
# made with a normal server; only the measured sessions run under valgrind.
# valgrind is installed with apt-get when we are root and it is missing.
#
# Environment: CG_N1 (default 10), CG_N2 (default 50), CG_EVENTS (default
# 2000), CG_TOP (default 25 functions per profile), BENCH_KEEP=1 keeps the
# callgrind.out files (their directory is printed).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N1=${CG_N1:-10}
N2=${CG_N2:-50}
EVENTS=${CG_EVENTS:-2000}
TOP=${CG_TOP:-25}

if ! command -v valgrind >/dev/null 2>&1; then
	is_root || die "valgrind is not installed (apt-get install valgrind)"
	echo "== installing valgrind"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind </dev/null >/dev/null ||
		die "apt-get install valgrind failed"
fi

bench_init
FILES=$BENCH_TMP/files
cp -r "$BENCH_DIR" "$FILES"
if is_root; then
	chown -R "$RUN_USER": "$FILES"
fi
DIR=$BENCH_TMP/C
CG=$BENCH_TMP/cg
as_user mkdir -p "$CG"

cluster_start C "shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
autovacuum = off
fsync = off
synchronous_commit = off"

# --- setup, with a normal server -------------------------------------------
for db in none ddln diy drain0 drain1 drain2; do
	q C postgres "CREATE DATABASE $db"
done
# (quiet: CREATE EXTENSION warns that delivery is manual here)
psql_c C ddln -c "SET client_min_messages = error" -f "$FILES/sql/capture_ddln.sql" >/dev/null
q_file C diy "$FILES/sql/capture_diy.sql" >/dev/null
for db in drain0 drain1 drain2; do
	q_file C "$db" "$FILES/sql/drain.sql" >/dev/null
	q C "$db" "SELECT ddl_notify.subscribe('s' || g, 'public.bench_noop(ddl_notify.event)') FROM generate_series(1, 4) g" >/dev/null
done
awk -v n="$EVENTS" 'BEGIN {
	for (i = 1; i <= n; i++) {
		if (i % 1000 == 1) print "BEGIN;"
		printf "COMMENT ON TABLE public.bench_target IS %cbacklog %d%c;\n", 39, i, 39
		if (i % 1000 == 0 || i == n) print "COMMIT;"
	}
}' >"$BENCH_TMP/backlog.sql"
q_file C drain1 "$BENCH_TMP/backlog.sql"
q_file C drain2 "$BENCH_TMP/backlog.sql"
for db in drain0 drain1 drain2; do
	q C "$db" "VACUUM ANALYZE ddl_notify.event" >/dev/null
done
# the DDL of one "transaction" of the capture benchmark, repeated
for n in "$N1" "$N2"; do
	awk -v n="$n" 'BEGIN { print "SELECT pg_backend_pid();"
		for (i = 1; i <= n; i++) {
			print "CREATE TABLE bench_t1 (id int PRIMARY KEY, v text);"
			print "ALTER TABLE bench_t1 ADD COLUMN w int;"
			print "DROP TABLE bench_t1;"
		} }' >"$BENCH_TMP/ddl.$n.sql"
done
cluster_stop C

# --- valgrind runs -----------------------------------------------------------
# vg_start OPTIONS...: the same cluster, its postmaster under callgrind.
vg_start()
{
	as_user valgrind --tool=callgrind --callgrind-out-file="$CG/%p.out" "$@" \
		postgres -D "$DIR/data" >"$BENCH_TMP/valgrind.log" 2>&1 </dev/null &
	VG_PID=$!
	for _ in $(seq 1 600); do
		as_user pg_isready -q -h "$DIR" -p "${BENCH_PORT[C]}" && return 0
		sleep 0.2
	done
	tail -n 20 "$BENCH_TMP/valgrind.log" >&2
	die "the server under valgrind did not start"
}

vg_stop()
{
	cluster_stop C
	wait "$VG_PID" 2>/dev/null || true
}

# session DB FILE|SQL: run it in a new backend; print the backend's
# callgrind output file once the backend has exited and written it.
session()
{
	local db=$1 what=$2 pid f
	if [[ -f $what ]]; then
		pid=$(q_file C "$db" "$what" | head -n 1)
	else
		pid=$(psql_c C "$db" -c "SELECT pg_backend_pid()" -c "$what" | head -n 1)
	fi
	[[ $pid =~ ^[0-9]+$ ]] || die "session in $db: no backend pid"
	f=$CG/$pid.out
	for _ in $(seq 1 600); do
		if [[ -s $f ]] && ! kill -0 "$pid" 2>/dev/null; then
			echo "$f"
			return 0
		fi
		sleep 0.1
	done
	die "no callgrind output for backend $pid"
}

ir_total()
{
	awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

echo "== run 1: everything counted (Ir = instructions executed)"
vg_start --collect-atstart=yes
declare -A F1=() F2=()
for db in none ddln diy; do
	F1[$db]=$(session "$db" "$BENCH_TMP/ddl.$N1.sql")
	F2[$db]=$(session "$db" "$BENCH_TMP/ddl.$N2.sql")
done
D0=$(session drain0 "CALL ddl_notify.deliver()")
D1=$(session drain1 "CALL ddl_notify.deliver()")
vg_stop

declare -A IR=()
printf '\n== capture: Ir per transaction (3 DDL, 6 events), marginal over %d transactions\n' "$((N2 - N1))"
for db in none ddln diy; do
	IR[$db]=$(awk -v a="$(ir_total "${F1[$db]}")" -v b="$(ir_total "${F2[$db]}")" -v n="$((N2 - N1))" 'BEGIN { printf "%.0f", (b - a) / n }')
done
for db in none ddln diy; do
	awk -v db="$db" -v x="${IR[$db]}" -v base="${IR[none]}" 'BEGIN {
		printf "   %-5s %12.0f Ir/txn  %+11.0f vs none (%+.1f%%), %+9.0f Ir per event\n", db, x, x - base, (x - base) * 100 / base, (x - base) / 6 }'
done
printf '\n== delivery: CALL ddl_notify.deliver(), 4 no-op subscribers, backlog %d events\n' "$EVENTS"
awk -v a="$(ir_total "$D0")" -v b="$(ir_total "$D1")" -v n="$((4 * EVENTS))" 'BEGIN {
	printf "   empty round %.0f Ir; with the backlog %.0f Ir: %.0f Ir per delivery\n", a, b, (b - a) / n }'

printf '\n== run 2: only inside ddl_notify entry points\n'
vg_start --collect-atstart=no --toggle-collect=capture_ddl_command_end --toggle-collect=capture_sql_drop \
	--toggle-collect=capture_table_rewrite --toggle-collect=DdlnXactCallback --toggle-collect=deliver
P1=$(session ddln "$BENCH_TMP/ddl.$N2.sql")
P2=$(session drain2 "CALL ddl_notify.deliver()")
vg_stop

profile()
{
	local f=$1 per=$2 what=$3 total
	total=$(ir_total "$f")
	printf '\n-- %s: %s Ir in total, %s Ir per %s\n' "$4" "$total" "$(awk -v t="$total" -v n="$per" 'BEGIN { printf "%.0f", t / n }')" "$what"
	echo "   top functions by exclusive Ir (inclusive in the second list):"
	callgrind_annotate --threshold=100 "$f" 2>/dev/null | awk '/^-+$/ { sep++; next } sep >= 3 && NF' | head -n "$TOP" | sed 's/^/   /'
	echo "   inclusive:"
	callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null | awk '/^-+$/ { sep++; next } sep >= 3 && NF' | head -n "$TOP" | sed 's/^/   /'
}
profile "$P1" "$((N2 * 6))" event "capture path (capture_* + DdlnXactCallback), $N2 transactions = $((N2 * 6)) events"
profile "$P2" "$((EVENTS * 4))" delivery "delivery path (deliver), $EVENTS events x 4 subscribers"
if [[ ${BENCH_KEEP:-0} == 1 ]]; then
	echo
	echo "callgrind output files: $CG (capture: $P1, delivery: $P2)"
fi
