#!/usr/bin/env bash
# test/tools/build.sh: build ddl_notify with PGXS and install it.
#
# Rules:
# - make runs in the repository root with the PG_CONFIG chosen by pg-env.sh,
#   passed on the command line so every make sees the same one.
# - WERROR set (non-empty) in the environment: make WERROR=1, which makes the
#   Makefile add -Werror. `make test` does that.
# - Output is concise (make -s): only compiler diagnostics and one line per
#   step. Any error stops here with a non-zero status and says so.
# - Installs as root. As another user it installs when the target directories
#   are writable or sudo works without a password; otherwise it stops and
#   prints the command to run.
set -euo pipefail
# shellcheck source=pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-env.sh"
pg_paths
[[ -f $PG_PGXS ]] || die "PGXS not found ($PG_PGXS); run test/tools/deps.sh"

# True when the installed library, control file and scripts are the ones
# just built (so a user who cannot install can still test).
installed_is_current()
{
	local ext module f
	ext=$(sed -n 's/^EXTENSION[[:space:]]*=[[:space:]]*//p' Makefile)
	module=$(sed -n 's/^MODULE_big[[:space:]]*=[[:space:]]*//p' Makefile)
	[[ -n $ext && -n $module ]] || return 1
	cmp -s "$module.so" "$PG_PKGLIBDIR/$module.so" || return 1
	for f in "$ext.control" "$ext"--*.sql sql/"$ext"--*--*.sql; do
		[[ -f $f ]] || continue
		cmp -s "$f" "$sharedir/extension/${f##*/}" || return 1
	done
}

cd "$REPO"
args=(-s PG_CONFIG="$PG_CONFIG")
if [[ -n ${WERROR:-} ]]; then
	args+=(WERROR=1)
fi

echo "== building ddl_notify for PostgreSQL $PG_MAJOR${WERROR:+ (-Werror)}"
make "${args[@]}" -j "$(nproc 2>/dev/null || echo 2)" </dev/null ||
	die "BUILD FAILED: make exited with an error (see the messages above)"

sharedir=$("$PG_CONFIG" --sharedir)
echo "== installing into $PG_PKGLIBDIR and $sharedir/extension"
if is_root; then
	make "${args[@]}" install </dev/null || die "INSTALL FAILED: make install exited with an error"
elif [[ -w $PG_PKGLIBDIR && -w $sharedir/extension ]]; then
	make "${args[@]}" install </dev/null || die "INSTALL FAILED: make install exited with an error"
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo -n make "${args[@]}" install </dev/null || die "INSTALL FAILED: sudo make install exited with an error"
elif installed_is_current; then
	echo "   (cannot write there as $(id -un), but what is installed is this build)"
else
	die "cannot install as $(id -un): run  sudo make -C '$REPO' install PG_CONFIG='$PG_CONFIG'  and try again"
fi
