#!/usr/bin/env bash
# test/bench/big_text.sh: the delivery worker's memory while it delivers a
# backlog whose statements total 1 GB of text (issue 18).  `make bench` runs
# it (test/bench/run.sh, section 7); it also runs alone.
#
# What it measures: a throwaway cluster (worker on, shared_buffers 16MB),
# one subscriber whose handler reads each event's query (length(e.query)).
# While the subscriber is held off (next_retry_at in the future), it builds
# a backlog, then lets the worker drain it and samples the worker every
# 20 ms: Private_Dirty + Private_Clean of /proc/PID/smaps_rollup (its
# private memory) and VmHWM of /proc/PID/status (peak RSS, which also counts
# the shared buffers it touched).  Two backlogs:
#   A. 100 DROP TABLE statements of 10 tables each, each statement with a
#      10 MB comment that does not compress (1 GB of statement text, 1,000
#      events), ddl_notify.max_query_length at its default (64 kB stored
#      per event);
#   B. 100 DROP TABLE statements of one table each with the same comment,
#      max_query_length = -1 (no cap: 1 GB stored, 10 MB per event; rows
#      older than the cap look like this), where only
#      ddl_notify.batch_memory (8 MB) bounds a batch.
# It checks that every event was delivered once (the subscriber's counter)
# and that the cluster did not restart (the postmaster's log has no
# "terminated by signal" and the worker kept its pid).
#
# Rules: prints figures, never fails for a missed goal; non-zero exit only
# when the benchmark could not run.  Goal: peak private memory <= 100 MB.
#
# Environment: BIG_TEXT_STATEMENTS (default 100), BIG_TEXT_MB (default 10),
# BENCH_KEEP=1 keeps the temp directory.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NSTMT=${BIG_TEXT_STATEMENTS:-100}
MB=${BIG_TEXT_MB:-10}

# private_kb PID: Private_Clean + Private_Dirty of the process, in kB.
private_kb()
{
	awk '$1 == "Private_Clean:" || $1 == "Private_Dirty:" { s += $2 } END { print s + 0 }' \
		"/proc/$1/smaps_rollup" 2>/dev/null
}

# backlog LABEL OBJECTS_PER_STATEMENT CAP: build the backlog, drain it, report.
backlog()
{
	local label=$1 per=$2 cap=$3 pid f sampler before after peak hwm idle events restarts
	q B bt "UPDATE ddl_notify.subscriber SET next_retry_at = now() + interval '1 day'"
	f=$BENCH_TMP/backlog_$label.sql
	{
		echo "SET ddl_notify.max_query_length = $cap;"
		awk -v n="$NSTMT" -v per="$per" -v mb="$MB" -v label="$label" 'BEGIN {
			for (i = 1; i <= n; i++) {
				t = ""
				for (j = 1; j <= per; j++) {
					printf "CREATE TABLE public.%s_%d_%d ();\n", label, i, j
					t = t (j > 1 ? ", " : "") sprintf("public.%s_%d_%d", label, i, j)
				}
				# the statement runs from a DO block: its text is built in the
				# server, not sent 10 MB at a time by psql
				printf "DO $$DECLARE c text; BEGIN SELECT chunk INTO c FROM public.bt_chunk; "
				printf "EXECUTE format(%cDROP TABLE %s /* %%s */%c, repeat(c, %d)); END$$;\n", 39, t, 39, mb
			}
		}'
	} >"$f"
	q_file B bt "$f" >/dev/null
	events=$(q B bt "SELECT count(*) FROM ddl_notify.event WHERE command_tag = 'DROP TABLE'")
	read -r stored longest < <(q B bt "SELECT sum(octet_length(query)) / 1048576, max(octet_length(query)) FROM ddl_notify.event WHERE command_tag = 'DROP TABLE'" | tr '|' ' ')
	before=$(q B bt "SELECT delivered FROM ddl_notify.subscriber")

	pid=$(wait_worker B bt)
	idle=$(private_kb "$pid")
	f=$BENCH_TMP/samples_$label
	: >"$f"
	(
		while kill -0 "$pid" 2>/dev/null; do
			private_kb "$pid" >>"$f"
			sleep 0.02
		done
	) &
	sampler=$!
	BENCH_CHILDREN+=("$sampler")
	q B bt "UPDATE ddl_notify.subscriber SET next_retry_at = NULL"
	q B bt "COMMENT ON TABLE public.bt_wake IS 'go'"	# wakes the worker
	[[ $(q B bt "SELECT ddl_notify.wait_for_delivery('1800s')") == t ]] ||
		die "big_text: backlog $label was not delivered within 30 minutes"
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	after=$(q B bt "SELECT delivered FROM ddl_notify.subscriber")
	peak=$(sort -n "$f" | tail -n 1)
	hwm=$(rss_kb "$pid" VmHWM)
	restarts=$(grep -c "terminated by signal\|was terminated by\|all server processes terminated" "$(cluster_log B)" || true)
	[[ $(wait_worker B bt) == "$pid" ]] || restarts="$restarts (worker pid changed)"
	echo "   $label: $NSTMT statements x $MB MB of comment (1 GB of statement text in all), $events events," \
		"query stored: $stored MB in all, at most $longest bytes per event (max_query_length = $cap)"
	echo "   $label: delivered $((after - before)) handler calls; worker pid $pid, private memory idle $((idle / 1024)) MB," \
		"peak $((peak / 1024)) MB ($(wc -l <"$f") samples every 20 ms); VmHWM (peak RSS, with shared buffers) $((hwm / 1024)) MB;" \
		"crash restarts: $restarts"
	printf '%s\t%s\t%s\n' "$label" "$((peak / 1024))" "$((hwm / 1024))" >>"$BENCH_TMP/big_text.tsv"
	# keep the worker's VmHWM meaningful for the next backlog: a fresh worker
	q B bt "SELECT pg_terminate_backend($pid)" >/dev/null
	wait_gone "$pid"
}

wait_gone()
{
	for _ in $(seq 1 300); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	die "worker $1 did not exit"
}

main()
{
	bench_init
	echo "== big_text: the worker's memory on a backlog of 1 GB of statement text"
	cluster_start B "shared_preload_libraries = 'ddl_notify'
shared_buffers = 16MB
synchronous_commit = off
max_wal_size = 4GB
ddl_notify.retry_max_delay = '1s'"
	q B postgres "CREATE DATABASE bt"
	q B bt "CREATE EXTENSION ddl_notify" 2>/dev/null
	q B bt "CREATE TABLE public.bt_chunk (chunk text);
		-- 1 MB of hex that does not compress (pglz finds no repeat within its window)
		INSERT INTO public.bt_chunk SELECT string_agg(md5(g::text), '') FROM generate_series(1, 32768) g;
		CREATE TABLE public.bt_wake ();
		CREATE FUNCTION public.bt_len(e ddl_notify.event) RETURNS void
		LANGUAGE plpgsql AS \$\$BEGIN PERFORM length(e.query); END\$\$;
		SELECT ddl_notify.subscribe('bt', 'public.bt_len(ddl_notify.event)');" >/dev/null
	: >"$BENCH_TMP/big_text.tsv"
	backlog a 10 65536
	backlog b 1 -1
	awk -F '\t' '{ if ($2 > p) p = $2 } END { printf "   big_text: peak private memory of the worker %d MB (goal <= 100 MB: %s)\n", p, p <= 100 ? "met" : "NOT met" }' \
		"$BENCH_TMP/big_text.tsv"
	cp "$BENCH_TMP/big_text.tsv" "${BIG_TEXT_RESULTS:-/dev/null}" 2>/dev/null || true
}

main "$@"
