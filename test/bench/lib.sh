# shellcheck shell=bash
# test/bench/lib.sh: throwaway clusters, callgrind runs and small helpers
# for the benchmark scripts in test/bench/ (run.sh, callgrind.sh,
# image_cost.sh, perf.sh ...).  Sourced, never run.
#
# Rules:
# - Reuses test/tools/pg-env.sh: the same PG_CONFIG, the same "servers never
#   run as root" rule (postgres when we are root).
# - Everything lives in one mktemp -d directory, BENCH_TMP, owned by the run
#   user: each cluster in BENCH_TMP/NAME, its unix socket in BENCH_TMP/NAME
#   too (listen_addresses = ''), on a free port.  Nothing else is touched.
# - bench_cleanup (installed as the EXIT trap by bench_init) stops every
#   cluster we started, by the pid in its postmaster.pid, and removes
#   BENCH_TMP unless BENCH_KEEP=1.
# - Nothing here fails a benchmark for a missed goal; die() is for "could not
#   run at all".

# shellcheck disable=SC2034
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tools/pg-env.sh
source "$BENCH_DIR/../tools/pg-env.sh"

declare -A BENCH_PORT=()
BENCH_CLUSTERS=()
BENCH_CHILDREN=()

bench_init()
{
	pg_paths
	unset_pg_env
	export PATH=$PG_BINDIR:$PATH
	RUN_USER=$(pg_run_user)
	BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddl_notify_bench.XXXXXX")
	if is_root; then
		chown "$RUN_USER": "$BENCH_TMP"
	fi
	chmod 755 "$BENCH_TMP"
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}

bench_cleanup()
{
	local rc=$? name pid
	trap - EXIT INT TERM HUP
	for pid in "${BENCH_CHILDREN[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for name in "${BENCH_CLUSTERS[@]}"; do
		cluster_stop "$name" || true
	done
	if [[ -n ${BENCH_TMP:-} && -d $BENCH_TMP ]]; then
		if [[ ${BENCH_KEEP:-0} == 1 ]]; then
			echo "(BENCH_KEEP=1: leaving $BENCH_TMP)"
		else
			rm -rf "$BENCH_TMP"
		fi
	fi
	exit "$rc"
}

# as_user COMMAND...: run as the cluster's OS user.
as_user()
{
	run_as "$RUN_USER" "$@"
}

# cluster_start NAME CONF: initdb + start, CONF appended to postgresql.conf.
cluster_start()
{
	local name=$1 conf=$2 dir=$BENCH_TMP/$1 port
	port=$(free_port)
	as_user mkdir -p "$dir"
	if ! as_user initdb -D "$dir/data" -A trust -E UTF8 --no-locale >"$BENCH_TMP/$name.initdb.log" 2>&1 </dev/null; then
		tail -n 20 "$BENCH_TMP/$name.initdb.log" >&2
		die "initdb of cluster $name failed"
	fi
	as_user tee -a "$dir/data/postgresql.conf" >/dev/null <<EOF

# Added by test/bench
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
log_line_prefix = '%m [%p] %q%a '
$conf
EOF
	BENCH_CLUSTERS+=("$name")
	BENCH_PORT[$name]=$port
	if ! as_user pg_ctl -D "$dir/data" -l "$dir/server.log" -w -t 120 start >/dev/null 2>&1 </dev/null; then
		tail -n 30 "$dir/server.log" >&2
		die "cluster $name did not start"
	fi
}

cluster_restart()
{
	local name=$1 dir=$BENCH_TMP/$1
	as_user pg_ctl -D "$dir/data" -l "$dir/server.log" -m fast -w -t 120 restart >/dev/null 2>&1 </dev/null ||
		{ tail -n 30 "$dir/server.log" >&2; die "cluster $name did not restart"; }
}

cluster_stop()
{
	local dir=$BENCH_TMP/$1
	[[ -f $dir/data/postmaster.pid ]] || return 0
	as_user pg_ctl -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 </dev/null ||
		kill_postmaster "$dir/data"
}

cluster_log()
{
	echo "$BENCH_TMP/$1/server.log"
}

# psql_c CLUSTER DB [psql args...]: psql against CLUSTER, unaligned, quiet.
psql_c()
{
	local name=$1 db=$2
	shift 2
	as_user psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$BENCH_TMP/$name" -p "${BENCH_PORT[$name]}" -d "$db" "$@" </dev/null
}

# q CLUSTER DB SQL: run one SQL string, print the result (unaligned, |-separated).
q()
{
	psql_c "$1" "$2" -c "$3"
}

# q_file CLUSTER DB FILE [psql args]: run a file (readable by the run user).
q_file()
{
	local name=$1 db=$2 file=$3
	shift 3
	psql_c "$name" "$db" -f "$file" "$@"
}

# bench_file NAME: a path in BENCH_TMP the run user can read and write.
bench_file()
{
	echo "$BENCH_TMP/$1"
}

# now_ms: wall clock in milliseconds (floating).
now_ms()
{
	local t
	t=$(date +%s.%N)
	awk -v t="$t" 'BEGIN { printf "%.3f", t * 1000 }'
}

# stats: read numbers, one per line; print "median min max n".
stats()
{
	sort -g | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) { print "nan nan nan 0"; exit }
			if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.6g %.6g %.6g %d\n", m, v[1], v[NR], NR
		}'
}

# verdict VALUE OP GOAL: PASS or MISS (OP is >= or <=), "n/a" for no value.
verdict()
{
	awk -v v="$1" -v op="$2" -v g="$3" 'BEGIN {
		if (v == "" || v == "nan" || v == "n/a") { print "n/a"; exit }
		if ((op == ">=" && v + 0 >= g + 0) || (op == "<=" && v + 0 <= g + 0)) print "PASS"; else print "MISS"
	}'
}

# rss_kb PID FIELD: a field of /proc/PID/status in kB (VmRSS, VmHWM, RssAnon...).
rss_kb()
{
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

# proc_ticks PID: utime + stime of one process, in clock ticks.
proc_ticks()
{
	# fields after the ")" that ends the command name: 12 = utime, 13 = stime
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

# wait_worker CLUSTER DB: print the pid of the database's ddl_notify worker.
wait_worker()
{
	local s
	for _ in $(seq 1 300); do
		s=$(q "$1" "$2" "SELECT ddl_notify.delivery_status()")
		if [[ $s =~ worker\ pid\ ([0-9]+) ]]; then
			echo "${BASH_REMATCH[1]}"
			return 0
		fi
		sleep 0.1
	done
	die "no ddl_notify worker in database $2 after 30 s (delivery_status: $s)"
}

# gen_comments FILE N: N COMMENT ON TABLE statements, 1000 per transaction
# (one transaction updating one row many times is slow in PostgreSQL itself).
gen_comments()
{
	awk -v n="$2" 'BEGIN {
		for (i = 1; i <= n; i++) {
			if (i % 1000 == 1) print "BEGIN;"
			printf "COMMENT ON TABLE public.bench_target IS %cbacklog %d%c;\n", 39, i, 39
			if (i % 1000 == 0 || i == n) print "COMMIT;"
		}
	}' >"$1"
}

# cluster_cpu_ms NAME: CPU time the cluster has used so far, "USER SYS" in
# ms: the postmaster, its live children, and the children it has reaped
# (cutime, cstime: every backend that has exited).  A difference of two
# readings is what the cluster spent in between, whatever else runs on the
# machine.
cluster_cpu_ms()
{
	local pm
	pm=$(head -n 1 "$BENCH_TMP/$1/data/postmaster.pid")
	# every /proc/PID/stat at once (some vanish meanwhile: cat goes on)
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } |
		awk -v pm="$pm" -v hz="$(getconf CLK_TCK)" '
			{ pid = $1; sub(/^.*\) /, "") }
			pid == pm { u += $12 + $14; s += $13 + $15; next }
			$2 == pm { u += $12; s += $13 }
			END { printf "%.0f %.0f\n", u * 1000 / hz, s * 1000 / hz }'
}

# bench_files: copy test/bench into the temp directory as FILES, readable by
# the cluster's OS user.
bench_files()
{
	FILES=$BENCH_TMP/files
	cp -r "$BENCH_DIR" "$FILES"
	if is_root; then
		chown -R "$RUN_USER": "$FILES"
	fi
}

# --- callgrind (callgrind.sh, image_cost.sh) ---------------------------------
# cg_start CLUSTER OUTDIR VALGRIND_OPTIONS... [-- POSTGRES_OPTIONS...]: the
# stopped cluster's postmaster started again under valgrind's callgrind, one
# output file per process in OUTDIR (OUTDIR/PID.out).
cg_start()
{
	local name=$1 out=$2 dir=$BENCH_TMP/$1 vg=() pg=()
	shift 2
	while (($#)) && [[ $1 != -- ]]; do
		vg+=("$1")
		shift
	done
	(($#)) && shift
	pg=("$@")
	as_user mkdir -p "$out"
	as_user valgrind --tool=callgrind --callgrind-out-file="$out/%p.out" "${vg[@]}" \
		postgres -D "$dir/data" "${pg[@]}" >"$BENCH_TMP/valgrind.log" 2>&1 </dev/null &
	CG_PID=$!
	for _ in $(seq 1 600); do
		as_user pg_isready -q -h "$dir" -p "${BENCH_PORT[$name]}" && return 0
		sleep 0.2
	done
	tail -n 20 "$BENCH_TMP/valgrind.log" >&2
	die "the server under valgrind did not start"
}

cg_stop()
{
	cluster_stop "$1"
	wait "$CG_PID" 2>/dev/null || true
}

# cg_session CLUSTER OUTDIR DB FILE|SQL: run it in a new backend (a FILE
# must print the backend's pid first); print the backend's callgrind output
# file once the backend has exited and written it.
cg_session()
{
	local name=$1 out=$2 db=$3 what=$4 pid f
	if [[ -f $what ]]; then
		pid=$(q_file "$name" "$db" "$what" | head -n 1)
	else
		pid=$(psql_c "$name" "$db" -c "SELECT pg_backend_pid()" -c "$what" | head -n 1)
	fi
	[[ $pid =~ ^[0-9]+$ ]] || die "session in $db: no backend pid"
	f=$out/$pid.out
	for _ in $(seq 1 600); do
		if [[ -s $f ]] && ! kill -0 "$pid" 2>/dev/null; then
			echo "$f"
			return 0
		fi
		sleep 0.1
	done
	die "no callgrind output for backend $pid"
}

# cg_ir FILE: the Ir of a callgrind output file ("totals:", which a
# process that had collection toggled has right, else "summary:").
cg_ir()
{
	awk '/^summary:/ { s = $2 } /^totals:/ { t = $2 } END { print (t != "" ? t : s) }' "$1"
}
