#!/usr/bin/env bash
# test/bench/replication.sh: what DDL replication (G16, docs/replication.md)
# costs, printed side by side in one run.
#
# Two throwaway clusters, publisher and subscriber, a FOR ALL TABLES
# publication marked with publish_ddl() and a subscription handed to
# apply_ddl().  The subscriber's copy of the table has one column of its own,
# "arrived timestamptz DEFAULT clock_timestamp()", which the apply worker
# fills when it inserts a row; the publisher's row carries its own
# clock_timestamp(): same machine, same clock.
#   1. row lag, p50/p95 (ms): BENCH_REPL_ROWS single-row transactions, one
#      after the other, without DDL in the stream;
#   2. the same with a DDL statement (ADD COLUMN, then DROP COLUMN, on
#      another table) after every 5th row;
#   3. cost of applying a DDL statement on the subscriber: BENCH_REPL_DDL
#      ALTER TABLE ... ADD COLUMN statements committed on the publisher,
#      from the first commit to the last applied on the subscriber; beside
#      the same statements run by hand, one session, on a third database of
#      the subscriber's cluster.
#
# Rules: prints figures, never fails for a missed goal (non-zero only when
# it could not run); clusters in a temp dir (lib.sh), removed at exit.
# Environment: BENCH_REPL_ROWS (default 300), BENCH_REPL_DDL (default 100),
# BENCH_KEEP=1.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NROWS=${BENCH_REPL_ROWS:-300}
NDDL=${BENCH_REPL_DDL:-100}

bench_init
CONF="shared_preload_libraries = 'ddl_notify'
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
wal_retrieve_retry_interval = '200ms'"
cluster_start pub "$CONF"
cluster_start sub "$CONF"

for c in pub sub; do
	q "$c" postgres "CREATE EXTENSION ddl_notify; CREATE TABLE t (id bigint PRIMARY KEY, sent timestamptz); CREATE TABLE aux (id int PRIMARY KEY); CREATE TABLE wide (id int PRIMARY KEY)" >/dev/null
done
q sub postgres "ALTER TABLE t ADD COLUMN arrived timestamptz DEFAULT clock_timestamp()" >/dev/null
q pub postgres "CREATE PUBLICATION pub FOR ALL TABLES; SELECT ddl_notify.publish_ddl('pub')" >/dev/null
q sub postgres "CREATE SUBSCRIPTION sub CONNECTION 'host=$BENCH_TMP/pub port=${BENCH_PORT[pub]} dbname=postgres' PUBLICATION pub WITH (enabled = false)" >/dev/null 2>&1
q sub postgres "SELECT ddl_notify.apply_ddl('sub'); ALTER SUBSCRIPTION sub ENABLE" >/dev/null

# wait_until CLUSTER SQL: poll (10 ms) until SQL returns t, at most 120 s.
wait_until()
{
	local i
	for ((i = 0; i < 12000; i++)); do
		[[ $(q "$1" postgres "$2") == t ]] && return 0
		sleep 0.01
	done
	die "timed out waiting for: $2"
}
wait_until sub "SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')"

# rows FIRST N DDL_EVERY: N single-row transactions from id FIRST; every
# DDL_EVERY-th is followed by a DDL transaction (0: none).
rows()
{
	local first=$1 n=$2 every=$3 i k=0 f
	f=$(bench_file rows.sql)
	: >"$f"
	for ((i = first; i < first + n; i++)); do
		echo "INSERT INTO t VALUES ($i, clock_timestamp());" >>"$f"
		if ((every > 0 && (i - first + 1) % every == 0)); then
			k=$((k + 1))
			if ((k % 2)); then
				echo "ALTER TABLE aux ADD COLUMN c int;" >>"$f"
			else
				echo "ALTER TABLE aux DROP COLUMN c;" >>"$f"
			fi
		fi
	done
	q_file pub postgres "$f" >/dev/null
	wait_until sub "SELECT count(*) = $n FROM t WHERE id >= $first AND id < $((first + n))"
}

# lag FIRST N: "p50 p95" of the row lag (ms) of ids FIRST .. FIRST+N-1
lag()
{
	q sub postgres "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' ' ||
		round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 2)
		FROM (SELECT extract(epoch FROM arrived - sent) * 1000 AS ms FROM t
			  WHERE id >= $1 AND id < $(($1 + $2))) s"
}

rows 1 "$NROWS" 0
rows 100001 "$NROWS" 5
read -r a50 a95 <<<"$(lag 1 "$NROWS")"
read -r b50 b95 <<<"$(lag 100001 "$NROWS")"

# 3: applied vs by hand
f=$(bench_file ddl.sql)
: >"$f"
for ((i = 1; i <= NDDL; i++)); do
	echo "ALTER TABLE wide ADD COLUMN c$i int;" >>"$f"
done
before=$(q sub postgres "SELECT applied FROM ddl_notify.ddl_apply")
start=$(date +%s.%N)
q_file pub postgres "$f" >/dev/null
wait_until sub "SELECT applied >= $((before + NDDL)) FROM ddl_notify.ddl_apply"
applied_s=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
q sub postgres "CREATE DATABASE byhand" >/dev/null
q sub byhand "CREATE EXTENSION ddl_notify; CREATE TABLE wide (id int PRIMARY KEY)" >/dev/null
start=$(date +%s.%N)
q_file sub byhand "$f" >/dev/null
hand_s=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')

printf '\nDDL replication (PostgreSQL %s, %d rows per series, %d DDL statements)\n' \
	"$(q pub postgres 'SHOW server_version')" "$NROWS" "$NDDL"
printf '%-52s %10s %10s\n' "row lag, ms" "p50" "p95"
printf '%-52s %10s %10s\n' "  rows alone" "$a50" "$a95"
printf '%-52s %10s %10s\n' "  rows with a DDL statement after every 5th" "$b50" "$b95"
printf '%-52s %10s %10s %8s\n' "DDL statements, s (per statement, ms)" "total" "each" "ratio"
awk -v h="$hand_s" -v a="$applied_s" -v n="$NDDL" 'BEGIN {
	printf "%-52s %10.3f %10.2f %8.2f\n", "  by hand, one session", h, h * 1000 / n, 1
	printf "%-52s %10.3f %10.2f %8.2f\n", "  replicated: publisher commit to applied, checked", a, a * 1000 / n, a / h
}'
