#!/usr/bin/env bash
# test/tools/versions.sh: run a make target of ddl_notify (default: the whole
# `make test`) against PostgreSQL 17, 18 and 19, each inside a Debian chroot
# that this script builds once and keeps (`make test-versions`).  15, the
# default machine's version, is the host's own `make test` and is not run here.
#
#   version  Debian suite            packages
#   17       trixie                  postgresql-17, -server-dev-17, -17-wal2json
#   18       sid                     postgresql-18, -server-dev-18, -18-wal2json
#   19       sid + experimental      postgresql-19, -client-19, -server-dev-19,
#                                    libpq5 and libpq-dev, each /experimental
#                                    (19~rc1; there is no wal2json for 19)
#
# Usage: versions.sh [VERSION...]      default: 17 18 19
#        TARGET=test-pg-regress versions.sh 18   another make target inside
#        ONLY=regex versions.sh ...      passed on to make test
#        (REPLAY_ONLY, REPLAY_CORPUS, REPLAY_VERBOSE, IC_* and BENCH_* are passed on too)
#        TARGET=test-replay REGRESS_SOURCE_FROM=18 versions.sh 18 17 19
#                                        replays 18's regression files on 17
#                                        and 19 too (Debian serves no source
#                                        of either; make test-replay-versions)
#        REPLAY_UPDATE=1 TARGET=test-replay versions.sh 17   records the
#                                        version's test/replay/expected-*-17.txt
#                                        and copies them back here
#        TARGET=bench-images versions.sh 18   a benchmark there (its figures
#                                        in the log; only its exit status
#                                        counts)
#        TARGET=mutate MUTATION=NAME versions.sh 18   one mutation there
#                                        (test/mutations/NAME.patch; passes
#                                        when caught: only the status counts)
#        versions.sh --prepare [VERSION...]      build the chroots only
#        versions.sh --tools             install debootstrap only (the one
#                                        package this script takes from this
#                                        machine's apt; .ci/run does it
#                                        before its lanes, see there)
#        VERSION_JOBS=3 versions.sh ...  up to 3 versions at once (default
#                                        1); with REGRESS_SOURCE_FROM, that
#                                        version runs first, alone
#
# Rules:
# - Root only (debootstrap, chroot, mount).  The chroots live in
#   $DDLN_CHROOT_DIR (default /var/cache/ddl_notify), one directory pgNN per
#   version, made with `debootstrap --variant=minbase` from the Debian mirror
#   of this machine's own apt sources (the first URIs:/deb line naming
#   debian, else deb.debian.org), about 45 s and 1.8 GB each.  A chroot is
#   built in pgNN.tmp and renamed only when complete, so a half-built one is
#   never used; delete pgNN to rebuild it (e.g. for a newer release).
# - /proc and /dev are mounted into a chroot only while it is used, and
#   unmounted on every exit, interrupt included (a mount a killed run left is
#   unmounted by the next).  One run at a time per chroot (flock on
#   $DDLN_CHROOT_DIR/pgNN.lock).  /dev is a recursive bind
#   made a slave first, so unmounting it never touches the host's /dev.
# - The repository's working tree (without .git, test results and what a
#   build or package build generates, which .ci/run's other lane may be
#   writing at that moment) is copied into the chroot's /root/ddl_notify
#   afresh for every run; make runs there
#   as root with a clean environment (the test tools drop to the postgres
#   user), so nothing of the host's PostgreSQL or PG_CONFIG leaks in.
# - Each version's output goes to its log ($DDLN_CHROOT_DIR/logs/pgNN.log)
#   and, with the chroot paths, to stdout (with VERSION_JOBS above 1, each
#   version's whole output once it ended, in the order given, never
#   interleaved);
#   then one line per version
#   "PostgreSQL NN (server version): N passed, M failed (S s)" and a last
#   line "N passed, M failed" adding them up.  A version whose chroot could
#   not be built, or whose run printed no counts, counts one failure.  The
#   exit status is 0 only when M is 0.
# - Versions run at once share nothing but the machine: each has its own
#   chroot, lock, mounts and repository copy, and every server a test starts
#   listens on a unix socket in that chroot only (listen_addresses = '').
#   make test leaves about half of this 2-core machine's CPU idle (it waits
#   on servers and workers), so .ci/run runs the three versions at once.
set -uo pipefail
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"

CACHE=${DDLN_CHROOT_DIR:-/var/cache/ddl_notify}
TARGET=${TARGET:-test}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
COMMON_PKGS=(gcc make perl libipc-run-perl python3 python3-psycopg2 python3-django procps dpkg-dev ca-certificates)
MOUNTED=()
JOB_PIDS=()	# versions running at once (VERSION_JOBS)

PREPARE_ONLY=
TOOLS_ONLY=
if [[ ${1:-} == --prepare ]]; then
	PREPARE_ONLY=1
	shift
elif [[ ${1:-} == --tools ]]; then
	TOOLS_ONLY=1
	shift
fi
VERSIONS=("$@")
((${#VERSIONS[@]})) || VERSIONS=(17 18 19)

is_root || die "needs root (debootstrap, chroot and mount)"

# The Debian mirror of this machine's apt sources.
mirror()
{
	local m
	m=$(sed -n -E 's/^URIs:[[:space:]]*(http[^[:space:]]*\/debian)\/?[[:space:]]*$/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[[ -n $m ]] || m=$(sed -n -E 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?(http[^[:space:]]*\/debian)\/?[[:space:]].*/\2/p' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n 1)
	printf '%s\n' "${m:-http://deb.debian.org/debian}"
}

# suite_of VERSION, packages_of VERSION: what each version's chroot is made of.
suite_of()
{
	case $1 in
	17) echo trixie ;;
	18 | 19) echo sid ;;
	*) die "no chroot recipe for PostgreSQL $1 (known: 17 18 19)" ;;
	esac
}

packages_of()
{
	case $1 in
	17 | 18) echo "postgresql-$1 postgresql-client-$1 postgresql-server-dev-$1 postgresql-$1-wal2json" ;;
	# -t experimental would pull a perl that does not install: only these.
	19) echo "postgresql-19/experimental postgresql-client-19/experimental" \
		"postgresql-server-dev-19/experimental libpq5/experimental libpq-dev/experimental" ;;
	esac
}

# do_mount ROOT: /proc and /dev into the chroot; a mount left by a run that
# was killed (SIGKILL) is taken over, and unmounted with ours.
do_mount()
{
	local root=$1
	mountpoint -q "$root/proc" || mount -t proc proc "$root/proc" || return 1
	MOUNTED+=("$root/proc")
	if ! mountpoint -q "$root/dev"; then
		mount --rbind /dev "$root/dev" || return 1
		mount --make-rslave "$root/dev" || return 1
	fi
	MOUNTED+=("$root/dev")
}

# lock_chroot VERSION: one run at a time per chroot (its mounts and its copy
# of the repository are shared); waits for another run to end.
lock_chroot()
{
	local fd
	mkdir -p "$CACHE"
	exec {fd}>"$CACHE/pg$1.lock"
	if ! flock -n "$fd"; then
		echo "== PostgreSQL $1: waiting for another run that uses its chroot"
		flock "$fd"
	fi
	LOCK_FD=$fd
}

# Give the chroot locked last back: a run of several versions holds one
# lock at a time (two runs taking them in different orders never wait on
# each other for ever).
unlock_chroot()
{
	[[ -z ${LOCK_FD:-} ]] || exec {LOCK_FD}>&-
	LOCK_FD=
}

do_umount()
{
	local m i
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		m=${MOUNTED[i]}
		umount -R "$m" 2>/dev/null || umount -R -l "$m" 2>/dev/null ||
			echo "versions.sh: could not unmount $m" >&2
	done
	MOUNTED=()
}

cleanup()
{
	local rc=$?
	trap - EXIT INT TERM HUP
	# versions still running at once (VERSION_JOBS) end with this run
	if ((${#JOB_PIDS[@]})); then
		kill -TERM "${JOB_PIDS[@]}" 2>/dev/null
		wait
	fi
	do_umount
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

in_chroot()
{
	local root=$1
	shift
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# need_debootstrap: install it unless it is there (before versions run at
# once, which would each take apt's lock).
need_debootstrap()
{
	command -v debootstrap >/dev/null 2>&1 || {
		echo "== installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap </dev/null ||
			{ apt-get update -qq </dev/null &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap </dev/null; }
	} || { echo "versions.sh: could not install debootstrap"; return 1; }
}

# prepare VERSION: build $CACHE/pgVERSION unless it is there.
prepare()
{
	local v=$1 root=$CACHE/pg$1 tmp=$CACHE/pg$1.tmp suite m
	[[ -x $root/usr/lib/postgresql/$v/bin/postgres ]] && return 0
	suite=$(suite_of "$v") || return 1
	m=$(mirror)
	need_debootstrap || return 1
	mkdir -p "$CACHE"
	rm -rf "$tmp"
	echo "== PostgreSQL $v: debootstrap --variant=minbase $suite from $m into $tmp"
	debootstrap --variant=minbase --keyring="$KEYRING" "$suite" "$tmp" "$m" >"$CACHE/pg$v.debootstrap.log" 2>&1 ||
		{ echo "versions.sh: debootstrap failed, see $CACHE/pg$v.debootstrap.log"; tail -n 5 "$CACHE/pg$v.debootstrap.log"; return 1; }
	{
		echo "deb $m $suite main"
		echo "deb-src $m $suite main"
		[[ $v == 19 ]] && echo "deb $m experimental main"
	} >"$tmp/etc/apt/sources.list"
	# sid's and experimental's Release files are valid for a week only: a
	# mirror serving a fixed snapshot, or a clock ahead of it, would make apt
	# refuse them.  debootstrap checked the signatures already.
	echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99ddl_notify"
	# No service starts inside the chroot while packages install.
	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod 755 "$tmp/usr/sbin/policy-rc.d"
	do_mount "$tmp" || return 1
	echo "== PostgreSQL $v: apt-get install $(packages_of "$v")"
	# shellcheck disable=SC2046
	if ! in_chroot "$tmp" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"' sh \
		"${COMMON_PKGS[@]}" $(packages_of "$v") </dev/null >"$CACHE/pg$v.apt.log" 2>&1; then
		echo "versions.sh: apt-get install failed in $tmp, see $CACHE/pg$v.apt.log"
		tail -n 15 "$CACHE/pg$v.apt.log"
		do_umount
		return 1
	fi
	in_chroot "$tmp" apt-get clean </dev/null >/dev/null 2>&1
	do_umount
	mv "$tmp" "$root"
	echo "== PostgreSQL $v: chroot ready in $root ($(du -sh "$root" 2>/dev/null | cut -f1))"
}

# borrow_regress_source VERSION: with REGRESS_SOURCE_FROM=M and VERSION not M,
# the unpacked source of postgresql-M that M's chroot fetched (make
# test-replay there first) copied into VERSION's chroot, and its path there
# printed (for REPLAY_REGRESS_SOURCE); nothing otherwise.
borrow_regress_source()
{
	local v=$1 from=${REGRESS_SOURCE_FROM:-} mark src name dest
	[[ -n $from && $v != "$from" ]] || return 0
	mark=$(ls -d "$CACHE/pg$from/var/cache/ddl_notify-pgregress/src/postgresql-$from-"*/.complete 2>/dev/null | tail -n 1)
	[[ -n $mark ]] || { echo "versions.sh: no source of postgresql-$from in its chroot yet" >&2; return 0; }
	src=$(dirname "$mark")
	name=$(basename "$src")
	dest=$CACHE/pg$v/var/cache/ddl_notify-pgregress/src
	if [[ ! -f $dest/$name/.complete ]]; then
		mkdir -p "$dest"
		rm -rf "${dest:?}/$name"
		cp -a "$src" "$dest/" || return 0
	fi
	echo "/var/cache/ddl_notify-pgregress/src/$name"
}

# run VERSION: copy the repository in, run make $TARGET, print the summary line.
run_version()
{
	local v=$1 root=$CACHE/pg$1 log=$CACHE/logs/pg$1.log start counts rc server regress_source
	mkdir -p "$CACHE/logs"
	start=$SECONDS
	lock_chroot "$v"
	if ! prepare "$v"; then
		record "$v" "PostgreSQL $v: chroot not built: 0 passed, 1 failed" 0 1
		unlock_chroot
		return
	fi
	rm -rf "$root/root/ddl_notify"
	mkdir -p "$root/root/ddl_notify"
	tar -C "$REPO" --exclude=./.git --exclude=./test/results --exclude='./tmp_check*' \
		--exclude=./results --exclude=./output_iso --exclude=./log \
		--exclude=./test/pgregress/cache --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude='./ddl_notify--*.sql' --exclude='./ddl_notify-*.tar.gz' --exclude=./build \
		--exclude='./build-*' --exclude=__pycache__ --exclude='./debian/postgresql-*-ddl-notify' \
		--exclude=./debian/.debhelper --exclude=./debian/tmp --exclude=./debian/files \
		--exclude=./debian/debhelper-build-stamp --exclude='./debian/*.substvars' -cf - . |
		tar -C "$root/root/ddl_notify" -xf -
	# test-pg-regress keeps its source and build in the repository's cache:
	# keep that one in the chroot across runs.
	mkdir -p "$root/var/cache/ddl_notify-pgregress"
	ln -sfn /var/cache/ddl_notify-pgregress "$root/root/ddl_notify/test/pgregress/cache"
	regress_source=$(borrow_regress_source "$v")
	server=$(in_chroot "$root" "/usr/lib/postgresql/$v/bin/postgres" --version 2>/dev/null | sed "s/^postgres (PostgreSQL) //")
	echo "== PostgreSQL $v ($server): make $TARGET in $root/root/ddl_notify"
	# the benchmarks' settings (IC_SHAPES, BENCH_KEEP, ...)
	local passed=() var
	for var in $(compgen -e | grep -E '^(IC|BENCH)_'); do
		passed+=("$var=${!var}")
	done
	do_mount "$root" || { record "$v" "PostgreSQL $v: mount failed: 0 passed, 1 failed" 0 1; do_umount; unlock_chroot; return; }
	in_chroot "$root" ${ONLY:+ONLY="$ONLY"} ${REPLAY_UPDATE:+REPLAY_UPDATE="$REPLAY_UPDATE"} \
		${REPLAY_ONLY:+REPLAY_ONLY="$REPLAY_ONLY"} ${REPLAY_CORPUS:+REPLAY_CORPUS="$REPLAY_CORPUS"} \
		${REPLAY_VERBOSE:+REPLAY_VERBOSE="$REPLAY_VERBOSE"} ${MUTATION:+MUTATION="$MUTATION"} \
		${regress_source:+REPLAY_REGRESS_SOURCE="$regress_source"} "${passed[@]}" \
		make -C /root/ddl_notify "$TARGET" </dev/null 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	do_umount
	# REPLAY_UPDATE=1 with test-replay: the version's expected outcomes, back
	# into the repository
	if [[ -n ${REPLAY_UPDATE:-} ]]; then
		for f in "$root"/root/ddl_notify/test/replay/expected-*-"$v".txt; do
			[[ -f $f ]] && cp "$f" "$REPO/test/replay/"
		done
	fi
	unlock_chroot
	counts=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "$log" | tail -n 1)
	# a benchmark (bench-*) prints figures, not counts, and a mutation the
	# counts of the tests it broke: only the status counts
	[[ -n $counts || $TARGET != bench-* ]] || counts="0 0"
	[[ $TARGET != mutate ]] || counts="0 0"
	[[ -n $counts ]] || { echo "versions.sh: make $TARGET on PostgreSQL $v printed no counts (status $rc)"; counts="0 1"; }
	read -r p f <<<"$counts"
	((rc == 0 || f > 0)) || { echo "versions.sh: make $TARGET on PostgreSQL $v exited with status $rc"; f=1; }
	record "$v" "PostgreSQL $v ($server): $p passed, $f failed ($((SECONDS - start)) s)" "$p" "$f"
}

# record VERSION LINE PASSED FAILED: a version's outcome, in a file, so that
# a version run in a subshell (VERSION_JOBS) reports it too.
record()
{
	printf '%s\n%s %s\n' "$2" "$3" "$4" >"$CACHE/logs/pg$1.result"
}

# run_job VERSION: run_version in the background, its output into
# $CACHE/logs/pgVERSION.out (printed by finish_job); its own mounts are
# unmounted on its own exit.
run_job()
{
	(
		MOUNTED=()
		JOB_PIDS=()
		trap cleanup EXIT
		trap 'exit 143' TERM
		run_version "$1"
	) >"$CACHE/logs/pg$1.out" 2>&1 &
	JOB_PIDS+=("$!")
}

# finish_job VERSION: its output, once it ended.
finish_job()
{
	cat "$CACHE/logs/pg$1.out"
}

if [[ -n $TOOLS_ONLY ]]; then
	need_debootstrap
	exit
fi
if [[ -n $PREPARE_ONLY ]]; then
	for v in "${VERSIONS[@]}"; do
		lock_chroot "$v"
		prepare "$v" || exit 1
		unlock_chroot
	done
	exit 0
fi

VERSION_JOBS=${VERSION_JOBS:-1}
[[ $VERSION_JOBS =~ ^[1-9][0-9]*$ ]] || die "VERSION_JOBS must be a positive number, not '$VERSION_JOBS'"
mkdir -p "$CACHE/logs"
for v in "${VERSIONS[@]}"; do
	rm -f "$CACHE/logs/pg$v.result"
done
# A version the others borrow the regression source from runs first, alone.
rest=()
for v in "${VERSIONS[@]}"; do
	if ((VERSION_JOBS > 1)) && [[ $v != "${REGRESS_SOURCE_FROM:-}" ]]; then
		rest+=("$v")
	else
		run_version "$v"
	fi
done
if ((${#rest[@]})); then
	need_debootstrap
	echo "== PostgreSQL ${rest[*]}: make $TARGET, up to $VERSION_JOBS at once; each one's output when it ends"
	for v in "${rest[@]}"; do
		while (($(jobs -rp | wc -l) >= VERSION_JOBS)); do
			wait -n
		done
		run_job "$v"
	done
	wait
	JOB_PIDS=()
	for v in "${rest[@]}"; do
		finish_job "$v"
	done
fi
echo "== test-versions: make $TARGET per version"
TOTAL_P=0
TOTAL_F=0
for v in "${VERSIONS[@]}"; do
	if [[ -f $CACHE/logs/pg$v.result ]]; then
		{ read -r line; read -r p f; } <"$CACHE/logs/pg$v.result"
	else
		line="PostgreSQL $v: its run ended without a result: 0 passed, 1 failed"
		p=0 f=1
	fi
	echo "$line"
	TOTAL_P=$((TOTAL_P + p))
	TOTAL_F=$((TOTAL_F + f))
done
echo "$TOTAL_P passed, $TOTAL_F failed"
((TOTAL_F == 0))
