#!/usr/bin/env bash
# test/bench/postgis.sh: what ddl_notify costs CREATE EXTENSION postgis, a
# script of about 1,200 commands, and what it records of it (issue 25; the
# correctness side is test/ecosystem/t/070_postgis.pl).
#
# One cluster with ddl_notify preloaded; each round makes three fresh
# databases: one without ddl_notify, one with it and a subscriber whose
# handler only counts (public.n), and the same with
# ddl_notify.capture_query = off (ALTER DATABASE ... SET), and times CREATE
# EXTENSION postgis in each (rotating which goes first), then DROP EXTENSION
# postgis the same way, waiting for delivery after each.  Prints per side the
# median with min-max of the wall time, and the events delivered for one
# CREATE and one DROP.
#
# Rules: as test/bench/run.sh (prints figures, never fails for a figure;
# non-zero only when it could not run; throwaway cluster, postgres OS user
# when root).  Needs PostGIS in PG_CONFIG's installation
# (postgresql-M-postgis-3; test/ecosystem/run.sh installs it).
#
# Environment: BENCH_ROUNDS (default 5).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS=${BENCH_ROUNDS:-5}
bench_init
[[ -f $("$PG_CONFIG" --sharedir)/extension/postgis.control ]] ||
	die "PostGIS is not installed in $("$PG_CONFIG" --sharedir) (postgresql-$PG_MAJOR-postgis-3)"

cluster_start gis "shared_preload_libraries = 'ddl_notify'
synchronous_commit = off"

# timed CLUSTER DB SQL: the wall time of SQL in ms (psql start excluded:
# \timing inside one session).
timed()
{
	psql_c "$1" "$2" -c '\timing on' -c "$3" | sed -nE 's/^Time: ([0-9.]+) ms.*/\1/p' | tail -n 1
}

SIDES=(without with noquery)
declare -A T
for side in "${SIDES[@]}"; do
	T[create_$side]=
	T[drop_$side]=
done
events_create=
events_drop=
for ((r = 1; r <= ROUNDS; r++)); do
	for side in "${SIDES[@]}"; do
		q gis postgres "CREATE DATABASE ${side}_$r" >/dev/null
		[[ $side != without ]] || continue
		q gis "${side}_$r" "CREATE EXTENSION ddl_notify;
			CREATE TABLE public.n (k bigint, in_ext boolean);
			CREATE FUNCTION public.count(e ddl_notify.event) RETURNS void LANGUAGE sql
				AS 'INSERT INTO public.n VALUES (e.id, e.in_extension)';
			SELECT ddl_notify.subscribe('count', 'public.count(ddl_notify.event)');" >/dev/null
	done
	q gis postgres "ALTER DATABASE noquery_$r SET ddl_notify.capture_query = off" >/dev/null
	order=("${SIDES[@]:r%3}" "${SIDES[@]:0:r%3}")
	for op in create drop; do
		for side in "${order[@]}"; do
			T[${op}_$side]+="$(timed gis "${side}_$r" "${op^^} EXTENSION postgis")"$'\n'
			[[ $side == without ]] ||
				q gis "${side}_$r" "SELECT ddl_notify.wait_for_delivery('300 s')" >/dev/null
		done
		if ((r == 1)); then
			n=$(q gis "with_$r" "SELECT count(*) || ' events, ' || count(*) FILTER (WHERE in_ext) || ' in_extension' FROM public.n")
			if [[ $op == create ]]; then events_create=$n; else events_drop="$n (both operations)"; fi
		fi
	done
	for side in "${SIDES[@]}"; do
		q gis postgres "DROP DATABASE ${side}_$r" >/dev/null
	done
done

echo "== PostGIS $(psql_c gis postgres -c "SELECT default_version FROM pg_available_extensions WHERE name = 'postgis'"), PostgreSQL $PG_MAJOR, $ROUNDS rounds: wall time in ms, median (min-max)"
printf '%-26s %-22s %-22s %-22s\n' '' 'without ddl_notify' 'with ddl_notify' 'with, capture_query off'
for op in create drop; do
	line=$(printf '%-26s' "${op^^} EXTENSION postgis")
	for side in "${SIDES[@]}"; do
		read -r m l h _ < <(printf '%s' "${T[${op}_$side]}" | stats)
		[[ $side == without ]] && base=$m
		cell="$m ($l-$h)"
		[[ $side == without ]] || cell+=$(awk -v a="$m" -v b="$base" 'BEGIN { printf " x%.2f", a / b }')
		line+=$(printf ' %-22s' "$cell")
	done
	echo "$line"
done
echo "delivered, CREATE EXTENSION postgis: $events_create"
echo "delivered, DROP EXTENSION postgis: $events_drop"
