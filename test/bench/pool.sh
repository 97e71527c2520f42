#!/usr/bin/env bash
# test/bench/pool.sh: the delivery worker pool with many databases (issue 16;
# `make bench` runs it after run.sh).
#
# What it measures, on one cluster with BENCH_POOL_DBS databases (default
# 200), one trivial subscriber each (the handler writes clock_timestamp()
# and the event's xid; track_commit_timestamp gives the commit time), and
# ddl_notify.max_workers = 4:
#   1. cold latency: one DDL at a time in a random database with no running
#      worker (ddl_notify.worker_idle_timeout = 1s, and a database is
#      picked only when worker_pool() has no worker there): commit to
#      handler start, p50/p99.  Goal p99 <= 200 ms.
#   2. warm latency: the same in databases whose worker is running.  Goal
#      p50 <= 2 ms.
#   2b. the same with autovacuum off: with 200 databases the autovacuum
#      launcher starts a worker every few hundred milliseconds, and on a
#      2-core machine each process start takes a core for tens of ms: this
#      tells whether the tail of 2 is ddl_notify's.
#   3. one DDL in every database at once (16 clients): from the first commit
#      to the last handler start (and from the last commit).  Goal <= 5 s.
#   3b. the same without the clients' pace: one event pending in every
#      database (written while ddl_notify.max_workers = 0), then a restart
#      with the pool: from the first handler start to the last (the
#      launcher probes every database at start).  Goal <= 5 s.
#   3c. a reference for 3b: what one process per database costs on this
#      machine (a PostgreSQL backend serves one database for its life, so
#      any design pays it): right after a restart, as in 3b, 4 clients
#      open a session in each database in turn (psql \c) and run one
#      statement there.
#   4. a fast subscriber next to one whose handler takes 1 s per event, in
#      one database: the fast one's commit-to-handler p50/p99 (goal: as in
#      2).
#   5. memory: the private memory (RssAnon) of every ddl_notify process,
#      summed, with all databases idle after the idle timeout, and of one
#      worker serving a database.  Goal: no growth per idle database.
#   6. the launcher's look at kept prepared transactions (issue 35: a
#      COMMIT PREPARED runs no ddl_notify code, so the launcher checks the
#      prepared transactions it keeps at least every poll interval): the
#      CPU the whole cluster, and the launcher alone, spend in
#      BENCH_POOL_IDLE_SECS (default 30) with every database idle, first
#      with no prepared transaction, then with one in every database (a
#      CREATE TABLE, prepared, so it holds an event), with the poll
#      interval at its default (5 s) and at 100 ms.  Goal: flat, the same
#      with and without them (no worker started, no database probed).
#      Then every one is committed with COMMIT PREPARED and the time until
#      the last is delivered is printed.
#
# Rules: prints figures, never fails for a missed goal (non-zero only when
# it could not run); throwaway cluster in a temp dir (lib.sh), removed at
# exit.  Environment: BENCH_POOL_DBS (databases), BENCH_POOL_SAMPLES
# (latency samples per series, default 100), BENCH_POOL_IDLE_SECS (part 6,
# default 30), BENCH_POOL_ONLY=prepared (part 6 alone), BENCH_KEEP=1.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NDB=${BENCH_POOL_DBS:-200}
NS=${BENCH_POOL_SAMPLES:-100}
FILES=$BENCH_DIR

# pct FILE: "p50 p99 max n" of the numbers in FILE (one per line)
pct()
{
	sort -g "$1" | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) { print "nan nan nan 0"; exit }
			i50 = int(0.5 * (NR - 1)) + 1; i99 = int(0.99 * (NR - 1)) + 1
			printf "%.3f %.3f %.3f %d\n", v[i50], v[i99], v[NR], NR
		}'
}

# latency_of DB: the commit-to-handler times (ms) of DB's events so far
latency_of()
{
	q P "$1" "SELECT extract(epoch FROM l.handler_start - pg_xact_commit_timestamp(xid(l.xid))) * 1000
		FROM public.bench_latency l"
}

# wait_pool_empty: until the launcher's probes of every database are done
# and the workers have left (the pool lists nothing)
wait_pool_empty()
{
	local n
	for _ in $(seq 1 600); do
		n=$(q P tpl "SELECT count(*) FROM ddl_notify.worker_pool()" 2>/dev/null || echo 1)
		[[ $n == 0 ]] && break
		sleep 0.1
	done
}

# warm_series PREFIX FILE: NS DDL, one at a time, in d1-d4 (whose workers
# run), each delivered before the next; their latencies into FILE
warm_series()
{
	local i db out f
	for i in $(seq 1 "$NS"); do
		db=d$((i % 4 + 1))
		out=$(psql_c P "$db" -c "CREATE TABLE $1$i (a int)" -c "SELECT ddl_notify.wait_for_delivery('60s')")
		[[ $out == t ]] || die "warm ($1): not delivered in $db"
	done
	f=$(bench_file "$2")
	: >"$f"
	for i in 1 2 3 4; do latency_of "d$i" >>"$f"; done
}

main()
{
	local t0 t1 i db out f n p50 p99 max idle_kb idle_n one_kb
	bench_init
	echo "== ddl_notify pool benchmark: $NDB databases, max_workers = 4, PostgreSQL $PG_MAJOR, $(nproc) CPUs, load $(cut -d ' ' -f 1-3 /proc/loadavg)"
	cluster_start P "shared_preload_libraries = 'ddl_notify'
track_commit_timestamp = on
synchronous_commit = off
max_connections = 100
max_worker_processes = 16
max_prepared_transactions = $((NDB + 10))
ddl_notify.max_workers = 4
ddl_notify.worker_idle_timeout = '1s'"

	q P postgres "CREATE DATABASE tpl" >/dev/null
	q_file P tpl "$FILES/sql/latency.sql" >/dev/null
	t0=$(now_ms)
	for i in $(seq 1 "$NDB"); do
		q P postgres "CREATE DATABASE d$i TEMPLATE tpl" >/dev/null
	done
	t1=$(now_ms)
	printf '   created %d databases from a template in %.1f s\n' "$NDB" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1000 }')"
	wait_pool_empty
	q P postgres "SELECT 1" >/dev/null
	if [[ ${BENCH_POOL_ONLY:-} == prepared ]]; then
		prepared_cost
		return
	fi

	echo "-- 1. cold: one DDL at a time in a random database without a worker ($NS samples)"
	f=$(bench_file cold.txt)
	: >"$f"
	for i in $(seq 1 "$NS"); do
		for _ in $(seq 1 50); do
			db=d$((RANDOM % NDB + 1))
			n=$(q P tpl "SELECT count(*) FROM ddl_notify.worker_pool() WHERE database = '$db'")
			[[ $n == 0 ]] && break
		done
		q P "$db" "TRUNCATE public.bench_latency" >/dev/null
		out=$(psql_c P "$db" -c "CREATE TABLE c$i (a int)" -c "SELECT ddl_notify.wait_for_delivery('60s')")
		[[ $out == t ]] || die "cold: not delivered in $db: $out"
		latency_of "$db" >>"$f"
	done
	read -r p50 p99 max n < <(pct "$f")
	printf '   cold commit->handler: p50 %s ms, p99 %s ms, max %s ms (n=%s); goal p99 <= 200 ms: %s\n' "$p50" "$p99" "$max" "$n" "$(verdict "$p99" '<=' 200)"

	echo "-- 2. warm: one DDL at a time in a database with a running worker ($NS samples)"
	q P postgres "ALTER SYSTEM SET ddl_notify.worker_idle_timeout = '10min'" >/dev/null
	q P postgres "SELECT pg_reload_conf()" >/dev/null
	for i in 1 2 3 4; do
		q P "d$i" "TRUNCATE public.bench_latency" >/dev/null
		psql_c P "d$i" -c "CREATE TABLE warmup (a int)" -c "SELECT ddl_notify.wait_for_delivery('60s')" >/dev/null
		q P "d$i" "TRUNCATE public.bench_latency" >/dev/null
	done
	warm_series w warm.txt
	read -r p50 p99 max n < <(pct "$(bench_file warm.txt)")
	printf '   warm commit->handler: p50 %s ms, p99 %s ms, max %s ms (n=%s); goal p50 <= 2 ms: %s\n' "$p50" "$p99" "$max" "$n" "$(verdict "$p50" '<=' 2)"

	# The same again with autovacuum off: with $NDB databases the autovacuum
	# launcher starts a worker every autovacuum_naptime / $NDB seconds, and a
	# process start takes a core for tens of milliseconds on a small machine.
	echo "-- 2b. warm, the same with autovacuum = off (is the tail ours?)"
	q P postgres "ALTER SYSTEM SET autovacuum = off" >/dev/null
	q P postgres "SELECT pg_reload_conf()" >/dev/null
	for i in 1 2 3 4; do q P "d$i" "TRUNCATE public.bench_latency" >/dev/null; done
	warm_series wa warm_noav.txt
	read -r p50 p99 max n < <(pct "$(bench_file warm_noav.txt)")
	printf '   warm commit->handler, autovacuum off: p50 %s ms, p99 %s ms, max %s ms (n=%s)\n' "$p50" "$p99" "$max" "$n"
	q P postgres "ALTER SYSTEM RESET autovacuum" >/dev/null
	q P postgres "SELECT pg_reload_conf()" >/dev/null
	q P postgres "ALTER SYSTEM SET ddl_notify.worker_idle_timeout = '1s'" >/dev/null
	q P postgres "SELECT pg_reload_conf()" >/dev/null
	for _ in $(seq 1 600); do
		n=$(q P postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker'")
		[[ $n == 0 ]] && break
		sleep 0.1
	done

	echo "-- 5. memory with every database idle (after the idle timeout)"
	idle_n=$(q P postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'ddl_notify%'")
	idle_kb=0
	for pid in $(q P postgres "SELECT pid FROM pg_stat_activity WHERE backend_type LIKE 'ddl_notify%'"); do
		idle_kb=$((idle_kb + $(rss_kb "$pid" RssAnon)))
	done
	printf '   %d databases idle: %d ddl_notify process(es) (the launcher), private memory %d kB in all\n' "$NDB" "$idle_n" "$idle_kb"

	echo "-- 3. one DDL in every database at once (16 clients)"
	for i in $(seq 1 "$NDB"); do q P "d$i" "TRUNCATE public.bench_latency" >/dev/null; done
	t0=$(now_ms)
	for i in $(seq 1 "$NDB"); do
		q P "d$i" "CREATE TABLE burst (a int)" >/dev/null &
		if ((i % 16 == 0)); then wait; fi
	done
	wait
	for i in $(seq 1 "$NDB"); do
		out=$(q P "d$i" "SELECT ddl_notify.wait_for_delivery('120s')")
		[[ $out == t ]] || die "burst: not delivered in d$i"
	done
	t1=$(now_ms)
	f=$(bench_file burst.txt)
	: >"$f"
	for i in $(seq 1 "$NDB"); do
		q P "d$i" "SELECT extract(epoch FROM pg_xact_commit_timestamp(xid(l.xid))) * 1000, extract(epoch FROM l.handler_start) * 1000 FROM public.bench_latency l" >>"$f"
	done
	awk -F '|' 'NR == 1 { c = $1; l = $1; h = $2 } { if ($1 < c) c = $1; if ($1 > l) l = $1; if ($2 > h) h = $2; n++ }
		END { printf "   %d databases: first commit to last handler start %.2f s (goal <= 5 s: %s); the commits took %.2f s to issue, the last handler started %.2f s after the last commit\n",
				n, (h - c) / 1000, ((h - c) <= 5000 ? "PASS" : "MISS"), (l - c) / 1000, (h - l) / 1000 }' "$f"
	printf '   (client side, first statement to last wait_for_delivery: %.2f s)\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1000 }')"

	echo "-- 3b. the same burst without the clients' pace: one event pending in every database (written with ddl_notify.max_workers = 0), then a restart with the pool of 4"
	for i in $(seq 1 "$NDB"); do q P "d$i" "TRUNCATE public.bench_latency" >/dev/null; done
	echo "ddl_notify.max_workers = 0" | as_user tee -a "$BENCH_TMP/P/data/postgresql.conf" >/dev/null
	cluster_restart P
	for i in $(seq 1 "$NDB"); do q P "d$i" "CREATE TABLE pending_burst (a int)" >/dev/null; done
	echo "ddl_notify.max_workers = 4" | as_user tee -a "$BENCH_TMP/P/data/postgresql.conf" >/dev/null
	cluster_restart P
	for i in $(seq 1 "$NDB"); do
		out=$(q P "d$i" "SELECT ddl_notify.wait_for_delivery('300s')")
		[[ $out == t ]] || die "restart burst: not delivered in d$i"
	done
	f=$(bench_file burst2.txt)
	: >"$f"
	for i in $(seq 1 "$NDB"); do
		q P "d$i" "SELECT extract(epoch FROM pg_postmaster_start_time()) * 1000, extract(epoch FROM l.handler_start) * 1000 FROM public.bench_latency l" >>"$f"
	done
	awk -F '|' '{ s = $1; if (NR == 1 || $2 < f) f = $2; if (NR == 1 || $2 > h) h = $2; n++ }
		END { printf "   %d databases pending at once: the first handler started %.2f s after the server started, the last %.2f s after the first (goal <= 5 s: %s)\n",
				n, (f - s) / 1000, (h - f) / 1000, ((h - f) <= 5000 ? "PASS" : "MISS") }' "$f"

	# What the machine allows at best to any design with one process per
	# database (a backend serves one database for its life): 4 clients, each
	# opening a session in its quarter of the databases in turn (one psql
	# each, \c from database to database) and running one statement there.
	echo "-- 3c. for comparison: a new session in each of the $NDB databases, 4 at a time, one statement each"
	for c in 0 1 2 3; do
		f=$(bench_file "floor$c.sql")
		: >"$f"
		for i in $(seq $((c + 1)) 4 "$NDB"); do
			printf '\\c d%d\nSELECT 1;\n' "$i" >>"$f"
		done
	done
	# as in 3b, right after a restart (which removes every database's
	# relcache init file), with no pool probing the databases meanwhile
	echo "ddl_notify.max_workers = 0" | as_user tee -a "$BENCH_TMP/P/data/postgresql.conf" >/dev/null
	cluster_restart P
	t0=$(now_ms)
	for c in 0 1 2 3; do
		psql_c P postgres -f "$(bench_file "floor$c.sql")" >/dev/null &
	done
	wait
	t1=$(now_ms)
	printf '   %d sessions, 4 at a time: %.2f s (what a process per database costs on this machine: compare with 3b)\n' "$NDB" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1000 }')"

	echo "ddl_notify.max_workers = 4" | as_user tee -a "$BENCH_TMP/P/data/postgresql.conf" >/dev/null
	cluster_restart P
	wait_pool_empty

	echo "-- 4. a fast subscriber next to one taking 1 s per event, one database ($((NS / 2)) samples)"
	q P d1 "ALTER SYSTEM SET ddl_notify.worker_idle_timeout = '10min'" >/dev/null
	q P d1 "SELECT pg_reload_conf()" >/dev/null
	q P d1 "TRUNCATE public.bench_latency" >/dev/null
	q P d1 "CREATE FUNCTION public.slow(e ddl_notify.event) RETURNS void LANGUAGE sql AS 'SELECT pg_sleep(1)'" >/dev/null
	q P d1 "SELECT ddl_notify.unsubscribe('bench_latency')" >/dev/null
	q P d1 "SELECT ddl_notify.subscribe('a_slow', 'public.slow(ddl_notify.event)')" >/dev/null
	q P d1 "SELECT ddl_notify.subscribe('bench_latency', 'public.bench_latency(ddl_notify.event)')" >/dev/null
	q P d1 "CREATE FUNCTION public.wait_fast(n int) RETURNS void LANGUAGE plpgsql AS
		'BEGIN WHILE (SELECT count(*) FROM public.bench_latency) < n LOOP PERFORM pg_sleep(0.0005); END LOOP; END'" >/dev/null
	q P d1 "TRUNCATE public.bench_latency" >/dev/null
	for i in $(seq 1 $((NS / 2))); do
		q P d1 "CREATE TABLE m$i (a int)" -c "SELECT public.wait_fast($i)" >/dev/null
	done
	f=$(bench_file mixed.txt)
	latency_of d1 >"$f"
	read -r p50 p99 max n < <(pct "$f")
	printf '   fast next to slow, commit->handler: p50 %s ms, p99 %s ms, max %s ms (n=%s); workers serving d1: %s\n' "$p50" "$p99" "$max" "$n" \
		"$(q P d1 "SELECT count(*) FROM ddl_notify.worker_pool() WHERE database = 'd1'")"
	one_kb=0
	for pid in $(q P postgres "SELECT pid FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' AND datname = 'd1'"); do
		one_kb=$(rss_kb "$pid" RssAnon)
		break
	done
	printf '   memory: one worker serving a database: %d kB private\n' "$one_kb"
	q P d1 "SELECT ddl_notify.unsubscribe('a_slow')" >/dev/null
	q P d1 "ALTER SYSTEM SET ddl_notify.worker_idle_timeout = '1s'" >/dev/null
	q P d1 "SELECT pg_reload_conf()" >/dev/null
	prepared_cost
}

# idle_cpu LABEL: the CPU of the cluster and of the launcher over
# BENCH_POOL_IDLE_SECS with every database idle, and the workers that ran
idle_cpu()
{
	local secs=${BENCH_POOL_IDLE_SECS:-30} launcher l0 l1 u0 s0 u1 s1 b0 b1
	launcher=$(q P postgres "SELECT pid FROM pg_stat_activity WHERE backend_type = 'ddl_notify launcher'")
	b0=$(q P postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker'")
	sleep 1	# that session's backend is gone (and reaped) before the first reading
	read -r u0 s0 < <(cluster_cpu_ms P)
	l0=$(proc_ticks "$launcher")
	sleep "$secs"
	read -r u1 s1 < <(cluster_cpu_ms P)
	l1=$(proc_ticks "$launcher")
	b1=$(q P postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker'")
	awk -v l="$1" -v s="$secs" -v c=$((u1 - u0 + s1 - s0)) -v lt=$((l1 - l0)) -v hz="$(getconf CLK_TCK)" -v b0="$b0" -v b1="$b1" 'BEGIN {
		printf "   %s: cluster %.1f ms of CPU per second, launcher %.2f ms per second (over %d s; workers running before/after: %d/%d)\n",
			l, c / s, lt * 1000 / hz / s, s, b0, b1 }'
}

# prepared_cost: part 6 (see the header)
prepared_cost()
{
	local i out t0 t1 started poll
	echo "-- 6. $NDB idle databases with and without a kept prepared transaction in each"
	wait_pool_empty
	for poll in 5s 100ms; do
		q P postgres "ALTER SYSTEM SET ddl_notify.poll_interval = '$poll'" >/dev/null
		q P postgres "SELECT pg_reload_conf()" >/dev/null
		idle_cpu "no prepared transaction, poll_interval $poll"
	done
	for i in $(seq 1 "$NDB"); do
		psql_c P "d$i" -c "BEGIN" -c "CREATE TABLE prep_held (a int)" -c "PREPARE TRANSACTION 'bench_prep_$i'" >/dev/null
	done
	wait_pool_empty
	printf '   prepared transactions: %s; the launcher keeps them (pool.c)\n' \
		"$(q P postgres "SELECT count(*) FROM pg_prepared_xacts")"
	for poll in 5s 100ms; do
		q P postgres "ALTER SYSTEM SET ddl_notify.poll_interval = '$poll'" >/dev/null
		q P postgres "SELECT pg_reload_conf()" >/dev/null
		idle_cpu "one prepared transaction in each of the $NDB databases, poll_interval $poll"
	done
	q P postgres "ALTER SYSTEM RESET ddl_notify.poll_interval" >/dev/null
	q P postgres "SELECT pg_reload_conf()" >/dev/null
	for i in $(seq 1 "$NDB"); do q P "d$i" "TRUNCATE public.bench_latency" >/dev/null; done
	t0=$(now_ms)
	for i in $(seq 1 "$NDB"); do
		q P "d$i" "COMMIT PREPARED 'bench_prep_$i'" >/dev/null
	done
	t1=$(now_ms)
	for i in $(seq 1 "$NDB"); do
		out=$(q P "d$i" "SELECT ddl_notify.wait_for_delivery('300s')")
		[[ $out == t ]] || die "prepared: not delivered in d$i"
	done
	started=$(for i in $(seq 1 "$NDB"); do q P "d$i" "SELECT extract(epoch FROM max(handler_start)) * 1000 FROM public.bench_latency"; done | sort -g | tail -n 1)
	awk -v a="$t0" -v b="$t1" -v h="$started" 'BEGIN {
		printf "   COMMIT PREPARED in each database, one at a time: %.2f s to issue; the last handler started %.2f s after the last COMMIT PREPARED\n",
			(b - a) / 1000, (h - b) / 1000 }'
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
fi
