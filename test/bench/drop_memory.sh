#!/usr/bin/env bash
# test/bench/drop_memory.sh: a backend's memory during DROP SCHEMA ... CASCADE
# of thousands of tables, with ddl_notify against a minimal PL/pgSQL sql_drop
# trigger (issue 31, item 5; issue 27: with the relation images on, too).
# `make bench` runs it (test/bench/run.sh, section 8); it also runs alone.
#
# What it measures: a throwaway cluster (shared_buffers 16MB, max_workers 0,
# locks for the drop), a template database holding schema s with N tables
# (id int PRIMARY KEY, a text NOT NULL DEFAULT '', b numeric(10,2): each
# table is 8 dropped objects: table, row and array types, TOAST table and
# index, index, constraint, default).  For each N and each of
#   none        no event trigger at all
#   plpgsql     a minimal PL/pgSQL sql_drop trigger (PERFORM 1): PostgreSQL
#               then keeps its own list of the dropped objects
#   off         ddl_notify with ddl_notify.capture_changes = off
#   on          ddl_notify, capture_changes on (the default): each dropped
#               table's pre-image in its event
# a fresh database from the template and a fresh backend run the DROP SCHEMA;
# the backend is sampled every 20 ms: RssAnon of /proc/PID/status (its
# private memory: not the shared buffers it touched, which VmRSS counts) and,
# at the end, VmHWM (peak RSS, shared buffers included).  Printed: the peak growth of private memory over the backend's
# own before the drop, per configuration, and ddl_notify's own per dropped
# object: (its growth - plpgsql's) / (8 N), beside the goal of 2 kB.
#
# Rules: prints figures, never fails for a missed goal; non-zero exit only
# when the benchmark could not run.
#
# Environment: DROP_TABLES (default "8000 32000"), DROP_MEMORY_RESULTS (a file
# that gets one line per size and configuration: tables, off|on, kB per
# dropped object; test/bench/run.sh reads it), BENCH_KEEP=1 keeps the temp
# directory.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

read -r -a SIZES <<<"${DROP_TABLES:-8000 32000}"
CONFIGS=(none plpgsql off on)
RESULTS=${DROP_MEMORY_RESULTS:-/dev/null}
OBJECTS_PER_TABLE=8

# private_kb PID: the process's anonymous memory (RssAnon: its heap, not the
# shared buffers it touched), in kB.
private_kb()
{
	awk '$1 == "RssAnon:" { print $2 }' "/proc/$1/status" 2>/dev/null
}

bench_init
cluster_start D "shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
shared_buffers = 16MB
max_connections = 20
max_locks_per_transaction = 32768
fsync = off
synchronous_commit = off"

# drop_once N CONFIG: print "growth_kb hwm_kb samples seconds events"
drop_once()
{
	local n=$1 config=$2 db=d_$2 f pidf ready pid base peak hwm t0 t1 bg events
	q D postgres "CREATE DATABASE $db TEMPLATE tmpl_$n" >/dev/null
	case $config in
		plpgsql)
			q D "$db" "CREATE FUNCTION public.on_drop() RETURNS event_trigger LANGUAGE plpgsql AS \$\$BEGIN PERFORM 1; END\$\$;
				CREATE EVENT TRIGGER on_drop ON sql_drop EXECUTE FUNCTION public.on_drop()" >/dev/null ;;
		off | on)
			q D "$db" "CREATE EXTENSION ddl_notify" >/dev/null 2>&1
			q D "$db" "ALTER DATABASE $db SET ddl_notify.capture_changes = $config" >/dev/null ;;
	esac
	f=$(bench_file "samples_${n}_$config")
	pidf=$(bench_file "pid_${n}_$config")
	ready=$(bench_file "ready_${n}_$config")
	: >"$f"
	rm -f "$pidf" "$ready"
	# the backend writes its pid, waits for the sampler's baseline, then drops
	printf 'SET client_min_messages = warning;\n\\o %s\nSELECT pg_backend_pid();\n\\o\n\\! while [ ! -f %s ]; do sleep 0.01; done\nDROP SCHEMA s CASCADE;\n' "$pidf" "$ready" >"$(bench_file "drop_${n}_$config.sql")"
	t0=$(now_ms)
	q_file D "$db" "$(bench_file "drop_${n}_$config.sql")" >/dev/null &
	bg=$!
	while [[ ! -s $pidf ]]; do sleep 0.01; done
	pid=$(tr -d ' \n' <"$pidf")
	base=$(private_kb "$pid")
	touch "$ready"
	while kill -0 "$pid" 2>/dev/null; do
		printf '%s %s\n' "$(private_kb "$pid")" "$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status" 2>/dev/null)" >>"$f"
		sleep 0.02
	done
	wait "$bg" || die "DROP SCHEMA s CASCADE failed ($n tables, $config)"
	t1=$(now_ms)
	peak=$(awk '{ print $1 }' "$f" | sort -n | tail -n 1)
	hwm=$(awk 'NF == 2 && $2 != "" { h = $2 } END { print h + 0 }' "$f")
	events=0
	if [[ $config == off || $config == on ]]; then
		events=$(q D "$db" "SELECT count(*) || ' events, ' || count(*) FILTER (WHERE details ? 'before') || ' with before' FROM ddl_notify.event WHERE command_tag = 'DROP SCHEMA'")
	fi
	q D postgres "DROP DATABASE $db" >/dev/null
	echo "$((peak - base)) $hwm $(wc -l <"$f") $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1000 }') ${events// /_}"
}

echo "== DROP SCHEMA ... CASCADE memory (issue 31 item 5, issue 27): private memory growth of the dropping backend"
for n in "${SIZES[@]}"; do
	q D postgres "CREATE DATABASE tmpl_$n" >/dev/null
	q D "tmpl_$n" "CREATE SCHEMA s" >/dev/null
	for ((from = 1; from <= n; from += 1000)); do
		q D "tmpl_$n" "DO \$\$BEGIN FOR i IN $from..$((from + 999 < n ? from + 999 : n)) LOOP
			EXECUTE format('CREATE TABLE s.t%s (id int PRIMARY KEY, a text NOT NULL DEFAULT '''', b numeric(10,2))', i);
			END LOOP; END\$\$" >/dev/null
	done
	declare -A growth=()
	for config in "${CONFIGS[@]}"; do
		read -r g hwm samples secs events < <(drop_once "$n" "$config")
		growth[$config]=$g
		printf '   %6d tables, %-8s peak private growth %8.1f MB, VmHWM %8.1f MB, %5.1f s (%d samples)%s\n' \
			"$n" "$config" "$(awk -v g="$g" 'BEGIN { print g / 1024 }')" "$(awk -v g="$hwm" 'BEGIN { print g / 1024 }')" \
			"$secs" "$samples" "$([[ $events != 0 ]] && echo ", ${events//_/ }")"
	done
	for config in off on; do
		per=$(awk -v a="${growth[$config]}" -v b="${growth[plpgsql]}" -v n="$n" -v k="$OBJECTS_PER_TABLE" \
			'BEGIN { printf "%.2f", (a - b) / (n * k) }')
		echo "   $n tables: ddl_notify ($config) own memory per dropped object: $per kB (goal <= 2 kB): $(verdict "$per" '<=' 2);" \
			"per dropped table $(awk -v p="$per" -v k="$OBJECTS_PER_TABLE" 'BEGIN { printf "%.1f", p * k }') kB"
		printf '%s\t%s\t%s\n' "$n" "$config" "$per" >>"$RESULTS"
	done
	unset growth
	q D postgres "DROP DATABASE tmpl_$n" >/dev/null
done
