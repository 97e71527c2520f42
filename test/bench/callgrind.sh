#!/usr/bin/env bash
# test/bench/callgrind.sh: instruction counts of ddl_notify's capture path
# and delivery path, with valgrind --tool=callgrind.  Not part of `make bench`
# (it takes a few minutes and needs valgrind); run it by hand:
#     bash test/bench/callgrind.sh
#
# What it prints:
# - capture: instructions (Ir) per pgbench-style transaction (CREATE TABLE
#   with a primary key, ALTER TABLE ADD COLUMN, DROP TABLE: 3 autocommit DDL)
#   in a database without event triggers, with ddl_notify, with the
#   do-it-yourself PL/pgSQL trigger of the bench (ddl_command_end only: it
#   records no drops), and with that trigger plus one on sql_drop (the same
#   rows as ddl_notify), and with ddl_notify.capture_changes off (issue 27:
#   the capture cost per event with and without before/after/changes, side
#   by side); the marginal cost between a session of CG_N1 and one
#   of CG_N2 transactions, so connection start-up and the first-call caches
#   cancel out; the rows each records per transaction, and the cost per row.
# - delivery: Ir per delivery of CALL ddl_notify.deliver() (4 no-op
#   subscribers, a backlog of CG_EVENTS COMMENT events), against the same
#   CALL with an empty backlog.
# - the worker of one database while a session runs CG_N2 such
#   transactions there (a delivery round per DDL commit): Ir of its rounds
#   (DdlnDeliverRound) per transaction.
# - CDC (run 4, the cluster restarted with wal_level = logical): Ir per
#   transaction of the same workload with no event trigger, with ddl_notify
#   and ddl_notify.wal_messages off, and with it on (database ddlnw: ALTER
#   DATABASE ... SET ddl_notify.wal_messages = on), side by side, and what
#   the messages add per event.
# - profiles: the top functions, by exclusive Ir, inside ddl_notify's entry
#   points only (valgrind --collect-atstart=no --toggle-collect=...):
#   ddl_notify_capture_ddl_command_start, ddl_notify_capture_ddl_command_end,
#   ddl_notify_capture_sql_drop, ddl_notify_capture_table_rewrite, the object
#   access hook that reads dropped relations' images (DdlnImageObjectAccess)
#   and the commit callback DdlnXactCallback for the capture path;
#   ddl_notify_deliver (the CALL) for the delivery path (the commit callback
#   inside it is left out: it toggles collection off while it runs).
#
# Rules: as run.sh (test/bench/lib.sh): a throwaway cluster as the postgres
# OS user, unix socket only, removed on exit.  The setup and the backlogs are
# made with a normal server; only the measured sessions run under valgrind.
# valgrind is installed with apt-get when we are root and it is missing.
#
# Environment: CG_N1 (default 10), CG_N2 (default 50), CG_EVENTS (default
# 2000), CG_TOP (default 25 functions per profile), CG_RUN3_OPTS (extra
# postgres options for run 3, e.g. "-c plan_cache_mode=force_generic_plan"
# to see what re-planning costs the worker), BENCH_KEEP=1 keeps the
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
bench_files
DIR=$BENCH_TMP/C
CG=$BENCH_TMP/cg
as_user mkdir -p "$CG"

cluster_start C "shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
autovacuum = off
fsync = off
synchronous_commit = off"

# --- setup, with a normal server -------------------------------------------
for db in none ddln ddlnoff ddlnw diy diyd drain0 drain1 drain2 wk; do
	q C postgres "CREATE DATABASE $db"
done
# (quiet: CREATE EXTENSION warns that delivery is manual here)
psql_c C ddln -c "SET client_min_messages = error" -f "$FILES/sql/capture_ddln.sql" >/dev/null
psql_c C wk -c "SET client_min_messages = error" -f "$FILES/sql/capture_ddln.sql" >/dev/null
psql_c C ddlnw -c "SET client_min_messages = error" -f "$FILES/sql/capture_ddln.sql" >/dev/null
psql_c C ddlnoff -c "SET client_min_messages = error" -f "$FILES/sql/capture_ddln.sql" >/dev/null
q C ddlnoff "ALTER DATABASE ddlnoff SET ddl_notify.capture_changes = off" >/dev/null
q C ddlnw "ALTER DATABASE ddlnw SET ddl_notify.wal_messages = on" >/dev/null
q_file C diy "$FILES/sql/capture_diy.sql" >/dev/null
q_file C diyd "$FILES/sql/capture_diy.sql" >/dev/null
q_file C diyd "$FILES/sql/capture_diy_drop.sql" >/dev/null
for db in drain0 drain1 drain2; do
	q_file C "$db" "$FILES/sql/drain.sql" >/dev/null
	q C "$db" "SELECT ddl_notify.subscribe('s' || g, 'public.bench_noop(ddl_notify.event)') FROM generate_series(1, 4) g" >/dev/null
done
gen_comments "$BENCH_TMP/backlog.sql" "$EVENTS"
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
# The same cluster, its postmaster under callgrind (lib.sh: cg_start,
# cg_stop, cg_session, cg_ir).
vg_start() { cg_start C "$CG" "$@"; }
vg_stop() { cg_stop C; }
session() { cg_session C "$CG" "$@"; }
ir_total() { cg_ir "$1"; }

echo "== run 1: everything counted (Ir = instructions executed)"
vg_start --collect-atstart=yes
declare -A F1=() F2=() ROWS=()
for db in none ddln ddlnoff diy diyd; do
	F1[$db]=$(session "$db" "$BENCH_TMP/ddl.$N1.sql")
	F2[$db]=$(session "$db" "$BENCH_TMP/ddl.$N2.sql")
done
# rows recorded per transaction (nothing delivers here: they all stay)
ROWS[none]=0
ROWS[ddln]=$(q C ddln "SELECT count(*) / $((N1 + N2)).0 FROM ddl_notify.event")
ROWS[ddlnoff]=$(q C ddlnoff "SELECT count(*) / $((N1 + N2)).0 FROM ddl_notify.event")
ROWS[diy]=$(q C diy "SELECT count(*) / $((N1 + N2)).0 FROM public.ddl_log")
ROWS[diyd]=$(q C diyd "SELECT count(*) / $((N1 + N2)).0 FROM public.ddl_log")
D0=$(session drain0 "CALL ddl_notify.deliver()")
D1=$(session drain1 "CALL ddl_notify.deliver()")
vg_stop

declare -A IR=()
printf '\n== capture: Ir per transaction (3 DDL), marginal over %d transactions\n' "$((N2 - N1))"
echo "   none: no event trigger; ddln: ddl_notify; ddlnoff: ddl_notify with capture_changes off;"
echo "   diy: the PL/pgSQL trigger on ddl_command_end"
echo "   (capture_diy.sql); diyd: diy plus a PL/pgSQL trigger on sql_drop (capture_diy_drop.sql)"
for db in none ddln ddlnoff diy diyd; do
	IR[$db]=$(awk -v a="$(ir_total "${F1[$db]}")" -v b="$(ir_total "${F2[$db]}")" -v n="$((N2 - N1))" 'BEGIN { printf "%.0f", (b - a) / n }')
done
for db in none ddln ddlnoff diy diyd; do
	awk -v db="$db" -v x="${IR[$db]}" -v base="${IR[none]}" -v rows="${ROWS[$db]}" 'BEGIN {
		printf "   %-5s %12.0f Ir/txn  %+11.0f vs none (%+5.1f%%), %4.1f rows/txn", db, x, x - base, (x - base) * 100 / base, rows
		if (rows > 0) printf ", %+7.0f Ir per row", (x - base) / rows
		printf "\n" }'
done
# issue 27: the relation images ("before", "after", "changes") on and off
awk -v on="${IR[ddln]}" -v off="${IR[ddlnoff]}" -v none="${IR[none]}" -v rows="${ROWS[ddln]}" 'BEGIN {
	printf "\n== capture cost per event with and without before/after/changes (ddl_notify.capture_changes)\n"
	printf "   %-28s %12s %12s\n", "", "Ir/txn", "Ir/event"
	printf "   %-28s %12.0f %12.0f\n", "capture_changes off", off - none, (off - none) / rows
	printf "   %-28s %12.0f %12.0f\n", "capture_changes on (default)", on - none, (on - none) / rows
	printf "   %-28s %+12.0f %+12.0f  (%+.1f%% of the capture off, %+.1f%% of the DDL without capture)\n", "on - off",
		on - off, (on - off) / rows, (on - off) * 100 / (off - none), (on - off) * 100 / none }'
printf '\n== delivery: CALL ddl_notify.deliver(), 4 no-op subscribers, backlog %d events\n' "$EVENTS"
awk -v a="$(ir_total "$D0")" -v b="$(ir_total "$D1")" -v n="$((4 * EVENTS))" 'BEGIN {
	printf "   empty round %.0f Ir; with the backlog %.0f Ir: %.0f Ir per delivery\n", a, b, (b - a) / n }'

# Run 4: as a CDC set-up runs, wal_level = logical (which makes every
# catalog change log more, with or without ddl_notify): the capture with
# ddl_notify.wal_messages off and on.
printf '\n== run 4: wal_level = logical; ddl_notify.wal_messages off (ddln) and on (ddlnw)\n'
vg_start --collect-atstart=yes -- -c wal_level=logical
declare -A G1=() G2=() GIR=()
for db in none ddln ddlnw; do
	G1[$db]=$(session "$db" "$BENCH_TMP/ddl.$N1.sql")
	G2[$db]=$(session "$db" "$BENCH_TMP/ddl.$N2.sql")
done
vg_stop
for db in none ddln ddlnw; do
	GIR[$db]=$(awk -v a="$(ir_total "${G1[$db]}")" -v b="$(ir_total "${G2[$db]}")" -v n="$((N2 - N1))" 'BEGIN { printf "%.0f", (b - a) / n }')
done
awk -v none="${GIR[none]}" -v off="${GIR[ddln]}" -v on="${GIR[ddlnw]}" -v rows="${ROWS[ddln]}" 'BEGIN {
	printf "   none            %12.0f Ir/txn\n", none
	printf "   ddl_notify, off %12.0f Ir/txn  %+11.0f vs none (%+5.1f%%)\n", off, off - none, (off - none) * 100 / none
	printf "   ddl_notify, on  %12.0f Ir/txn  %+11.0f vs none (%+5.1f%%)\n", on, on - none, (on - none) * 100 / none
	printf "   on - off        %+12.0f Ir/txn  (%+5.1f%% of the DDL without capture, %+5.1f%% of the capture off), %4.1f messages/txn, %+7.0f Ir per message\n",
		on - off, (on - off) * 100 / none, (on - off) * 100 / (off - none), rows, (on - off) / rows }'

printf '\n== run 2: only inside ddl_notify entry points\n'
vg_start --collect-atstart=no --toggle-collect=ddl_notify_capture_ddl_command_end \
	--toggle-collect=ddl_notify_capture_sql_drop --toggle-collect=ddl_notify_capture_table_rewrite \
	--toggle-collect=ddl_notify_capture_ddl_command_start --toggle-collect=DdlnImageObjectAccess \
	--toggle-collect=DdlnXactCallback --toggle-collect=ddl_notify_deliver
P1=$(session ddln "$BENCH_TMP/ddl.$N2.sql")
P2=$(session drain2 "CALL ddl_notify.deliver()")
vg_stop

# profile FILE UNITS UNIT TITLE: the profile of one session, costs also per
# UNIT (event, delivery).  Inclusive costs of ddl_notify's own functions and
# of a few PostgreSQL functions that tell where the time goes, then the top
# functions by exclusive cost.  (Debian's postgres is stripped: its static
# functions show as addresses.)
profile()
{
	local f=$1 units=$2 unit=$3 title=$4 total pat
	total=$(ir_total "$f")
	printf '\n-- %s\n   %s Ir in total, %s Ir per %s\n' "$title" "$total" \
		"$(awk -v t="$total" -v n="$units" 'BEGIN { printf "%.0f", t / n }')" "$unit"
	callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$f" >"$f.incl" 2>/dev/null || true
	callgrind_annotate --auto=no --threshold=100 "$f" >"$f.excl" 2>/dev/null || true
	pat='ddl_notify\.so|:(SPI_execute_plan|SPI_prepare|GetCachedPlan|pg_plan_query|ExecutorStart|ExecutorRun|ExecutorEnd'
	pat+='|ExecInitNode|ExecInitExpr|ExecInitSubPlan|ExecScan|ExecSort|ExecHashJoin|ExecNestLoop|ExecLockRows'
	pat+='|set_config_option|AtEOXact_GUC|NewGUCNestLevel|jsonb_build_object|pg_event_trigger_ddl_commands'
	pat+='|pg_event_trigger_dropped_objects|ExecMakeTableFunctionResult|heap_insert|heap_update|heap_delete'
	pat+='|ExecInsertIndexTuples|tuplesort_performsort|ExecEvalWholeRowVar|plpgsql_call_handler|SPI_commit'
	pat+='|CommitTransactionCommand|BeginInternalSubTransaction|ReleaseCurrentSubTransaction|XLogInsert) '
	printf '   inclusive (Ir, share, Ir per %s):\n' "$unit"
	awk -v n="$units" -v pat="$pat" '
		/^ *[0-9,]+ \( *[0-9.]+%\)  / && !/=>/ && $0 ~ pat {
			ir = $1; gsub(",", "", ir)
			match($0, /\( *[0-9.]+%\)/); share = substr($0, RSTART + 1, RLENGTH - 2); gsub(" ", "", share)
			fn = $0; sub(/^ *[0-9,]+ \( *[0-9.]+%\)  /, "", fn); sub(/ \[.*$/, "", fn); sub(/^.*\//, "", fn); sub(/^\?\?\?:/, "", fn)
			if (seen[fn]++) next
			printf "   %14s %7s %10.0f  %s\n", $1, share, ir / n, fn
		}' "$f.incl" | head -n 40 || true
	printf '   top %d by exclusive Ir (Ir, share, Ir per %s):\n' "$TOP" "$unit"
	awk -v n="$units" '
		/^ *[0-9,]+ \( *[0-9.]+%\)  / && !/PROGRAM TOTALS/ && !/=>/ {
			ir = $1; gsub(",", "", ir)
			match($0, /\( *[0-9.]+%\)/); share = substr($0, RSTART + 1, RLENGTH - 2); gsub(" ", "", share)
			fn = $0; sub(/^ *[0-9,]+ \( *[0-9.]+%\)  /, "", fn); sub(/^[^ ]*\//, "", fn); sub(/^\?\?\?:/, "", fn)
			sub(/ \[\/usr\/lib\/postgresql\/[0-9]+\/bin\/postgres\]$/, "", fn)
			printf "   %14s %7s %10.0f  %s\n", $1, share, ir / n, fn
		}' "$f.excl" | head -n "$TOP" || true
}
profile "$P1" "$((N2 * 6))" event "capture path (capture_* + DdlnXactCallback), $N2 transactions = $((N2 * 6)) events"
profile "$P2" "$((EVENTS * 4))" delivery "delivery path (deliver), $EVENTS events x 4 subscribers"

# Run 3: the worker while DDL trickles in, as in the capture benchmark: a
# round per wake-up (one per DDL commit), a few events each.  Only inside
# DdlnDeliverRound of the worker of database wk (1 no-op subscriber).
printf '\n== run 3: the worker of one database while a session runs %d transactions (3 DDL each) there\n' "$N2"
# shellcheck disable=SC2086 # CG_RUN3_OPTS: words on purpose
vg_start --collect-atstart=no --toggle-collect=DdlnDeliverRound -- -c ddl_notify.max_workers=8 ${CG_RUN3_OPTS:-}
for _ in $(seq 1 1200); do
	s=$(q C wk "SELECT ddl_notify.delivery_status()")
	[[ $s =~ worker\ pid\ ([0-9]+) ]] && break
	sleep 0.1
done
[[ $s =~ worker\ pid\ ([0-9]+) ]] || die "no worker in database wk: $s"
WK=${BASH_REMATCH[1]}
q_file C wk "$BENCH_TMP/ddl.$N2.sql" >/dev/null
[[ $(q C wk "SELECT ddl_notify.wait_for_delivery('600s')") == t ]] || die "the worker did not deliver in database wk"
vg_stop
P3=$CG/$WK.out
[[ -s $P3 ]] || die "no callgrind output for the worker ($P3)"
profile "$P3" "$N2" "pgbench-style transaction (6 deliveries)" "the worker during the DDL workload (DdlnDeliverRound only)"
if [[ ${BENCH_KEEP:-0} == 1 ]]; then
	echo
	echo "callgrind output files: $CG (capture: $P1, delivery: $P2, worker: $P3)"
fi
