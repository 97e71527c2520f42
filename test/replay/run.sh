#!/usr/bin/env bash
# test/replay/run.sh: `make test-replay`.  Real DDL (every file of
# PostgreSQL's own regression suite, a Django project's migrations forwards
# and backwards) replayed one step at a time into a second database through
# examples/ddl_replay.py, as docs/cdc.md shows it, comparing pg_dump
# --schema-only of source and copy after each step (G15; issue 36).
# test/replay/replay.py does the work and its header says what a step, an
# outcome and a failure are; this script gathers its inputs:
# - the regression suite's source and regress.so, as test-pg-regress has
#   them (test/pgregress/source.sh: fetched once with apt-get source into
#   test/pgregress/cache, shared with test/pgregress/run.sh);
# - python3-django and python3-psycopg2 (installed with apt-get as root when
#   missing; otherwise it says what to install and stops);
# - a work directory owned by the postgres OS user, where replay.py runs
#   (as that user) its own temporary cluster, with copies of everything it
#   reads from the repository (the repository may be where that user cannot
#   read, as /root is in the version chroots): the expected files too, which
#   REPLAY_UPDATE=1 copies back afterwards.
# Results: test/results/replay/replay.log (a line per step), diffs/ (the
# dumps' difference of each step that diverged); the last line is
# "N passed, M failed", one per step.
#
# Environment: REPLAY_CORPUS=pgregress|django (default both),
# REPLAY_ONLY=regex (steps whose name matches: pgregress/NAME,
# django/forwards|backwards/APP.MIGRATION), REPLAY_UPDATE=1 writes the
# outcomes of this run into test/replay/expected-CORPUS-MAJOR.txt,
# REPLAY_JOBS=N runs the regression files in N clusters at once (default 2;
# at most 2), REPLAY_VERBOSE=1 logs each stop message and time, REPLAY_KEEP=1 keeps the
# work directory, PGREGRESS_CACHE, PG_CONFIG (test/tools/pg-env.sh),
# REPLAY_REGRESS_SOURCE=DIR (an unpacked PostgreSQL source whose regression
# files to replay instead of this version's own: Debian serves no source of
# 17 nor of 19; make test-replay-versions passes 18's there; regress.so is
# built from it when it compiles, else left out).
set -euo pipefail
# shellcheck source=../tools/pg-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/pg-env.sh"

HERE=$REPO/test/replay
CACHE=${PGREGRESS_CACHE:-$REPO/test/pgregress/cache}
RESULTS=$REPO/test/results/replay
CORPUS=${REPLAY_CORPUS:-pgregress,django}
START=$SECONDS
# shellcheck source=../pgregress/source.sh
source "$REPO/test/pgregress/source.sh"

# need_python_module MODULE PACKAGE: the Debian package when the module is missing.
need_python_module()
{
	"$PYTHON" -c "import $1" 2>/dev/null && return 0
	is_root || die "python3 module $1 is missing: sudo apt-get install -y $2"
	say "installing $2"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" </dev/null >/dev/null ||
		{ apt-get update -qq </dev/null &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" </dev/null >/dev/null; } ||
		die "could not install $2"
}

main()
{
	local user work rc=0 args=()
	pg_paths
	unset_pg_env
	user=$(pg_run_user)
	PYTHON=python3
	[[ ! -x /usr/bin/python3 ]] || PYTHON=/usr/bin/python3
	need_python_module psycopg2 python3-psycopg2
	[[ $CORPUS != *django* ]] || need_python_module django python3-django

	work=$(mktemp -d "${TMPDIR:-/tmp}/ddl_notify_replay.XXXXXX")
	# shellcheck disable=SC2064
	trap "if [[ -z \${REPLAY_KEEP:-} ]]; then rm -rf '$work'; else echo 'work directory kept: $work'; fi" EXIT
	mkdir -p "$work/lib" "$work/app" "$work/expected"
	cp "$REPO/examples/ddl_replay.py" "$HERE/replay.py" "$work/"
	cp "$HERE"/expected-*.txt "$work/expected/" 2>/dev/null || true
	cp -R "$HERE/django/." "$work/app/"
	args=(--bindir "$PG_BINDIR" --work "$work/run" --port "$(free_port),$(free_port)" --jobs "${REPLAY_JOBS:-2}" --repo "$REPO"
		--consumer "$work/ddl_replay.py" --major "$PG_MAJOR" --expected-dir "$work/expected"
		--log "$work/out/replay.log" --corpus "$CORPUS" --django-app "$work/app")
	if [[ $CORPUS == *pgregress* ]]; then
		if [[ -n ${REPLAY_REGRESS_SOURCE:-} ]]; then
			# another major version's source (this one's is not served)
			[[ -f $REPLAY_REGRESS_SOURCE/src/test/regress/parallel_schedule ]] ||
				die "REPLAY_REGRESS_SOURCE=$REPLAY_REGRESS_SOURCE holds no regression suite"
			SRC=$REPLAY_REGRESS_SOURCE
			SRC_VERSION=$(basename "$SRC")
			SRC_VERSION=${SRC_VERSION#postgresql-}
			build_regress_so soft
		else
			find_source
			build_regress_so
		fi
		cp -R "$SRC/src/test/regress/sql" "$SRC/src/test/regress/data" "$SRC/src/test/regress/parallel_schedule" "$work/lib/"
		((${#REGRESS_SO[@]} == 0)) || cp "${REGRESS_SO[@]}" "$work/lib/"
		args+=(--regress "$work/lib" --regress-lib "$work/lib")
		say "regression suite: postgresql-${SRC_VERSION}${REPLAY_REGRESS_SOURCE:+ (another major version)}; server: $("$PG_CONFIG" --version)"
	fi
	[[ -z ${REPLAY_ONLY:-} ]] || args+=(--only "$REPLAY_ONLY")
	[[ -z ${REPLAY_VERBOSE:-} ]] || args+=(--verbose)
	[[ -z ${REPLAY_UPDATE:-} ]] || args+=(--update)
	mkdir -p "$work/run" "$work/out"
	is_root && chown -R "$user": "$work"
	set +e
	(cd "$work" && run_as "$user" "$PYTHON" "$work/replay.py" "${args[@]}")
	rc=$?
	set -e
	if [[ -n ${REPLAY_UPDATE:-} ]]; then
		for f in "$work"/expected/expected-*.txt; do
			[[ -f $f ]] && cp "$f" "$HERE/"
		done
	fi
	rm -rf "$RESULTS"
	mkdir -p "$RESULTS"
	cp -R "$work/out/." "$RESULTS/"
	for f in "$work"/run/job*/server.log; do
		[[ -f $f ]] && cp "$f" "$RESULTS/server-$(basename "$(dirname "$f")").log"
	done
	say "log and diffs: ${RESULTS#"$REPO"/}/ (took $((SECONDS - START)) s)"
	# the counts again, last
	if ! tail -n 1 "$RESULTS/replay.log" 2>/dev/null | grep -E '^[0-9]+ passed, [0-9]+ failed$'; then
		echo "0 passed, 1 failed"
		return 1
	fi
	return $rc
}

main "$@"
