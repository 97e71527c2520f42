#!/usr/bin/env bash
# test/bench/run.sh: the benchmarks of ddl_notify (`make bench` builds and
# installs the extension first, then runs this).
#
# What it measures (each comparison side by side in one run, interleaved
# rounds in rotating order, median with the min-max spread):
#   1. capture overhead: a DDL workload (pgbench, test/bench/ddl.pgbench:
#      CREATE TABLE with a primary key, ALTER TABLE ADD COLUMN, DROP TABLE)
#      with ddl_notify's event triggers, a subscriber and the worker, against
#      the same database with no event trigger enabled (ddl_notify twice: with
#      the default ddl_notify.stream_interval and with 10ms); the same for the
#      do-it-yourself PL/pgSQL event trigger (test/bench/sql/capture_diy.sql)
#      and, when it can be installed, PgQ (test/bench/sql/pgq_capture.sql).
#      Throughput (tps) and the cluster's CPU time per transaction.
#   2. latency from a DDL's commit (track_commit_timestamp) to its handler's
#      start, with the worker, one DDL at a time: each delivered before the
#      next, then the same DDL back to back.
#   3. drain: a backlog of N CREATE TABLE events, 4 no-op subscribers,
#      CALL ddl_notify.deliver() (the worker's engine) on a cluster without
#      worker; then the same with a 5th subscriber that always fails, once
#      retrying (max_attempts NULL) and once dead-lettering every event
#      (max_attempts 1); PgQ consumers on the same backlog when available.
#   4. memory: the worker's RSS while it drains a 100,000-event backlog.
#   5. table hygiene: size of ddl_notify.event after that drain, and after
#      autovacuum had its chance.
#   6. PgQ's figures next to ours (postgresql-MAJOR-pgq3 from Debian, installed
#      here as root when it is missing; skipped with the reason otherwise).
#   7. memory on hostile DDL: the worker's peak private memory while it
#      delivers a backlog of 1 GB of statement text (test/bench/big_text.sh).
#   8. memory of DROP SCHEMA ... CASCADE of 8,000 and 32,000 tables: the
#      dropping backend's, ddl_notify against a minimal PL/pgSQL sql_drop
#      trigger, per dropped object (test/bench/drop_memory.sh).
#
# Rules:
# - Prints figures; never fails for a missed goal.  Exit status non-zero only
#   when a benchmark could not run (a cluster did not start, a query failed).
# - Runs from a fresh clone, as root or not: throwaway clusters in one temp
#   directory (test/bench/lib.sh), run by the postgres OS user when we are
#   root, unix sockets only, stopped and removed on every exit.
# - The summary table is printed at the end and written to BENCH_RESULTS
#   (default: a new file /tmp/ddl_notify_bench_summary.XXXXXX, named at the end).
#
# Environment:
#   BENCH_QUICK=1        ~1-2 minute smoke run (fewer rounds, smaller backlogs)
#   BENCH_SYNC_COMMIT    synchronous_commit of the clusters (default off: the
#                        figures are CPU cost, not the disk's fsync latency;
#                        the extension adds no flush of its own to a DDL)
#   BENCH_PGQ=0          do not try PgQ
#   BENCH_CLIENTS        pgbench clients of the capture benchmark, a series
#                        each (default "1 2")
#   BENCH_KEEP=1         keep the temp directory (server logs) for inspection
#   BENCH_RESULTS=FILE   where to write the summary
#   BENCH_TRACE=FILE     bash -x trace of this script into FILE
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUICK=${BENCH_QUICK:-0}
SYNC=${BENCH_SYNC_COMMIT:-off}
if [[ $QUICK == 1 ]]; then
	CAP_ROUNDS=1 CAP_SECS=3 CAP_WARMUP=1
	LAT_N=50
	MEM_EVENTS=20000
	HYG_TIMEOUT=40
	DRAIN_N=4000 DRAIN_ROUNDS=1 DRAIN_FAIL_TIMEOUT=5
else
	CAP_ROUNDS=7 CAP_SECS=4 CAP_WARMUP=2
	LAT_N=200
	MEM_EVENTS=100000
	HYG_TIMEOUT=90
	DRAIN_N=10000 DRAIN_ROUNDS=3 DRAIN_FAIL_TIMEOUT=15
fi
# pgbench clients of the capture benchmark, one full series each: 1 (a
# migration: one session, the worker has the other core) and 2 (both cores
# busy with DDL, the worker competes for them)
CAP_CLIENTS_LIST=${BENCH_CLIENTS:-1 2}
NAPTIME=10s


# bench_setup: the temp directory, our files in it, the summary.
bench_setup()
{
	bench_init
	bench_files
	SUMMARY=$BENCH_TMP/summary.tsv
	: >"$SUMMARY"
	RESULTS=${BENCH_RESULTS:-$(mktemp "${TMPDIR:-/tmp}/ddl_notify_bench_summary.XXXXXX")}
	T_START=$SECONDS
}

section()
{
	printf '\n== [%ds] %s\n' "$((SECONDS - T_START))" "$*"
}

# row LABEL VALUE GOAL VERDICT: one line of the summary table.
row()
{
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$SUMMARY"
}

# fmt NUMBER [DECIMALS]
fmt()
{
	awk -v v="$1" -v d="${2:-2}" 'BEGIN { if (v == "" || v == "nan") print "n/a"; else printf "%.*f", d, v }'
}


# gen_create FILE N PREFIX / gen_drop FILE N PREFIX: N statements, one per table.
gen_create()
{
	awk -v n="$2" -v p="$3" 'BEGIN { for (i = 1; i <= n; i++) printf "CREATE TABLE %s_%d (id int);\n", p, i }' >"$1"
}
gen_drop()
{
	awk -v n="$2" -v p="$3" 'BEGIN { for (i = 1; i <= n; i++) printf "DROP TABLE %s_%d;\n", p, i }' >"$1"
}

# ---------------------------------------------------------------------------
# PgQ: installed from Debian when we are root and it is missing.
PGQ_OK=0
PGQ_WHY=
pgq_prepare()
{
	local pkg=postgresql-$PG_MAJOR-pgq3 sharedir cand
	sharedir=$("$PG_CONFIG" --sharedir)
	if [[ ${BENCH_PGQ:-1} == 0 ]]; then
		PGQ_WHY="BENCH_PGQ=0"
		return
	fi
	if [[ -f $sharedir/extension/pgq.control ]]; then
		PGQ_OK=1
		return
	fi
	if ! is_root; then
		PGQ_WHY="$pkg is not installed and we are not root (apt-get install -y $pkg, then run again)"
		return
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		PGQ_WHY="no apt-get on this machine"
		return
	fi
	cand=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	if [[ -z $cand || $cand == "(none)" ]]; then
		apt-get update -qq </dev/null >/dev/null 2>&1 || true
		cand=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	fi
	if [[ -z $cand || $cand == "(none)" ]]; then
		PGQ_WHY="apt-cache policy $pkg: no installation candidate"
		return
	fi
	echo "== installing $pkg $cand (PgQ, for the comparison)"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" \
		</dev/null >"$BENCH_TMP/apt.log" 2>&1; then
		PGQ_WHY="apt-get install $pkg failed: $(tail -n 1 "$BENCH_TMP/apt.log")"
		return
	fi
	if [[ -f $sharedir/extension/pgq.control ]]; then
		PGQ_OK=1
	else
		PGQ_WHY="$pkg installed but $sharedir/extension/pgq.control is missing"
	fi
}

# ---------------------------------------------------------------------------
# 1. Capture overhead
#
# One database, b_cap, holds every variant: ddl_notify (one no-op subscriber,
# the worker), the do-it-yourself trigger and PgQ's triggers.  A run enables
# the event triggers of one variant and disables the others ("none": all
# disabled).  So every variant creates and drops its tables in the same
# catalogs and the same directory: with separate databases the kernel's cost
# of creating and unlinking files differed by 20-30% between databases (ext4
# inode allocation depends on the directory's history), more than the
# effect measured.
#
# Rounds of "none X none Y none Z": every run of a variant sits between two
# runs without capture, and its ratio is taken against the mean of those two,
# so that a change of the machine's load during the run cancels out as well
# as it can.  The order of X, Y, Z rotates from round to round.
capture_bench()
{
	local comps=(ddln ddln10 diy) v r i k line label m lo hi nprev
	local -A TPS=() CPU=() USR=() SYS=() WCPU=()
	[[ $PGQ_OK == 1 ]] && comps+=(pgq)
	local cl="[${CAP_CLIENTS} client$( ((CAP_CLIENTS > 1)) && echo s)]"
	section "1. capture overhead $cl: pgbench -n -c $CAP_CLIENTS -j $CAP_CLIENTS -T $CAP_SECS (test/bench/ddl.pgbench), $CAP_ROUNDS rounds"
	if [[ -z ${CAP_WORKER:-} ]]; then
		q W postgres "CREATE DATABASE b_cap"
		q_file W b_cap "$FILES/sql/capture_ddln.sql" >/dev/null
		q_file W b_cap "$FILES/sql/capture_diy.sql" >/dev/null
		[[ $PGQ_OK == 1 ]] && q_file W b_cap "$FILES/sql/pgq_capture.sql" >/dev/null
		CAP_WORKER=$(wait_worker W b_cap)
	fi
	echo "   one database, one variant's event triggers enabled per run:"
	echo "   none: no event trigger enabled; ddln: ddl_notify + 1 no-op subscriber + worker (pid $CAP_WORKER);"
	echo "   ddln10: the same with ddl_notify.stream_interval = 10ms instead of the default 2ms (fewer worker rounds);"
	echo "   diy: PL/pgSQL trigger on ddl_command_end inserting into a table"
	if [[ $PGQ_OK == 1 ]]; then
		echo "   pgq: PgQ, PL/pgSQL event triggers (ddl_command_end + sql_drop) calling pgq.insert_event"
	else
		echo "   (PgQ skipped: $PGQ_WHY)"
	fi
	echo "   before each run: queues emptied (wait_for_delivery, TRUNCATE), VACUUM, CHECKPOINT"
	echo "   rounds: none X none Y ...: each ratio is against the mean of the none runs just before and after"
	echo "   cpu = CPU time of the whole cluster (backends, worker, autovacuum...) per pgbench transaction, user+sys"
	# what one pgbench transaction records (seen from inside it)
	cap_set ddln
	echo "   one pgbench transaction (3 DDL) records with ddl_notify: $(psql_c W b_cap -c "BEGIN" \
		-c "CREATE TABLE bench_t0 (id int PRIMARY KEY, v text)" -c "ALTER TABLE bench_t0 ADD COLUMN w int" -c "DROP TABLE bench_t0" \
		-c "SELECT count(*) || ' events: ' || string_agg(trigger_event || ' ' || command_tag || ' ' || COALESCE(object_type, '-'), ', ' ORDER BY id) FROM ddl_notify.event WHERE xid = pg_current_xact_id()" \
		-c "ROLLBACK")"
	for v in none "${comps[@]}"; do
		cap_run "$v" "$CAP_WARMUP" >"$BENCH_TMP/cap.out"
	done

	# n: none runs so far; run r of variant v sits between none runs
	# NPREV[v,r] and NPREV[v,r] + 1
	local n=0
	local -A NPREV=()
	cap_one none "none,$n"
	line="   round 1: none $(fmt "${TPS[none,$n]}" 1)"
	k=${#comps[@]}
	for ((r = 0; r < CAP_ROUNDS; r++)); do
		((r > 0)) && line="   round $((r + 1)):"
		for ((i = 0; i < k; i++)); do
			v=${comps[(i + r) % k]}
			cap_one "$v" "$v,$r"
			NPREV[$v,$r]=$n
			line+=" | $v $(fmt "${TPS[$v,$r]}" 1)"
			[[ $v == ddln* ]] && line+=" (worker $(fmt "${WCPU[$v,$r]}" 2) ms/txn, caught up in ${CATCHUP})"
			n=$((n + 1))
			cap_one none "none,$n"
			line+=" | none $(fmt "${TPS[none,$n]}" 1)"
		done
		echo "$line tps"
	done

	# medians; ratios against the neighbouring none runs
	for ((i = 0; i <= n; i++)); do echo "${TPS[none,$i]}"; done | stats >"$BENCH_TMP/tps.none"
	for ((i = 0; i <= n; i++)); do echo "${CPU[none,$i]}"; done | stats >"$BENCH_TMP/cpu.none"
	for ((i = 0; i <= n; i++)); do echo "${USR[none,$i]}"; done | stats >"$BENCH_TMP/usr.none"
	for ((i = 0; i <= n; i++)); do echo "${SYS[none,$i]}"; done | stats >"$BENCH_TMP/sys.none"
	for v in "${comps[@]}"; do
		for ((r = 0; r < CAP_ROUNDS; r++)); do echo "${TPS[$v,$r]}"; done | stats >"$BENCH_TMP/tps.$v"
		for ((r = 0; r < CAP_ROUNDS; r++)); do echo "${CPU[$v,$r]}"; done | stats >"$BENCH_TMP/cpu.$v"
		for ((r = 0; r < CAP_ROUNDS; r++)); do echo "${USR[$v,$r]}"; done | stats >"$BENCH_TMP/usr.$v"
		for ((r = 0; r < CAP_ROUNDS; r++)); do echo "${SYS[$v,$r]}"; done | stats >"$BENCH_TMP/sys.$v"
		for ((r = 0; r < CAP_ROUNDS; r++)); do
			nprev=${NPREV[$v,$r]}
			awk -v x="${TPS[$v,$r]}" -v a="${TPS[none,$nprev]}" -v b="${TPS[none,$((nprev + 1))]}" 'BEGIN { printf "%.6f\n", x / ((a + b) / 2) }'
		done | stats >"$BENCH_TMP/ratio.$v"
		for ((r = 0; r < CAP_ROUNDS; r++)); do
			nprev=${NPREV[$v,$r]}
			awk -v x="${CPU[$v,$r]}" -v a="${CPU[none,$nprev]}" -v b="${CPU[none,$((nprev + 1))]}" 'BEGIN { printf "%.6f\n", ((a + b) / 2) / x }'
		done | stats >"$BENCH_TMP/cpuratio.$v"
		for ((r = 0; r < CAP_ROUNDS; r++)); do
			nprev=${NPREV[$v,$r]}
			awk -v x="${USR[$v,$r]}" -v a="${USR[none,$nprev]}" -v b="${USR[none,$((nprev + 1))]}" 'BEGIN { printf "%.6f\n", ((a + b) / 2) / x }'
		done | stats >"$BENCH_TMP/usrratio.$v"
	done
	for v in none "${comps[@]}"; do
		case $v in
		none) label="1. $cl no capture" ;;
		ddln) label="1. $cl ddl_notify (+ worker)" ;;
		ddln10) label="1. $cl ddl_notify, stream_interval 10ms" ;;
		diy) label="1. $cl DIY PL/pgSQL trigger" ;;
		pgq) label="6. $cl PgQ capture triggers" ;;
		esac
		read -r m lo hi _ <"$BENCH_TMP/tps.$v"
		printf '   %-5s tps %7.1f (%.1f-%.1f)' "$v" "$m" "$lo" "$hi"
		row "$label: DDL tps (pgbench txn = 3 DDL)" "$(fmt "$m" 1) ($(fmt "$lo" 1)-$(fmt "$hi" 1))" "" ""
		read -r m lo hi _ <"$BENCH_TMP/cpu.$v"
		printf ';  cluster CPU ms/txn %.2f (%.2f-%.2f)' "$m" "$lo" "$hi"
		row "$label: cluster CPU ms/txn (user+sys)" "$(fmt "$m" 2) ($(fmt "$lo" 2)-$(fmt "$hi" 2))" "" ""
		read -r m lo hi _ <"$BENCH_TMP/usr.$v"
		printf ' = user %.2f' "$m"
		read -r m lo hi _ <"$BENCH_TMP/sys.$v"
		printf ' + sys %.2f\n' "$m"
	done
	for v in ddln ddln10; do
		for ((r = 0; r < CAP_ROUNDS; r++)); do echo "${WCPU[$v,$r]}"; done | stats >"$BENCH_TMP/wcpu"
		read -r m lo hi _ <"$BENCH_TMP/wcpu"
		printf '   of which the ddl_notify worker, %-6s (delivering 6 events per txn): %.2f ms/txn (%.2f-%.2f)\n' "$v" "$m" "$lo" "$hi"
		row "1. $cl   of which the ddl_notify worker, $v, CPU ms/txn" "$(fmt "$m" 2) ($(fmt "$lo" 2)-$(fmt "$hi" 2))" "" ""
	done

	local tr_ddln cr_ddln
	read -r m lo hi _ <"$BENCH_TMP/ratio.ddln"
	tr_ddln=$m
	printf '   tps ratio ddl_notify/none: median %.3f (%.3f-%.3f)  goal >= 0.97: %s\n' "$m" "$lo" "$hi" "$(verdict "$m" '>=' 0.97)"
	row "1. $cl capture tps ratio ddl_notify / none" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" ">= 0.97" "$(verdict "$m" '>=' 0.97)"
	read -r m lo hi _ <"$BENCH_TMP/cpuratio.ddln"
	cr_ddln=$m
	printf '   CPU ratio none/ddl_notify (the tps ratio of a CPU-bound server): median %.3f (%.3f-%.3f)  goal >= 0.97: %s\n' "$m" "$lo" "$hi" "$(verdict "$m" '>=' 0.97)"
	row "1. $cl capture CPU ratio none / ddl_notify" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" ">= 0.97" "$(verdict "$m" '>=' 0.97)"
	read -r m lo hi _ <"$BENCH_TMP/usrratio.ddln"
	printf '   user-CPU ratio none/ddl_notify: median %.3f (%.3f-%.3f)\n' "$m" "$lo" "$hi"
	row "1. $cl capture user-CPU ratio none / ddl_notify" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" "" ""
	read -r m lo hi _ <"$BENCH_TMP/ratio.ddln10"
	printf '   with stream_interval 10ms: tps ratio median %.3f (%.3f-%.3f)' "$m" "$lo" "$hi"
	row "1. $cl capture tps ratio ddl_notify stream_interval 10ms / none" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" "(setting)" "$(verdict "$m" '>=' 0.97)"
	read -r m lo hi _ <"$BENCH_TMP/cpuratio.ddln10"
	printf ', CPU ratio median %.3f (%.3f-%.3f)\n' "$m" "$lo" "$hi"
	row "1. $cl capture CPU ratio none / ddl_notify stream_interval 10ms" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" "(setting)" "$(verdict "$m" '>=' 0.97)"

	read -r m lo hi _ <"$BENCH_TMP/ratio.diy"
	printf '   tps ratio DIY trigger/none: median %.3f (%.3f-%.3f)  (the issue measured ~0.88)\n' "$m" "$lo" "$hi"
	row "1. $cl capture tps ratio DIY PL/pgSQL / none" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" "(baseline ~0.88)" "-"
	row "1. $cl ddl_notify tps ratio - DIY tps ratio" "$(awk -v a="$tr_ddln" -v b="$m" 'BEGIN { printf "%+.3f", a - b }')" "> 0 (clearly)" \
		"$(awk -v a="$tr_ddln" -v b="$m" 'BEGIN { print (a > b) ? "PASS" : "MISS" }')"
	read -r m lo hi _ <"$BENCH_TMP/cpuratio.diy"
	printf '   CPU ratio none/DIY trigger: median %.3f (%.3f-%.3f)\n' "$m" "$lo" "$hi"
	row "1. $cl capture CPU ratio none / DIY PL/pgSQL" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" "(baseline)" "-"
	row "1. $cl ddl_notify CPU ratio - DIY CPU ratio" "$(awk -v a="$cr_ddln" -v b="$m" 'BEGIN { printf "%+.3f", a - b }')" "> 0 (clearly)" \
		"$(awk -v a="$cr_ddln" -v b="$m" 'BEGIN { print (a > b) ? "PASS" : "MISS" }')"
	if [[ $PGQ_OK == 1 ]]; then
		read -r m lo hi _ <"$BENCH_TMP/ratio.pgq"
		printf '   tps ratio PgQ triggers/none: median %.3f (%.3f-%.3f)' "$m" "$lo" "$hi"
		row "6. $cl capture tps ratio PgQ / none" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" "(comparison)" "-"
		read -r m lo hi _ <"$BENCH_TMP/cpuratio.pgq"
		printf '; CPU ratio none/PgQ: median %.3f (%.3f-%.3f)\n' "$m" "$lo" "$hi"
		row "6. $cl capture CPU ratio none / PgQ" "$(fmt "$m" 3) ($(fmt "$lo" 3)-$(fmt "$hi" 3))" "(comparison)" "-"
	else
		row "6. $cl PgQ capture" "skipped" "" "$PGQ_WHY"
	fi
}

# cap_set VARIANT: enable that variant's event triggers in b_cap, disable
# every other one (none: all disabled).  ddl_notify's are ENABLE ALWAYS, as
# its install script leaves them.  ddln10 is ddln with the worker's
# ddl_notify.stream_interval at 10ms (reloaded; the others run with 2ms).
cap_set()
{
	local v=$1 t mode sql="" si=2
	# ddln10: ddl_notify with a longer stream interval (a reload setting)
	if [[ $v == ddln10 ]]; then
		si=10
		v=ddln
	fi
	q W b_cap "ALTER SYSTEM SET ddl_notify.stream_interval = '${si}ms'"
	q W b_cap "SELECT pg_reload_conf()" >/dev/null
	for t in ddl_notify_ddl_command_end ddl_notify_sql_drop ddl_notify_table_rewrite; do
		mode=DISABLE
		[[ $v == ddln ]] && mode="ENABLE ALWAYS"
		sql+="ALTER EVENT TRIGGER $t $mode; "
	done
	mode=DISABLE
	[[ $v == diy ]] && mode=ENABLE
	sql+="ALTER EVENT TRIGGER ddl_log_capture $mode; "
	if [[ $PGQ_OK == 1 ]]; then
		mode=DISABLE
		[[ $v == pgq ]] && mode=ENABLE
		sql+="ALTER EVENT TRIGGER pgq_ddl_capture $mode; ALTER EVENT TRIGGER pgq_ddl_capture_drop $mode; "
	fi
	q W b_cap "$sql"
}

# cap_one VARIANT KEY: one measured run, its figures stored under KEY in the
# caller's TPS, CPU, USR, SYS, WCPU; CATCHUP set for ddln.
cap_one()
{
	local v=$1 key=$2 t c u s w
	# not in a process substitution: a failure must stop the run
	cap_run "$v" "$CAP_SECS" >"$BENCH_TMP/cap.out"
	read -r t c u s w CATCHUP <"$BENCH_TMP/cap.out"
	TPS[$key]=$t CPU[$key]=$c USR[$key]=$u SYS[$key]=$s WCPU[$key]=$w
}

# cap_run VARIANT SECONDS: switch b_cap to the variant, empty the queues,
# VACUUM, CHECKPOINT, run pgbench.  Prints "TPS CPU USER SYS WORKER CATCHUP":
# the cluster's CPU time per transaction in ms (all, user, sys), the
# ddl_notify worker's share, and for ddln how long the worker took to finish
# after pgbench did.
cap_run()
{
	local v=$1 secs=$2 out u0 s0 u1 s1 w0 w1 n tps catchup=-
	q W b_cap "SELECT ddl_notify.wait_for_delivery('300s')" >/dev/null
	cap_set "$v"
	q W b_cap "TRUNCATE public.ddl_log"
	if [[ $PGQ_OK == 1 ]]; then
		q W b_cap "DO \$\$DECLARE p text; BEGIN SELECT queue_data_pfx INTO p FROM pgq.queue WHERE queue_name = 'ddl'; EXECUTE format('TRUNCATE %s_0, %s_1, %s_2', p, p, p); END\$\$"
	fi
	q W b_cap "VACUUM" >/dev/null
	q W b_cap "CHECKPOINT" >/dev/null
	out=$BENCH_TMP/pgbench.out
	read -r u0 s0 < <(cluster_cpu_ms W) || die "could not read the cluster's CPU time"
	w0=$(proc_ticks "$CAP_WORKER")
	if ! as_user pgbench -h "$BENCH_TMP/W" -p "${BENCH_PORT[W]}" -n -c "$CAP_CLIENTS" -j "$CAP_CLIENTS" \
		-T "$secs" -f "$FILES/ddl.pgbench" b_cap >"$out" 2>&1 </dev/null; then
		cat "$out" >&2
		die "pgbench failed ($v)"
	fi
	if [[ $v == ddln* ]]; then
		# the worker's work for this run counts, even when it ends after pgbench
		catchup=$(now_ms)
		q W b_cap "SELECT ddl_notify.wait_for_delivery('300s')" >/dev/null
		catchup="$(awk -v a="$catchup" -v b="$(now_ms)" 'BEGIN { printf "%d", b - a }')ms"
	fi
	w1=$(proc_ticks "$CAP_WORKER")
	read -r u1 s1 < <(cluster_cpu_ms W) || die "could not read the cluster's CPU time"
	if grep -q "number of failed transactions: [1-9]" "$out"; then
		cat "$out" >&2
		die "pgbench reported failed transactions ($v)"
	fi
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out" | head -n 1)
	n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out" | head -n 1)
	[[ -n $tps && -n $n && $n -gt 0 ]] || { cat "$out" >&2; die "could not read pgbench's output"; }
	awk -v t="$tps" -v n="$n" -v u="$((u1 - u0))" -v s="$((s1 - s0))" -v w="$((w1 - w0))" -v hz="$(getconf CLK_TCK)" -v cu="$catchup" \
		'BEGIN { printf "%s %.4f %.4f %.4f %.4f %s\n", t, (u + s) / n, u / n, s / n, w * 1000 / hz / n, cu }'
}

# ---------------------------------------------------------------------------
# 2. Latency, commit to handler start, with the worker
latency_bench()
{
	local f
	section "2. latency from COMMIT of a DDL to its handler's start, worker, $LAT_N DDL one at a time"
	q W postgres "CREATE DATABASE b_lat"
	q_file W b_lat "$FILES/sql/latency.sql" >/dev/null
	echo "   worker in b_lat: pid $(wait_worker W b_lat)"
	f=$BENCH_TMP/latency.sql
	# each CREATE TABLE commits on its own, then we wait until it is handled
	awk -v n="$LAT_N" 'BEGIN { for (i = 1; i <= n; i++) printf "CREATE TABLE lat_%d (id int);\nSELECT ddl_notify.wait_for_delivery(%c60s%c);\n", i, 39, 39 }' >"$f"
	lat_series "each delivered before the next" "" "$f" "$LAT_N"
	# the same DDL back to back, as a migration runs them: the worker
	# gathers a stream of commits (a round per 10 ms at most)
	awk -v n="$LAT_N" 'BEGIN { for (i = 1; i <= n; i++) printf "CREATE TABLE latb_%d (id int);\n", i; printf "SELECT ddl_notify.wait_for_delivery(%c60s%c);\n", 39, 39 }' >"$f"
	lat_series "back to back" " back to back" "$f" 1
}

# lat_series LABEL ROWLABEL FILE WAITS: run FILE in b_lat (WAITS calls of
# wait_for_delivery must say true), print the percentiles of its events.
lat_series()
{
	local label=$1 rowlabel=$2 f=$3 waits=$4 n p50 p90 p99 max
	q W b_lat "TRUNCATE public.bench_latency"
	n=$(q_file W b_lat "$f" | grep -c '^t$' || true)
	[[ $n == "$waits" ]] || die "latency ($label): wait_for_delivery returned true $n times, not $waits"
	read -r n p50 p90 p99 max < <(q W b_lat "
		SELECT count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),
			   percentile_cont(0.9) WITHIN GROUP (ORDER BY ms),
			   percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), max(ms)
		FROM (SELECT extract(epoch FROM l.handler_start - pg_xact_commit_timestamp(xid(l.xid))) * 1000 AS ms
			  FROM public.bench_latency l) s" | tr '|' ' ') ||
		die "latency: could not read the percentiles"
	printf '   %s: %d events: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n' "$label" "$n" "$p50" "$p90" "$p99" "$max"
	printf '   goal p50 <= 2 ms: %s; p99 <= 20 ms: %s\n' "$(verdict "$p50" '<=' 2)" "$(verdict "$p99" '<=' 20)"
	row "2. latency$rowlabel commit->handler p50 (ms)" "$(fmt "$p50" 3)" "<= 2" "$(verdict "$p50" '<=' 2)"
	row "2. latency$rowlabel commit->handler p90 (ms)" "$(fmt "$p90" 3)" "" ""
	row "2. latency$rowlabel commit->handler p99 (ms)" "$(fmt "$p99" 3)" "<= 20" "$(verdict "$p99" '<=' 20)"
	row "2. latency$rowlabel commit->handler max (ms)" "$(fmt "$max" 3)" "" ""
}

# ---------------------------------------------------------------------------
# 4 + 5. Memory of the worker draining a large backlog, then table hygiene
mem_snapshot()
{
	printf '%s %s %s %s\n' "$(rss_kb "$1" VmRSS)" "$(rss_kb "$1" RssAnon)" "$(rss_kb "$1" RssShmem)" "$(rss_kb "$1" VmHWM)"
}

memory_bench()
{
	local pid f t0 s idle_rss idle_anon idle_shm idle_hwm peak_rss peak_anon hwm secs rate
	local grow_rss grow_anon sampler build_ms
	section "4. memory: the worker drains a backlog of $MEM_EVENTS events (1 no-op subscriber)"
	q W postgres "CREATE DATABASE b_mem"
	q_file W b_mem "$FILES/sql/drain.sql" >/dev/null
	q W b_mem "SELECT ddl_notify.subscribe('mem', 'public.bench_noop(ddl_notify.event)')" >/dev/null
	pid=$(wait_worker W b_mem)
	# warm-up: plans prepared, caches filled
	f=$BENCH_TMP/warm.sql
	gen_comments "$f" 2000
	q_file W b_mem "$f"
	q W b_mem "SELECT ddl_notify.wait_for_delivery('120s')" >/dev/null
	read -r idle_rss idle_anon idle_shm idle_hwm < <(mem_snapshot "$pid") ||
		die "could not read a result (see the messages above)"
	q W b_mem "SELECT pg_log_backend_memory_contexts($pid)" >/dev/null
	echo "   worker pid $pid after a 2000-event warm-up: VmRSS $idle_rss kB (RssAnon $idle_anon, RssShmem $idle_shm), VmHWM $idle_hwm kB"

	# Hold the worker off while the backlog is built: a subscriber whose
	# next retry lies in the future is not due, and the worker skips it.
	# (Not a lock held in an open transaction: that would hold back the
	# xmin horizon, and the backlog's repeated COMMENT on one row would slow
	# down quadratically, a PostgreSQL effect that has nothing to do with us.)
	q W b_mem "UPDATE ddl_notify.subscriber SET next_retry_at = now() + interval '1 day' WHERE name = 'mem'"
	f=$BENCH_TMP/backlog.sql
	gen_comments "$f" "$MEM_EVENTS"
	t0=$(now_ms)
	q_file W b_mem "$f"
	build_ms=$(awk -v a="$t0" -v b="$(now_ms)" 'BEGIN { printf "%d", b - a }')
	s=$(q W b_mem "SELECT count(*) FROM ddl_notify.event")
	echo "   backlog built: $s events (COMMENT ON TABLE, 1000 per transaction) in $build_ms ms; worker VmRSS now $(rss_kb "$pid" VmRSS) kB"

	# sample the worker every 50 ms while it drains
	f=$BENCH_TMP/rss.samples
	: >"$f"
	(
		while kill -0 "$pid" 2>/dev/null; do
			mem_snapshot "$pid" >>"$f"
			sleep 0.05
		done
	) &
	sampler=$!
	BENCH_CHILDREN+=("$sampler")
	t0=$(q W b_mem "SELECT clock_timestamp()")
	q W b_mem "UPDATE ddl_notify.subscriber SET next_retry_at = NULL WHERE name = 'mem'"
	# wake the worker at once (a DDL commit sets its latch): one more event
	q W b_mem "COMMENT ON TABLE public.bench_target IS 'go'"
	# halfway through, the worker logs its memory contexts
	for _ in $(seq 1 3000); do
		s=$(q W b_mem "SELECT count(*) FROM ddl_notify.event")
		((s <= MEM_EVENTS / 2)) && break
		sleep 0.2
	done
	q W b_mem "SELECT pg_log_backend_memory_contexts($pid)" >/dev/null
	s=$(q W b_mem "SELECT ddl_notify.wait_for_delivery('900s')")
	[[ $s == t ]] || die "memory: the backlog was not delivered within 15 minutes"
	secs=$(q W b_mem "SELECT extract(epoch FROM last_delivered_at - '$t0'::timestamptz) FROM ddl_notify.subscriber WHERE name = 'mem'")
	q W b_mem "SELECT pg_log_backend_memory_contexts($pid)" >/dev/null
	# the worker logs its memory contexts when it next checks for interrupts
	for _ in $(seq 1 50); do
		(($(grep -c "\[$pid\].*Grand total" "$(cluster_log W)") >= 3)) && break
		sleep 0.1
	done
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	read -r peak_rss peak_anon < <(awk 'BEGIN { r = 0; a = 0 } { if ($1 > r) r = $1; if ($2 > a) a = $2 } END { print r, a }' "$f") ||
		die "could not read a result (see the messages above)"
	hwm=$(rss_kb "$pid" VmHWM)
	rate=$(awk -v n="$((MEM_EVENTS + 1))" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
	grow_rss=$(awk -v a="$peak_rss" -v b="$idle_rss" 'BEGIN { printf "%.1f", (a - b) / 1024 }')
	grow_anon=$(awk -v a="$peak_anon" -v b="$idle_anon" 'BEGIN { printf "%.1f", (a - b) / 1024 }')
	echo "   drained $((MEM_EVENTS + 1)) events in $(fmt "$secs" 2) s: $rate deliveries/s (1 subscriber, backlog of $MEM_EVENTS)"
	echo "   $(wc -l <"$f") samples: peak VmRSS $peak_rss kB (+$grow_rss MB over idle), peak RssAnon $peak_anon kB (+$grow_anon MB), VmHWM $hwm kB"
	echo "   (VmRSS counts the shared buffers the worker touched, RssShmem; RssAnon is its private memory)"
	echo "   memory contexts of the worker (server log, pg_log_backend_memory_contexts), idle, halfway, after the drain:"
	grep -E "\[$pid\].*Grand total" "$(cluster_log W)" | sed 's/^.*Grand total/      Grand total/' | tail -n 3
	echo "   the largest contexts halfway:"
	awk -v pid="[$pid]" '
		index($0, pid) && /Grand total/ { dump++; next }
		index($0, pid) && dump == 1 && match($0, /level: [0-9]+; .*: [0-9]+ total in/) {
			line = substr($0, RSTART, RLENGTH); sub(/ total in$/, "", line)
			n = line; sub(/^.*: /, "", n)
			name = line; sub(/^level: [0-9]+; /, "", name); sub(/: [0-9]+$/, "", name)
			print n, name
		}' "$(cluster_log W)" | sort -rn | head -n 6 | awk '{ n = $1; $1 = ""; printf "      %9d bytes %s\n", n, $0 }' || true
	printf '   goal: growth < 20 MB: VmRSS %s, private (RssAnon) %s\n' "$(verdict "$grow_rss" '<=' 20)" "$(verdict "$grow_anon" '<=' 20)"
	row "3b. worker drain rate, 1 sub, ${MEM_EVENTS} backlog (deliv/s)" "$rate" "(>= 20000 at 10k x 4)" "$(verdict "$rate" '>=' 20000)"
	row "4. worker VmRSS idle / peak (MB)" "$(fmt "$(awk -v a="$idle_rss" 'BEGIN{print a/1024}')" 1) / $(fmt "$(awk -v a="$peak_rss" 'BEGIN{print a/1024}')" 1)" "" ""
	row "4. worker VmRSS growth draining ${MEM_EVENTS} (MB)" "$grow_rss" "< 20" "$(verdict "$grow_rss" '<=' 20)"
	row "4. worker RssAnon (private) growth (MB)" "$grow_anon" "< 20" "$(verdict "$grow_anon" '<=' 20)"

	hygiene_bench
}

event_sizes()
{
	q W b_mem "SELECT pg_total_relation_size('ddl_notify.event'), pg_relation_size('ddl_notify.event'),
		pg_indexes_size('ddl_notify.event'),
		COALESCE(pg_total_relation_size(NULLIF(reltoastrelid, 0)), 0)
		FROM pg_class WHERE oid = 'ddl_notify.event'::regclass" | tr '|' ' '
}

event_stats()
{
	q W b_mem "SELECT format('n_live_tup %s, n_dead_tup %s, n_tup_ins %s, n_tup_del %s, n_ins_since_vacuum %s, autovacuum_count %s, last_autovacuum %s',
		n_live_tup, n_dead_tup, n_tup_ins, n_tup_del, n_ins_since_vacuum, autovacuum_count, COALESCE(last_autovacuum::text, 'never'))
		FROM pg_stat_user_tables WHERE relid = 'ddl_notify.event'::regclass"
}

hygiene_bench()
{
	local total heap idx toast total0 heap0 idx0 t waited=0 goal_bytes v
	section "5. table hygiene: ddl_notify.event after the drain (autovacuum_naptime = $NAPTIME, no manual VACUUM)"
	read -r total0 heap0 idx0 toast < <(event_sizes) ||
		die "could not read a result (see the messages above)"
	echo "   right after the drain: total $((total0 / 1024)) kB (heap $((heap0 / 1024)) kB, indexes $((idx0 / 1024)) kB, toast $((toast / 1024)) kB)"
	echo "   pg_stat_user_tables: $(event_stats)"
	# "small": the heap truncated back to at most 1 MB (the index keeps its
	# pages for reuse: btree files do not shrink without REINDEX).
	goal_bytes=$((1024 * 1024))
	t=$SECONDS
	while :; do
		read -r total heap idx toast < <(event_sizes) ||
		die "could not read a result (see the messages above)"
		((heap <= goal_bytes)) && break
		((SECONDS - t >= HYG_TIMEOUT)) && break
		sleep 2
	done
	waited=$((SECONDS - t))
	echo "   after ${waited} s: total $((total / 1024)) kB (heap $((heap / 1024)) kB, indexes $((idx / 1024)) kB, toast $((toast / 1024)) kB)"
	echo "   pg_stat_user_tables: $(event_stats)"
	grep -E 'automatic (vacuum|analyze) of table "b_mem.ddl_notify.event"' "$(cluster_log W)" | tail -n 3 | sed 's/^/   log: /' || true
	v=$( ((heap <= goal_bytes)) && echo PASS || echo MISS)
	printf '   goal: heap back to <= 1 MB without VACUUM FULL (waited up to %d s): %s\n' "$HYG_TIMEOUT" "$v"
	row "5. event table right after drain: total (heap) kB" "$((total0 / 1024)) ($((heap0 / 1024)))" "" ""
	row "5. event table after autovacuum, ${waited}s: total (heap) kB" "$((total / 1024)) ($((heap / 1024)))" "heap <= 1024" "$v"
}

# ---------------------------------------------------------------------------
# 3 + 6. Drain rate with CALL ddl_notify.deliver(), and PgQ consumers
drain_bench()
{
	local variants=(ok retry dead) r i k v n
	local -A RATE=() CALLMS=()
	[[ $PGQ_OK == 1 ]] && variants+=(pgq)
	section "3. drain: $DRAIN_N CREATE TABLE events in one transaction, CALL ddl_notify.deliver() (no worker), $DRAIN_ROUNDS round(s)"
	echo "   subscribers: 4 with a no-op PL/pgSQL handler (BEGIN NULL; END);"
	echo "   ok = those 4; retry = + a 5th that always fails, max_attempts NULL (backoff from ddl_notify.retry_initial_delay);"
	echo "   dead = + a 5th that always fails, max_attempts 1 (every event goes to dead_letter)"
	[[ $PGQ_OK == 1 ]] && echo "   pgq = 4 PgQ consumers (next_batch/get_batch_events/finish_batch), a no-op PL/pgSQL call per event, same backlog"
	echo "   rate = 4 x $DRAIN_N deliveries / (last delivery of the 4 - start of CALL)"
	echo "   each backlog meets the statistics of the empty queue (ANALYZE before it is created), as a burst after a drain does"
	q M postgres "CREATE DATABASE drain"
	q_file M drain "$FILES/sql/drain.sql" >/dev/null
	gen_create "$BENCH_TMP/create.sql" "$DRAIN_N" d
	gen_drop "$BENCH_TMP/drop.sql" "$DRAIN_N" d
	if [[ $PGQ_OK == 1 ]]; then
		q M postgres "CREATE DATABASE pgqd"
		q_file M pgqd "$FILES/sql/pgq_capture.sql" >/dev/null
		q_file M pgqd "$FILES/sql/pgq_consumer.sql" >/dev/null
		q M pgqd "SELECT pgq.register_consumer('ddl', 'c' || g) FROM generate_series(1, 4) g" >/dev/null
	fi
	# warm-up: one small round so that the first measured one is not the cold one
	drain_round ok 500 >"$BENCH_TMP/round.out"
	k=${#variants[@]}
	for ((r = 0; r < DRAIN_ROUNDS; r++)); do
		local line="   round $((r + 1)):"
		for ((i = 0; i < k; i++)); do
			v=${variants[(i + r) % k]}
			# not in a process substitution: a failure must stop the run
			drain_round "$v" "$DRAIN_N" >"$BENCH_TMP/round.out"
			read -r n "RATE[$v,$r]" "CALLMS[$v,$r]" <"$BENCH_TMP/round.out"
			line+=" $v $(fmt "${RATE[$v,$r]}" 0)/s"
			[[ ${CALLMS[$v,$r]} == nan ]] || line+=" (CALL ${CALLMS[$v,$r]} ms)"
			[[ $n == "done" ]] || line+=" ($n)"
			echo "$n" >>"$BENCH_TMP/status.$v"
		done
		echo "$line"
	done
	for v in "${variants[@]}"; do
		for ((r = 0; r < DRAIN_ROUNDS; r++)); do echo "${RATE[$v,$r]}"; done | stats >"$BENCH_TMP/drain.$v"
	done
	local m lo hi mok rm rlo rhi
	read -r mok lo hi _ <"$BENCH_TMP/drain.ok"
	printf '   ok:    %8.0f deliveries/s (min %.0f, max %.0f)  goal >= 20000: %s\n' "$mok" "$lo" "$hi" "$(verdict "$mok" '>=' 20000)"
	row "3. drain ${DRAIN_N} x 4 subs, CALL deliver() (deliv/s)" "$(fmt "$mok" 0) ($(fmt "$lo" 0)-$(fmt "$hi" 0))" ">= 20000" "$(verdict "$mok" '>=' 20000)"
	for v in retry dead; do
		read -r m lo hi _ <"$BENCH_TMP/drain.$v"
		for ((r = 0; r < DRAIN_ROUNDS; r++)); do
			awk -v a="${RATE[$v,$r]}" -v b="${RATE[ok,$r]}" 'BEGIN { printf "%.6f\n", a / b }'
		done | stats >"$BENCH_TMP/drainratio.$v"
		read -r rm rlo rhi _ <"$BENCH_TMP/drainratio.$v"
		printf '   %-5s: %8.0f deliveries/s for the 4 (min %.0f, max %.0f); ratio to ok %.3f (%.3f-%.3f)  goal >= 0.80: %s\n' \
			"$v" "$m" "$lo" "$hi" "$rm" "$rlo" "$rhi" "$(verdict "$rm" '>=' 0.80)"
		m=$(fmt "$m" 0)
		if grep -q timeout "$BENCH_TMP/status.$v" 2>/dev/null; then
			m="<=$m"
			echo "          (at least one round stopped at the ${DRAIN_FAIL_TIMEOUT} s timeout before the 4 had their events: the rate is an upper bound)"
		fi
		if [[ $v == retry ]]; then
			row "3. same + 5th failing, retrying: 4 subs (deliv/s)" "$m ($(fmt "$lo" 0)-$(fmt "$hi" 0))" "" ""
			row "3. ratio retrying-5th / ok" "$(fmt "$rm" 3) ($(fmt "$rlo" 3)-$(fmt "$rhi" 3))" ">= 0.80" "$(verdict "$rm" '>=' 0.80)"
		else
			row "3. same + 5th failing, dead-letter: 4 subs (deliv/s)" "$m ($(fmt "$lo" 0)-$(fmt "$hi" 0))" "" ""
			row "3. ratio dead-lettering-5th / ok" "$(fmt "$rm" 3) ($(fmt "$rlo" 3)-$(fmt "$rhi" 3))" ">= 0.80" "$(verdict "$rm" '>=' 0.80)"
		fi
	done
	if [[ $PGQ_OK == 1 ]]; then
		read -r m lo hi _ <"$BENCH_TMP/drain.pgq"
		printf '   pgq:   %8.0f deliveries/s (min %.0f, max %.0f): %.1fx ddl_notify\n' "$m" "$lo" "$hi" "$(awk -v a="$m" -v b="$mok" 'BEGIN { print a / b }')"
		row "6. PgQ drain ${DRAIN_N} x 4 consumers (deliv/s)" "$(fmt "$m" 0) ($(fmt "$lo" 0)-$(fmt "$hi" 0))" "(comparison)" "-"
	else
		row "6. PgQ drain" "skipped" "" "$PGQ_WHY"
	fi
}

# drain_round VARIANT N: build a backlog of N events, drain it, clean up.
# Prints "STATUS RATE CALL_MS": STATUS is done, or what stopped the wait.
drain_round()
{
	local v=$1 n=$2 status="done" rate callms t0 out bg s waited
	if [[ $v == pgq ]]; then
		drain_round_pgq "$n"
		return
	fi
	gen_create "$BENCH_TMP/create.$n.sql" "$n" d
	gen_drop "$BENCH_TMP/drop.$n.sql" "$n" d
	q M drain "SELECT ddl_notify.subscribe('s' || g, 'public.bench_noop(ddl_notify.event)') FROM generate_series(1, 4) g" >/dev/null
	case $v in
	retry) q M drain "SELECT ddl_notify.subscribe('f5', 'public.bench_fail(ddl_notify.event)')" >/dev/null ;;
	dead) q M drain "SELECT ddl_notify.subscribe('f5', 'public.bench_fail(ddl_notify.event)', max_attempts => 1)" >/dev/null ;;
	esac
	# the statistics a real burst meets: those of the drained, empty queue
	# (autovacuum analyzes it once it is empty), not of the backlog
	q M drain "VACUUM ANALYZE ddl_notify.event" >/dev/null
	q_file M drain "$BENCH_TMP/create.$n.sql" -1
	out=$BENCH_TMP/drain.out
	as_user psql -X -q -A -t -h "$BENCH_TMP/M" -p "${BENCH_PORT[M]}" \
		-d "dbname=drain application_name=bench_drain" \
		-c "SET client_min_messages = warning" \
		-c "SELECT clock_timestamp()" -c "CALL ddl_notify.deliver()" -c "SELECT clock_timestamp()" \
		</dev/null >"$out" 2>&1 &
	bg=$!
	BENCH_CHILDREN+=("$bg")
	t0=$SECONDS
	waited=0
	while kill -0 "$bg" 2>/dev/null; do
		sleep 0.2
		waited=$((waited + 1))
		if ((waited % 5 == 0)); then
			s=$(q M drain "SELECT count(*) FROM ddl_notify.subscriber WHERE name LIKE 's_' AND delivered >= $n")
			if [[ $s == 4 ]]; then
				status="4-done,5th-cancelled"
				q M drain "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'bench_drain'" >/dev/null
				break
			fi
			if ((SECONDS - t0 >= DRAIN_FAIL_TIMEOUT)); then
				status="timeout-${DRAIN_FAIL_TIMEOUT}s"
				q M drain "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'bench_drain'" >/dev/null
				break
			fi
		fi
	done
	wait "$bg" 2>/dev/null || true
	t0=$(sed -n 1p "$out")
	[[ $t0 == 20* ]] || { cat "$out" >&2; die "drain: CALL ddl_notify.deliver() did not start"; }
	callms=$(sed -n 2p "$out")
	if [[ $callms == 20* ]]; then
		callms=$(q M drain "SELECT round(extract(epoch FROM '$callms'::timestamptz - '$t0'::timestamptz) * 1000)")
	else
		callms=nan
	fi
	if [[ $status == "done" ]]; then
		s=$(q M drain "SELECT sum(delivered) FROM ddl_notify.subscriber WHERE name LIKE 's_'")
		[[ $s == $((4 * n)) ]] || die "drain: the 4 subscribers delivered $s events, not $((4 * n))"
	fi
	# the 4 subscribers' deliveries over the time to their last delivery
	rate=$(q M drain "SELECT sum(delivered) / extract(epoch FROM max(last_delivered_at) - '$t0'::timestamptz)
		FROM ddl_notify.subscriber WHERE name LIKE 's_'")
	if [[ $status == timeout* ]]; then
		# not done: what they delivered over the whole wait
		rate=$(q M drain "SELECT sum(delivered) / $DRAIN_FAIL_TIMEOUT.0 FROM ddl_notify.subscriber WHERE name LIKE 's_'")
		status+=",4-delivered-$(q M drain "SELECT sum(delivered) FROM ddl_notify.subscriber WHERE name LIKE 's_'")-of-$((4 * n))"
	fi
	if [[ $v == dead ]]; then
		status+=",5th-dead-lettered-$(q M drain "SELECT dead_letters FROM ddl_notify.subscriber WHERE name = 'f5'")"
	fi
	# clean up: nobody subscribed, the tables dropped, the queue purged
	q M drain "SELECT ddl_notify.unsubscribe(name) FROM ddl_notify.subscriber" >/dev/null
	q_file M drain "$BENCH_TMP/drop.$n.sql" -1
	q M drain "CALL ddl_notify.deliver()" 2>/dev/null
	q M drain "TRUNCATE ddl_notify.dead_letter"
	q M drain "VACUUM" >/dev/null
	echo "$status $rate $callms"
}

drain_round_pgq()
{
	local n=$1 t0 t1 rate s
	gen_create "$BENCH_TMP/create.$n.sql" "$n" d
	gen_drop "$BENCH_TMP/drop.$n.sql" "$n" d
	q_file M pgqd "$BENCH_TMP/create.$n.sql" -1
	s=$(q M pgqd "SELECT pgq.ticker('ddl')")
	[[ -n $s ]] || die "pgq: the ticker made no tick after the backlog"
	q M pgqd "VACUUM ANALYZE" >/dev/null
	s=$(psql_c M pgqd -c "SELECT clock_timestamp()" \
		-c "CALL public.pgq_consume('c1')" -c "CALL public.pgq_consume('c2')" \
		-c "CALL public.pgq_consume('c3')" -c "CALL public.pgq_consume('c4')" \
		-c "SELECT clock_timestamp()")
	t0=$(sed -n 1p <<<"$s")
	t1=$(sed -n 2p <<<"$s")
	[[ $t0 == 20* && $t1 == 20* ]] || die "pgq: the consumers did not run: $s"
	rate=$(q M pgqd "SELECT $((4 * n)) / extract(epoch FROM '$t1'::timestamptz - '$t0'::timestamptz)")
	# clean up: drop the tables, consume those events too (not timed)
	q_file M pgqd "$BENCH_TMP/drop.$n.sql" -1
	q M pgqd "SELECT pgq.ticker('ddl')" >/dev/null
	psql_c M pgqd -c "CALL public.pgq_consume('c1')" -c "CALL public.pgq_consume('c2')" \
		-c "CALL public.pgq_consume('c3')" -c "CALL public.pgq_consume('c4')"
	q M pgqd "VACUUM" >/dev/null
	echo "done $rate nan"
}

# ---------------------------------------------------------------------------
print_summary()
{
	local elapsed=$((SECONDS - T_START))
	{
		echo "ddl_notify benchmark summary ($([[ $QUICK == 1 ]] && echo "BENCH_QUICK=1 smoke run" || echo "full run"), $(date -u '+%Y-%m-%d %H:%M UTC'))"
		echo "PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{print $3}'), $(nproc) CPUs, load average at start $LOAD_START,"
		echo "synchronous_commit = $SYNC, git $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?'), ${elapsed} s"
		echo "Medians of interleaved rounds, (min-max) in parentheses. Goals are informational."
		echo
		awk -F '\t' 'BEGIN { printf "%-66s %-26s %-18s %s\n", "figure", "value", "goal", "verdict"
							  printf "%-66s %-26s %-18s %s\n", "------", "-----", "----", "-------" }
			{ printf "%-66s %-26s %-18s %s\n", $1, $2, $3, $4 }' "$SUMMARY"
	} >"$RESULTS"
	section "summary (also in $RESULTS)"
	cat "$RESULTS"
}

main()
{
	bench_setup
	LOAD_START=$(cut -d ' ' -f 1-3 /proc/loadavg)
	echo "== ddl_notify benchmarks ($([[ $QUICK == 1 ]] && echo quick || echo full)), PostgreSQL $PG_MAJOR, temp dir $BENCH_TMP"
	pgq_prepare

	section "cluster W: shared_preload_libraries = ddl_notify, worker on, track_commit_timestamp, synchronous_commit = $SYNC"
	# the worker of b_mem must stay while its subscriber is held off (memory_bench)
	cluster_start W "shared_preload_libraries = 'ddl_notify'
ddl_notify.worker_idle_timeout = '1h'
track_commit_timestamp = on
synchronous_commit = $SYNC
autovacuum_naptime = $NAPTIME
log_autovacuum_min_duration = 0"
	for CAP_CLIENTS in $CAP_CLIENTS_LIST; do
		capture_bench
	done
	latency_bench
	memory_bench
	cluster_stop W

	section "cluster M: shared_preload_libraries = ddl_notify, ddl_notify.max_workers = 0, synchronous_commit = $SYNC"
	cluster_start M "shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
synchronous_commit = $SYNC
max_locks_per_transaction = 256"
	drain_bench
	cluster_stop M

	section "7. the worker's memory on a backlog of 1 GB of statement text (test/bench/big_text.sh)"
	BIG_TEXT_RESULTS=$BENCH_TMP/big_text.tsv BIG_TEXT_STATEMENTS=$([[ $QUICK == 1 ]] && echo 20 || echo 100) \
		bash "$BENCH_DIR/big_text.sh"
	awk -F '\t' '{ printf "7. worker peak private memory, backlog %s (MB)\t%s (VmHWM %s)\t<= 100\t%s\n", $1 == "a" ? "capped" : "uncapped", $2, $3, $2 <= 100 ? "met" : "NOT met" }' \
		"$BENCH_TMP/big_text.tsv" >>"$SUMMARY"

	section "8. DROP SCHEMA ... CASCADE memory, ddl_notify against a minimal sql_drop trigger (test/bench/drop_memory.sh)"
	DROP_MEMORY_RESULTS=$BENCH_TMP/drop_memory.tsv DROP_TABLES=$([[ $QUICK == 1 ]] && echo 8000 || echo "8000 32000") \
		bash "$BENCH_DIR/drop_memory.sh"
	awk -F '\t' '{ printf "8. DROP SCHEMA of %s tables: ddl_notify (capture_changes %s) own memory per dropped object (kB)\t%s\t<= 2\t%s\n", $1, $2, $3, $3 <= 2 ? "met" : "NOT met" }' \
		"$BENCH_TMP/drop_memory.tsv" >>"$SUMMARY"

	print_summary
}

# Sourced (by a debugging session): define the functions only.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	if [[ -n ${BENCH_TRACE:-} ]]; then
		exec 9>"$BENCH_TRACE"
		BASH_XTRACEFD=9
		set -x
	fi
	main "$@"
fi
