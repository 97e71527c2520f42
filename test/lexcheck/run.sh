#!/usr/bin/env bash
# test/lexcheck/run.sh: differential check of redaction's lexer
# (src/querytext.c) against PostgreSQL's own scanner.
#
# Usage: test/lexcheck/run.sh [COUNT [MAXATOMS [SEED]]]
#   (defaults: 200000 random texts of up to 12 pieces, seed 1)
#
# What it does: builds test/lexcheck/lexcheck.c (which includes
# src/querytext.c) against PG_CONFIG in a scratch directory, starts a
# throwaway cluster there, and for each random text (gen.py) and each value
# of standard_conforming_strings compares the string constants and quoted
# names the two lexers see: start, end and decoded value, and whether the
# text can be read at all.  Prints the outcome counts; exits 1 if any text
# differs (the first ones are printed).
#
# Rules:
# - Runs on every supported version (lexcheck.c needs no parser header
#   beyond scanner.h); this check is how querytext.c's lexer is held to each
#   version's scan.l.
# - Installs nothing: the module is loaded by its path, the cluster and the
#   build live in a mktemp directory removed at exit.
set -euo pipefail
# shellcheck source=../tools/pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/pg-env.sh"

count=${1:-200000}
maxatoms=${2:-12}
seed=${3:-1}

pg_paths
unset_pg_env
user=$(pg_run_user)
work=$(mktemp -d /tmp/ddln_lexcheck.XXXXXX)
cleanup()
{
	if [[ -f $work/data/postmaster.pid ]]; then
		run_as "$user" "$PG_BINDIR/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 ||
			kill_postmaster "$work/data"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

cp "$REPO/test/lexcheck/lexcheck.c" "$REPO/test/lexcheck/Makefile" "$work/"
make -s -C "$work" PG_CONFIG="$PG_CONFIG" QUERYTEXT_DIR="$REPO/src" >/dev/null
python3 "$REPO/test/lexcheck/gen.py" "$seed" "$count" "$maxatoms" >"$work/texts"
chmod -R a+rX "$work"
[[ $user == "$(id -un)" ]] || chown -R "$user" "$work"

port=$(free_port)
run_as "$user" "$PG_BINDIR/initdb" -D "$work/data" -E UTF8 --locale=C.UTF-8 -A trust >/dev/null
run_as "$user" "$PG_BINDIR/pg_ctl" -D "$work/data" -l "$work/log" -w \
	-o "-k $work -p $port -c listen_addresses=''" start >/dev/null

out=$(run_as "$user" "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$work" -p "$port" -d postgres <<SQL
SET client_min_messages = warning;
CREATE FUNCTION lexcheck_compare(text, boolean) RETURNS text
	LANGUAGE c STRICT AS '$work/lexcheck.so', 'lexcheck_compare';
CREATE TABLE texts (n serial, t text);
\\copy texts (t) from '$work/texts'
CREATE TABLE result AS
	SELECT n, scs, t, lexcheck_compare(t, scs) AS r
	FROM texts, (VALUES (true), (false)) AS v(scs);
\\pset footer off
SELECT scs AS standard_conforming_strings,
	   CASE WHEN r LIKE 'differ%' THEN 'differ' ELSE r END AS outcome, count(*)
FROM result GROUP BY 1, 2 ORDER BY 1, 2;
\\pset format unaligned
\\pset tuples_only on
SELECT 'DIFFERENCES ' || count(*) FROM result WHERE r LIKE 'differ%';
SELECT format(E'--- standard_conforming_strings %s, text %L:\n%s', scs, t, r)
FROM result WHERE r LIKE 'differ%' ORDER BY length(t), n LIMIT 5;
SQL
)
printf '%s\n' "$out"
grep -q '^DIFFERENCES 0$' <<<"$out"
