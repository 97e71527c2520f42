#!/usr/bin/env bash
# test/bench/image_texts.sh: what withholding the texts of relation images
# costs a delivery (issue 35, G10; src/imagetexts.c).  Runs alone, never
# fails for a figure.
#
# What it measures: a throwaway cluster (no worker), a table of 41 columns
# with defaults and CHECK constraints and two indexes; N (default 2000)
# ALTER TABLE ... SET DEFAULT events, each with before, after and changes
# (details about 3.5 kB stored, 23 kB as text).  One subscriber at a time,
# a no-op handler, the backlog drained by one CALL ddl_notify.deliver():
#   su    a superuser's subscriber (texts handed over as stored);
#   appq  a role's subscriber, the role granted SELECT on ddl_notify.event;
#   app   the same role without it: query NULL, image texts withheld.
# Printed per run: wall ms and the CPU ms (user + sys) of the cluster's
# processes, exited backends included (the postmaster's children times).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${N:-2000}
RUNS=${RUNS:-3}

bench_init
cluster_start b "shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
fsync = off"
q b postgres "CREATE EXTENSION ddl_notify" >/dev/null 2>&1
cols=$(python3 -c "print(', '.join(f\"c{i} text DEFAULT 'default value number {i}' CHECK (c{i} <> 'forbidden {i}')\" for i in range(40)))")
q b postgres "CREATE TABLE wide (id int PRIMARY KEY, $cols);
CREATE INDEX ON wide (c1) WHERE c2 <> 'x'; CREATE INDEX ON wide (c3, c4);
CREATE ROLE app; GRANT USAGE ON SCHEMA ddl_notify TO app;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean) TO app;
CREATE SCHEMA appsch AUTHORIZATION app;
CREATE FUNCTION public.h_su(e ddl_notify.event) RETURNS void LANGUAGE sql AS 'SELECT';
SET ROLE app;
CREATE FUNCTION appsch.h_app(e ddl_notify.event) RETURNS void LANGUAGE sql AS 'SELECT';
RESET ROLE;" >/dev/null
python3 -c "
for i in range($N): print(f\"ALTER TABLE wide ALTER COLUMN c{i % 40} SET DEFAULT 'v{i}';\")" >"$BENCH_TMP/ddl.sql"
chmod 644 "$BENCH_TMP/ddl.sql"

# cpu_ms: user + sys ms of the cluster so far
cpu_ms()
{
	cluster_cpu_ms b | awk '{ print $1 + $2 }'
}

run()
{
	local who=$1 t0 t1 c0 c1
	q b postgres "SELECT ddl_notify.unsubscribe(name) FROM ddl_notify.subscriber" >/dev/null
	case $who in
		su) q b postgres "SELECT ddl_notify.subscribe('s', 'public.h_su(ddl_notify.event)')" >/dev/null ;;
		appq) q b postgres "GRANT SELECT ON ddl_notify.event TO app; SET ROLE app;
			SELECT ddl_notify.subscribe('s', 'appsch.h_app(ddl_notify.event)')" >/dev/null ;;
		app) q b postgres "REVOKE SELECT ON ddl_notify.event FROM app; SET ROLE app;
			SELECT ddl_notify.subscribe('s', 'appsch.h_app(ddl_notify.event)')" >/dev/null ;;
	esac
	q_file b postgres "$BENCH_TMP/ddl.sql" >/dev/null
	c0=$(cpu_ms)
	t0=$(now_ms)
	q b postgres "CALL ddl_notify.deliver()" >/dev/null
	t1=$(now_ms)
	c1=$(cpu_ms)
	printf '%-5s %d events: %.0f ms wall, %d ms CPU\n' "$who" "$N" \
		"$(echo "$t1 - $t0" | bc)" "$((c1 - c0))"
}

q b postgres "ALTER TABLE wide ALTER COLUMN c1 SET DEFAULT 'x'" >/dev/null
echo "details of one event: $(q b postgres "SELECT pg_column_size(details) || ' bytes stored, ' || octet_length(details::text) || ' as text' FROM ddl_notify.event ORDER BY id DESC LIMIT 1")"
for ((r = 1; r <= RUNS; r++)); do
	run su
	run appq
	run app
done
