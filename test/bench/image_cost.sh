#!/usr/bin/env bash
# test/bench/image_cost.sh: what the relation images (details.before, after,
# changes) cost beside the statement they describe, in instructions
# (valgrind --tool=callgrind), at growing relation sizes (issue 38).  Not
# part of `make bench` (it needs valgrind and takes minutes): `make
# bench-images` builds, installs and runs it (in a chroot of another version
# too: TARGET=bench-images test/tools/versions.sh 18).
#
# What it prints, for each relation shape (columns x indexes, IC_SHAPES) and
# each statement (ALTER TABLE ... ADD COLUMN, CREATE INDEX):
#   statement   Ir of the statement in a database without ddl_notify
#   capture     what ddl_notify adds with ddl_notify.capture_changes = off
#   images      what capture_changes = on adds on top of that
#   images/stmt the images' extra divided by the statement's own Ir (the
#               issue's goal: at most 1.0 at every size)
# Each figure is the marginal cost of one autocommit statement: a session of
# IC_N1 statements and one of IC_N2, each on tables of its own (made before,
# with a normal server), so start-up and first-call caches cancel out.
# Then the same for a whole-schema snapshot trigger of equal coverage (a
# PL/pgSQL ddl_command_end trigger that stores every table's columns,
# constraints and indexes of the schema as jsonb, the design some tools
# use), with IC_SCHEMA_TABLES (default 10,100,1000) tables of 10 columns
# and 1 index in the schema, beside ddl_notify's images on the same schema:
# the images' cost follows the changed relation, the snapshot's the schema.
#
# Rules: as the other benchmarks (lib.sh): a throwaway cluster as the
# postgres OS user, unix socket only, removed on exit.  It fails only when it
# cannot run; a figure above the goal is printed, not judged.
#
# Environment: IC_SHAPES (default "10:1 10:50 100:50 500:50"), IC_N1
# (default 2), IC_N2 (default 8), IC_SCHEMA_TABLES, BENCH_KEEP=1,
# IC_PROFILE=1 (the top functions of each shape's ADD COLUMN session with
# images off and on, by exclusive instructions; with BENCH_KEEP=1 too, that
# session's callgrind output stays as BENCH_TMP/profile.SHAPE.DB.out, for
# callgrind_annotate --inclusive=yes --tree=calling).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SHAPES=${IC_SHAPES:-"10:1 10:50 100:50 500:50"}
N1=${IC_N1:-2}
N2=${IC_N2:-8}
SCHEMA_TABLES=${IC_SCHEMA_TABLES:-10,100,1000}
NT=$((N1 + N2))
DBS=(none images_off images_on)

if ! command -v valgrind >/dev/null 2>&1; then
	is_root || die "valgrind is not installed (apt-get install valgrind)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind </dev/null >/dev/null ||
		die "apt-get install valgrind failed"
fi

bench_init
CG=$BENCH_TMP/cg
cluster_start C "shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
autovacuum = off
fsync = off
synchronous_commit = off
max_locks_per_transaction = 1024"

# shape_sql COLS IDX FIRST LAST: tables s_FIRST..s_LAST of COLS int columns
# and IDX one-column indexes (columns taken in turn).
shape_sql()
{
	awk -v c="$1" -v x="$2" -v a="$3" -v b="$4" 'BEGIN {
		for (t = a; t <= b; t++) {
			printf "CREATE TABLE s_%d (", t
			for (i = 1; i <= c; i++) printf "%sc%d int", (i > 1 ? ", " : ""), i
			print ");"
			for (i = 1; i <= x; i++) printf "CREATE INDEX s_%d_i%d ON s_%d (c%d);\n", t, i, t, (i - 1) % c + 1
		} }'
}

# stmt_sql KIND FIRST LAST: the measured session, the backend's pid first.
stmt_sql()
{
	awk -v k="$1" -v a="$2" -v b="$3" 'BEGIN { print "SELECT pg_backend_pid();"
		for (t = a; t <= b; t++)
			if (k == "add_column") printf "ALTER TABLE s_%d ADD COLUMN extra int;\n", t
			else printf "CREATE INDEX ON s_%d (c1, c2);\n", t }'
}

# warm_up DB...: a first session in each database after the restart, which
# pays for the caches' files (the relation cache's init file) so that the
# measured sessions start alike.
warm_up()
{
	local db
	for db in "$@"; do
		cg_session C "$CG" "$db" "DO 'BEGIN PERFORM count(*) FROM pg_class; END'" >/dev/null
	done
}

declare -A IR=()
marginal()
{
	awk -v a="$(cg_ir "$1")" -v b="$(cg_ir "$2")" -v n="$((N2 - N1))" 'BEGIN { printf "%.0f", (b - a) / n }'
}

for db in "${DBS[@]}"; do
	q C postgres "CREATE DATABASE $db" >/dev/null
	[[ $db == none ]] || q C "$db" "SET client_min_messages = error; CREATE EXTENSION ddl_notify" >/dev/null
done
q C postgres "ALTER DATABASE images_off SET ddl_notify.capture_changes = off" >/dev/null

for shape in $SHAPES; do
	cols=${shape%%:*}
	idx=${shape##*:}
	# setup with a normal server: the tables of both sessions, both kinds
	for db in "${DBS[@]}"; do
		q C "$db" "SET client_min_messages = warning; DROP SCHEMA IF EXISTS b CASCADE; CREATE SCHEMA b" >/dev/null
		shape_sql "$cols" "$idx" 1 $((2 * NT)) | as_user tee "$BENCH_TMP/shape.sql" >/dev/null
		psql_c C "$db" -c "SET search_path = b" -f "$BENCH_TMP/shape.sql" >/dev/null
		[[ $db == none ]] || q C "$db" "TRUNCATE ddl_notify.event" >/dev/null
	done
	stmt_sql add_column 1 "$N1" | as_user tee "$BENCH_TMP/a1.sql" >/dev/null
	stmt_sql add_column $((N1 + 1)) "$NT" | as_user tee "$BENCH_TMP/a2.sql" >/dev/null
	stmt_sql create_index $((NT + 1)) $((NT + N1)) | as_user tee "$BENCH_TMP/i1.sql" >/dev/null
	stmt_sql create_index $((NT + N1 + 1)) $((2 * NT)) | as_user tee "$BENCH_TMP/i2.sql" >/dev/null
	for f in a1 a2 i1 i2; do
		sed -i '1a SET search_path = b;' "$BENCH_TMP/$f.sql"
	done
	cluster_stop C
	cg_start C "$CG" --collect-atstart=yes
	warm_up "${DBS[@]}"
	for db in "${DBS[@]}"; do
		a2=$(cg_session C "$CG" "$db" "$BENCH_TMP/a2.sql")
		IR[$shape.add_column.$db]=$(marginal "$(cg_session C "$CG" "$db" "$BENCH_TMP/a1.sql")" "$a2")
		if [[ ${IC_PROFILE:-0} == 1 && $db != none ]]; then
			printf '\n-- %s, ADD COLUMN, %s: top functions by exclusive Ir (%d statements)\n' "$shape" "$db" "$((N2 - N1))"
			callgrind_annotate --auto=no --threshold=100 "$a2" 2>/dev/null |
				awk '/^ *[0-9,]+ \( *[0-9.]+%\)  / && !/PROGRAM TOTALS/' | head -n 20 || true
			if [[ ${BENCH_KEEP:-0} == 1 ]]; then
				cp "$a2" "$BENCH_TMP/profile.${shape/:/x}.$db.out"
			fi
		fi
		IR[$shape.create_index.$db]=$(marginal "$(cg_session C "$CG" "$db" "$BENCH_TMP/i1.sql")" \
			"$(cg_session C "$CG" "$db" "$BENCH_TMP/i2.sql")")
	done
	cg_stop C
	rm -f "$CG"/*.out
	as_user pg_ctl -D "$BENCH_TMP/C/data" -l "$BENCH_TMP/C/server.log" -w -t 120 start >/dev/null
done

printf '\n== Ir per autocommit statement (marginal over %d statements)\n' "$((N2 - N1))"
printf '   %-10s %-13s %12s %12s %12s %11s\n' shape statement statement capture images images/stmt
for shape in $SHAPES; do
	for k in add_column create_index; do
		awk -v s="$shape" -v k="$k" -v n="${IR[$shape.$k.none]}" -v f="${IR[$shape.$k.images_off]}" -v o="${IR[$shape.$k.images_on]}" 'BEGIN {
			printf "   %-10s %-13s %12.0f %+12.0f %+12.0f %11.2f\n", s, k, n, f - n, o - f, (o - f) / n }'
	done
done

# --- a whole-schema snapshot trigger beside the images -----------------------
cat >"$BENCH_TMP/snap.sql" <<'SQL'
CREATE TABLE public.schema_snapshot (id bigserial PRIMARY KEY, taken timestamptz DEFAULT now(), tables jsonb);
CREATE FUNCTION public.snap() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.schema_snapshot (tables)
	SELECT jsonb_agg(jsonb_build_object(
		'name', c.relname,
		'columns', (SELECT jsonb_agg(jsonb_build_object('name', a.attname,
				'type', format_type(a.atttypid, a.atttypmod), 'notnull', a.attnotnull,
				'default', pg_get_expr(d.adbin, d.adrelid)) ORDER BY a.attnum)
			FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
		'constraints', (SELECT jsonb_agg(jsonb_build_object(k.conname, pg_get_constraintdef(k.oid)))
			FROM pg_constraint k WHERE k.conrelid = c.oid),
		'indexes', (SELECT jsonb_agg(pg_get_indexdef(i.indexrelid)) FROM pg_index i WHERE i.indrelid = c.oid)))
	FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'b') AND c.relkind IN ('r', 'p', 'v', 'm', 'f');
END $$;
CREATE EVENT TRIGGER snap ON ddl_command_end EXECUTE FUNCTION public.snap();
SQL
chmod 644 "$BENCH_TMP/snap.sql"
q C postgres "CREATE DATABASE snap" >/dev/null
q_file C snap "$BENCH_TMP/snap.sql" >/dev/null
declare -A SN=()
for n in ${SCHEMA_TABLES//,/ }; do
	# (the snapshot trigger disabled while the schema is built: it would
	# snapshot the schema at each of its CREATEs, quadratic in the tables)
	q C snap "ALTER EVENT TRIGGER snap DISABLE" >/dev/null
	for db in none images_on snap; do
		q C "$db" "SET client_min_messages = warning; DROP SCHEMA IF EXISTS b CASCADE; CREATE SCHEMA b" >/dev/null
		shape_sql 10 1 1 "$n" | as_user tee "$BENCH_TMP/shape.sql" >/dev/null
		psql_c C "$db" -c "SET search_path = b" -f "$BENCH_TMP/shape.sql" >/dev/null
	done
	q C snap "ALTER EVENT TRIGGER snap ENABLE" >/dev/null
	stmt_sql add_column 1 "$N1" | sed '1a SET search_path = b;' | as_user tee "$BENCH_TMP/a1.sql" >/dev/null
	stmt_sql add_column $((N1 + 1)) "$NT" | sed '1a SET search_path = b;' | as_user tee "$BENCH_TMP/a2.sql" >/dev/null
	cluster_stop C
	cg_start C "$CG" --collect-atstart=yes
	warm_up none images_on snap
	for db in none images_on snap; do
		SN[$n.$db]=$(marginal "$(cg_session C "$CG" "$db" "$BENCH_TMP/a1.sql")" \
			"$(cg_session C "$CG" "$db" "$BENCH_TMP/a2.sql")")
	done
	cg_stop C
	rm -f "$CG"/*.out
	as_user pg_ctl -D "$BENCH_TMP/C/data" -l "$BENCH_TMP/C/server.log" -w -t 120 start >/dev/null
done
printf '\n== ALTER TABLE ... ADD COLUMN in a schema of N tables (10 columns, 1 index): Ir over the statement alone\n'
printf '   %-8s %12s %14s %16s\n' tables statement ddl_notify 'snapshot trigger'
for n in ${SCHEMA_TABLES//,/ }; do
	awk -v t="$n" -v a="${SN[$n.none]}" -v o="${SN[$n.images_on]}" -v s="${SN[$n.snap]}" 'BEGIN {
		printf "   %-8s %12.0f %+14.0f %+16.0f\n", t, a, o - a, s - a }'
done
