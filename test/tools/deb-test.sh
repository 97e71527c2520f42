#!/usr/bin/env bash
# test/tools/deb-test.sh: the Debian packages, built and used as a stranger
# would (make test-deb), or just built on this machine (make deb).
#
#   bash test/tools/deb-test.sh               the test (as root)
#   bash test/tools/deb-test.sh --build-here  make deb: dpkg-buildpackage here,
#                                             the .deb files in build/deb/, one
#                                             per PostgreSQL version pg_buildext
#                                             selects on this machine
#
# The test, one check each, "N passed, M failed" last:
# - META.json is valid for PGXN and every version agrees with the Makefile's
#   EXTVERSION (test/tools/meta-check.pl); `make dist` gives a tarball of HEAD
#   whose files all lie under ddl_notify-EXTVERSION/; `make` without PGXS
#   fails with a message;
# - in a fresh Debian 12 chroot (debootstrap --variant=minbase bookworm):
#   the build dependencies of debian/control install (apt-get build-dep),
#   dpkg-buildpackage builds postgresql-NN-ddl-notify for every version
#   pg_buildext selects, and apt-get installs it (with its server);
# - a throwaway cluster, run as the postgres OS user with test/regress.conf's
#   settings, passes `make installcheck` (one check per sql/ test) against
#   the installed files only: the tree is cleaned by the build, nothing of it
#   is installed by hand;
# - apt-get purge removes the package: dpkg no longer lists it and none of
#   the files it installed is left.
#
# Rules:
# - The source is the working tree (tracked and untracked files that git
#   does not ignore), so uncommitted work is tested; `make dist` takes HEAD.
# - The chroot is made once and cached as a tarball in
#   $DDLN_DEB_CACHE (default /var/cache/ddl_notify/deb-test), with apt's
#   downloaded packages and lists next to it, so that a rerun downloads
#   little; a run extracts it into a fresh directory under /var/tmp, which
#   is removed, with /proc and /dev unmounted, on any exit.  flock keeps two
#   runs from making the cache at the same time.
# - Nothing is started in the chroot but the throwaway cluster
#   (policy-rc.d refuses services; no "main" cluster is created), and it is
#   stopped before the purge.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
TOP=$PWD
EXTVERSION=$(sed -nE 's/^EXTVERSION[[:space:]]*=[[:space:]]*(\S+).*/\1/p' Makefile)
PKGDIR=ddl-notify-$EXTVERSION

# source_tar: the working tree as a tar stream on stdout
source_tar()
{
	git -C "$TOP" ls-files -z -c -o --exclude-standard |
		xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' |
		tar -C "$TOP" --null -T - -cf - --transform "s,^,$PKGDIR/,"
}

if [[ ${1:-} == --build-here ]]; then
	for tool in dpkg-buildpackage dh pg_buildext; do
		command -v "$tool" >/dev/null || {
			echo "deb-test.sh: $tool is missing: apt-get install dpkg-dev debhelper postgresql-server-dev-all" >&2
			exit 1
		}
	done
	[[ -f /usr/share/postgresql-common/pgxs_debian_control.mk ]] || {
		echo "deb-test.sh: postgresql-server-dev-all is missing: apt-get install postgresql-server-dev-all" >&2
		exit 1
	}
	rm -rf build/deb && mkdir -p build/deb/src
	source_tar | tar -C build/deb/src -xf - || exit 1
	# debian/control names one package per version this machine supports
	# (postgresql-common's supported-versions, PG_SUPPORTED_VERSIONS to choose)
	(cd "build/deb/src/$PKGDIR" && pg_buildext updatecontrol && dpkg-buildpackage -us -uc -b) || exit 1
	mv build/deb/src/*.deb build/deb/src/*.buildinfo build/deb/src/*.changes build/deb/ || exit 1
	rm -rf build/deb/src
	ls -1 build/deb/*.deb
	exit 0
fi

START=$SECONDS
PASSED=0
FAILED=0
check()
{
	local what=$1
	shift
	if "$@"; then
		PASSED=$((PASSED + 1))
		echo "ok - $what"
	else
		FAILED=$((FAILED + 1))
		echo "not ok - $what"
	fi
}
finish()
{
	echo "deb-test.sh: $((SECONDS - START)) s"
	echo "$PASSED passed, $FAILED failed"
	((FAILED == 0))
	exit $?
}

# --- the tree: META.json, versions, make dist --------------------------------
check "META.json valid (PGXN Meta Spec 1.0.0), versions agree with EXTVERSION" \
	bash -c 'perl test/tools/meta-check.pl >/tmp/meta-check.$$ 2>&1 || { cat /tmp/meta-check.$$; rm -f /tmp/meta-check.$$; exit 1; }; rm -f /tmp/meta-check.$$'
dist_ok()
{
	local tmp rc=0
	tmp=$(mktemp -d)
	make -s dist >/dev/null && mv "ddl_notify-$EXTVERSION.tar.gz" "$tmp/" || return 1
	tar -tzf "$tmp/ddl_notify-$EXTVERSION.tar.gz" >"$tmp/list" || rc=1
	grep -qv "^ddl_notify-$EXTVERSION/" "$tmp/list" && rc=1
	for f in LICENSE META.json Makefile ddl_notify.control debian/control debian/rules; do
		grep -qx "ddl_notify-$EXTVERSION/$f" "$tmp/list" || { echo "make dist: $f missing"; rc=1; }
	done
	rm -rf "$tmp"
	return $rc
}
check "make dist: ddl_notify-$EXTVERSION.tar.gz from HEAD" dist_ok
no_pgxs_fails()
{
	local out
	out=$(make -s PG_CONFIG=/nonexistent/pg_config 2>&1) && return 1
	grep -q "PGXS not found" <<<"$out"
}
check "make without PGXS fails and says why" no_pgxs_fails

# --- the chroot -----------------------------------------------------------------
if ((EUID != 0)); then
	echo "deb-test.sh: the chroot part needs root"
	FAILED=$((FAILED + 1))
	finish
fi
MIRROR=$(sed -nE 's/^URIs:[[:space:]]*(\S+).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -v security | head -n 1)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
CACHE=${DDLN_DEB_CACHE:-/var/cache/ddl_notify/deb-test}
BASE=$CACHE/bookworm-minbase.tar.gz
mkdir -p "$CACHE/archives/partial" "$CACHE/lists/partial"
WORK=$(mktemp -d /var/tmp/ddln-deb.XXXXXX)
ROOT=$WORK/root
MOUNTS=()
cleanup()
{
	local i
	if [[ -f $ROOT/tmp/pgdata/postmaster.pid ]]; then
		chroot "$ROOT" su postgres -c '/usr/lib/postgresql/*/bin/pg_ctl -D /tmp/pgdata -m immediate stop' >/dev/null 2>&1
	fi
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}"
	done
	# only remove the directory once nothing is mounted under it
	if ! grep -q " $WORK/" /proc/mounts; then
		rm -rf "$WORK"
	else
		echo "deb-test.sh: $WORK still has mounts; left in place"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

(
	flock 9
	if [[ ! -f $BASE ]]; then
		command -v debootstrap >/dev/null || apt-get install -y debootstrap >/dev/null
		echo "deb-test.sh: making the base chroot ($MIRROR), cached in $BASE"
		tmp=$CACHE/root.tmp
		rm -rf "$tmp"
		debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
			bookworm "$tmp" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
			{ tail -n 20 "$CACHE/debootstrap.log"; rm -rf "$tmp"; exit 1; }
		tar -C "$tmp" -czf "$BASE.tmp" . && mv "$BASE.tmp" "$BASE"
		rm -rf "$tmp"
	fi
) 9>"$CACHE/lock"
check "base chroot (debootstrap --variant=minbase bookworm, cached)" test -f "$BASE"
[[ -f $BASE ]] || finish
mkdir -p "$ROOT" && tar -C "$ROOT" -xzf "$BASE"
for m in proc dev var/cache/apt/archives var/lib/apt/lists; do mkdir -p "$ROOT/$m"; done
mount -t proc proc "$ROOT/proc" && MOUNTS+=("$ROOT/proc")
mount --bind /dev "$ROOT/dev" && MOUNTS+=("$ROOT/dev")
mount --bind "$CACHE/archives" "$ROOT/var/cache/apt/archives" && MOUNTS+=("$ROOT/var/cache/apt/archives")
mount --bind "$CACHE/lists" "$ROOT/var/lib/apt/lists" && MOUNTS+=("$ROOT/var/lib/apt/lists")
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod +x "$ROOT/usr/sbin/policy-rc.d"
mkdir -p "$ROOT/etc/postgresql-common" && echo 'create_main_cluster = false' >"$ROOT/etc/postgresql-common/createcluster.conf"
# downloaded packages stay in the cache for the next run
echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$ROOT/etc/apt/apt.conf.d/99keep"
mkdir -p "$ROOT/build" && source_tar | tar -C "$ROOT/build" -xf -

in_root()
{
	chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive bash -c "$1"
}
log()
{
	local name=$1 rc
	shift
	"$@" >"$WORK/$name.log" 2>&1
	rc=$?
	((rc == 0)) || { echo "--- last lines of $name:"; tail -n 40 "$WORK/$name.log"; }
	return $rc
}

check "apt-get build-dep (debian/control)" \
	log build-dep in_root "apt-get update -q && apt-get install -y -q --no-install-recommends build-essential && apt-get build-dep -y -q /build/$PKGDIR"
check "dpkg-buildpackage -us -uc -b" \
	log build in_root "cd /build/$PKGDIR && dpkg-buildpackage -us -uc -b"
mapfile -t DEBS < <(cd "$ROOT/build" && ls postgresql-*-ddl-notify_"$EXTVERSION"*.deb 2>/dev/null)
VERSIONS=$(in_root "cd /build/$PKGDIR && pg_buildext supported-versions" 2>/dev/null)
check "one package per version pg_buildext selects ($(echo $VERSIONS))" \
	test "${#DEBS[@]}" -ge 1 -a "${#DEBS[@]}" -eq "$(wc -w <<<"$VERSIONS")"
((${#DEBS[@]})) || finish
check "apt-get install ${DEBS[*]}" \
	log install in_root "cd /build && apt-get install -y -q --no-install-recommends $(printf './%s ' "${DEBS[@]}")"

for v in $VERSIONS; do
	pkg=postgresql-$v-ddl-notify
	in_root "dpkg -L $pkg" >"$WORK/files-$v" 2>/dev/null
	check "$pkg installs the control file, the install scripts and the library" \
		bash -c "grep -qx /usr/share/postgresql/$v/extension/ddl_notify.control '$WORK/files-$v' &&
			grep -qx /usr/share/postgresql/$v/extension/ddl_notify--$EXTVERSION.sql '$WORK/files-$v' &&
			grep -qx /usr/share/postgresql/$v/extension/ddl_notify--0.1.0.sql '$WORK/files-$v' &&
			grep -qx /usr/lib/postgresql/$v/lib/ddl_notify.so '$WORK/files-$v'"

	# a throwaway cluster with the settings the sql/ tests need
	bin=/usr/lib/postgresql/$v/bin
	in_root "rm -rf /tmp/pgdata && su postgres -c '$bin/initdb -D /tmp/pgdata --no-locale -E UTF8 -A trust' >/tmp/initdb.log 2>&1 &&
		cat /build/$PKGDIR/test/regress.conf >>/tmp/pgdata/postgresql.conf &&
		printf \"port = 5499\nunix_socket_directories = '/tmp'\nlisten_addresses = ''\n\" >>/tmp/pgdata/postgresql.conf &&
		su postgres -c '$bin/pg_ctl -D /tmp/pgdata -l /tmp/pgdata/log -w start' >/dev/null" ||
		{ echo "deb-test.sh: the PostgreSQL $v cluster did not start"; tail -n 20 "$ROOT/tmp/pgdata/log" 2>/dev/null; }
	in_root "chown -R postgres /build/$PKGDIR && cd /build/$PKGDIR &&
		su postgres -c 'make installcheck PG_CONFIG=$bin/pg_config PGHOST=/tmp PGPORT=5499' " >"$WORK/installcheck-$v.log" 2>&1
	rc=$?
	while read -r name result; do
		check "PostgreSQL $v installcheck: $name" test "$result" = ok
	done < <(sed -nE 's/^(test |ok [0-9]+ +- |not ok [0-9]+ +- |[[:space:]]+)([0-9]{3}_[a-z_]+)[[:space:]]+\.\.\.[[:space:]]+(ok|FAILED).*/\2 \3/p;
		s/^(ok|not ok) [0-9]+ +[-+] +([0-9]{3}_[a-z_]+) .*/\2 \1/p' "$WORK/installcheck-$v.log" | sed 's/ not ok$/ FAILED/')
	expected=$(ls "$ROOT/build/$PKGDIR"/sql/[0-9]*.sql | wc -l)
	got=$(grep -cE '^(test |ok [0-9]+ |not ok [0-9]+ |[[:space:]]+)[0-9]{3}_' "$WORK/installcheck-$v.log")
	check "PostgreSQL $v installcheck: exit status 0, $expected tests reported" test "$rc" -eq 0 -a "$got" -eq "$expected"
	if ((rc != 0)); then
		tail -n 30 "$WORK/installcheck-$v.log"
		head -n 60 "$ROOT/build/$PKGDIR/regression.diffs" 2>/dev/null
	fi
	in_root "su postgres -c '$bin/pg_ctl -D /tmp/pgdata -m fast -w stop'" >/dev/null 2>&1

	check "apt-get purge $pkg" log purge-$v in_root "apt-get purge -y -q $pkg"
	check "$pkg: dpkg knows it no more" \
		bash -c "! chroot '$ROOT' dpkg -L $pkg >/dev/null 2>&1 && ! chroot '$ROOT' dpkg -s $pkg 2>/dev/null | grep -q '^Status: install'"
	left=0
	while read -r f; do
		[[ -f $ROOT$f || -L $ROOT$f ]] && { echo "left after purge: $f"; left=1; }
	done <"$WORK/files-$v"
	check "$pkg: none of its $(wc -l <"$WORK/files-$v") listed paths is a file left behind" test "$left" -eq 0
done
finish
