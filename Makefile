# Makefile for ddl_notify (PGXS)
#
# One version number lives here: EXTVERSION names the install script that the
# build generates from sql/ddl_notify.sql, and the build refuses to go on if
# ddl_notify.control says anything else.
#
#   make / make install     build and install the extension (PGXS)
#   make demo               fresh machine to a working demo (see README)
#   make test               every suite: pg_regress, isolation, TAP; last line
#                           "N passed, M failed"
#   make bench              benchmarks; they print figures and never fail
#                           (test/bench/run.sh, then the worker pool's,
#                           test/bench/pool.sh)
#   make bench-scale        delivery at scale: each figure beside its goal
#                           (test/bench/scale.sh)
#   make bench-snapshot     the workers' CPU per 1,000 deliveries, subscriber_status
#                           and wait_for_delivery (median ms, median shared
#                           blocks and backend CPU per call over SNAPSHOT_CALLS
#                           calls) while a REPEATABLE READ snapshot is held
#                           (SNAPSHOT_HOLD seconds, default 600): a series
#                           (test/bench/snapshot_hold.sh)
#   make bench-images       what the relation images cost beside the
#                           statement they describe, in instructions
#                           (callgrind), at growing table sizes; IC_SHAPES
#                           (test/bench/image_cost.sh)
#   make mutate             every test/mutations/*.patch: its tests must fail
#                           on a build with it applied (test/tools/mutate.sh);
#                           MUTATION=NAME for one
#   make test-ecosystem     ddl_notify beside pgaudit, pg_cron, pg_partman,
#                           pg_repack, pglogical, pgl_ddl_deploy, pgq and
#                           PostGIS, installed from Debian by the runner
#                           (test/ecosystem/run.sh, docs/compatibility.md)
#   make test-pg-regress    PostgreSQL's own regression suite with and without
#                           ddl_notify, compared (test/pgregress/run.sh)
#   make test-replay        real DDL replayed through examples/ddl_replay.py
#                           into a second database, one step at a time,
#                           pg_dump --schema-only compared after each: every
#                           file of PostgreSQL's regression suite and a
#                           Django project's migrations forwards and
#                           backwards; counts (steps, equal, stopped,
#                           diverged), and a step fails when it does worse
#                           than test/replay/expected-*.txt says
#                           (test/replay/run.sh, replay.py's header)
#   make test-versions      make test against PostgreSQL 17, 18 and 19, each in
#                           a Debian chroot built once and cached
#                           (test/tools/versions.sh); VERSIONS="18" for some,
#                           VERSION_JOBS=3 for all three at once
#   make test-pg-regress-18 make test-pg-regress inside the 18 chroot (CI runs
#                           both)
#   make test-replay-versions  make test-replay inside the 18, 17 and 19
#                           chroots (CI runs it and test-replay); Debian serves
#                           no source of 17 nor 19, so they replay 18's
#                           regression files (test/tools/versions.sh,
#                           REGRESS_SOURCE_FROM); test-replay-18 for 18 alone
#   make coverage           every suite against a --coverage build in a scratch
#                           copy, then gcov's lines and branches per file and
#                           the error paths no test ran (test/tools/coverage.sh,
#                           test/COVERAGE.md); ONLY=regex for some tests
#   make installcheck       the sql/ tests against a running server that has
#                           the extension installed and test/regress.conf's
#                           settings (PGXS; docs/operations.md)
#   make dist               the release tarball ddl_notify-EXTVERSION.tar.gz
#                           from git (HEAD), for PGXN
#   make deb                Debian packages postgresql-NN-ddl-notify (debian/,
#                           pg_buildext) built here into build/deb/
#   make test-deb           META.json and the version check, then the package
#                           built, installed, installchecked and purged in a
#                           fresh Debian chroot (test/tools/deb-test.sh)

EXTENSION	= ddl_notify
EXTVERSION	= 0.2.0

MODULE_big	= ddl_notify
OBJS		= src/ddl_notify.o src/common.o src/capture.o src/counter.o src/deliver.o src/failure.o src/fetch.o src/progress.o \
		  src/binding.o src/lifecycle.o src/pool.o src/querytext.o src/relimage.o src/imgdiff.o src/imgcommand.o src/imgdrop.o src/subscriber.o src/trust.o src/walmsg.o \
		  src/worker.o src/status.o src/legacy.o src/imagetexts.o src/outbox.o src/replicate.o src/apply.o \
		  src/statementkey.o

DATA_built	= $(EXTENSION)--$(EXTVERSION).sql
DATA		= $(patsubst $(srcdir)/%,%,$(wildcard $(srcdir)/sql/$(EXTENSION)--*.sql))

# pg_regress inputs are every sql/*.sql but the install scripts; the order
# is the file names' order (NNN_topic.sql).  Paths go through $(srcdir), set
# by PGXS, so that a VPATH build (pg_buildext build) finds them too.
REGRESS_OPTS	= --no-locale --encoding=UTF8
REGRESS		= $(sort $(patsubst $(srcdir)/sql/%.sql,%,$(filter-out $(srcdir)/sql/$(EXTENSION)%,$(wildcard $(srcdir)/sql/*.sql))))

PG_CONFIG	?= pg_config
PG_CPPFLAGS	+= -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
ifdef WERROR
PG_CPPFLAGS	+= -Werror
endif

EXTRA_CLEAN	= $(EXTENSION)--$(EXTVERSION).sql results regression.diffs regression.out \
		  tmp_check tmp_check_iso output_iso log test/results

# PGXS may be missing on a fresh machine: `make demo` and `make test` install
# it first and then call make again, so only include it when it is there.
PGXS		:= $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(wildcard $(PGXS)),)
include $(PGXS)

# Every source file includes the shared header: rebuild them all when it
# changes (PGXS tracks no header dependencies unless configured with
# --enable-depend).
$(OBJS): src/common.h src/engine.h src/compat.h
src/pool.o src/status.o src/worker.o: src/pool.h
# a VPATH build writes its objects to src/ of the build directory
ifneq ($(VPATH),)
$(shell mkdir -p src)
endif
else
# Without PGXS only the targets that install it first (demo, test, ...) work.
all install installcheck:
	@echo "ddl_notify: PGXS not found: '$(PG_CONFIG) --pgxs' gave '$(PGXS)'. Install your PostgreSQL's server development package (postgresql-server-dev-NN on Debian), or set PG_CONFIG=/path/to/pg_config." >&2; exit 1
endif

$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(EXTENSION).control META.json
	@grep -q "^default_version = '$(EXTVERSION)'" $(word 2,$^) || \
		{ echo "$(EXTENSION).control: default_version is not '$(EXTVERSION)'" >&2; exit 1; }
	@[ "$$(grep -v '"meta-spec"' $(word 3,$^) | sed -nE 's/.*"version" *: *"([^"]*)".*/\1/p' | sort -u)" = "$(EXTVERSION)" ] || \
		{ echo "META.json: a version is not '$(EXTVERSION)'" >&2; exit 1; }
	cp $< $@

.PHONY: deps demo test bench bench-scale bench-snapshot bench-images mutate test-pg-regress test-replay test-ecosystem coverage dist deb test-deb test-versions test-pg-regress-18 test-replay-18 test-replay-versions test-replication test-replication-versions test-fault-soak
deps:
	@bash test/tools/deps.sh

demo: deps
	@bash test/tools/build.sh
	@bash test/tools/demo.sh

test: deps
	@WERROR=1 bash test/tools/build.sh
	@bash test/tools/run-tests.sh

bench: deps
	@bash test/tools/build.sh
	@bash test/bench/run.sh
	@bash test/bench/pool.sh

bench-scale: deps
	@bash test/tools/build.sh
	@bash test/bench/scale.sh

bench-snapshot: deps
	@bash test/tools/build.sh
	@bash test/bench/snapshot_hold.sh

bench-images: deps
	@bash test/tools/build.sh
	@bash test/bench/image_cost.sh

mutate: deps
	@WERROR=1 bash test/tools/build.sh
	@bash test/tools/mutate.sh $(if $(MUTATION),test/mutations/$(MUTATION).patch,--all)

test-pg-regress: deps
	@WERROR=1 bash test/tools/build.sh
	@bash test/pgregress/run.sh

test-replay: deps
	@WERROR=1 bash test/tools/build.sh
	@bash test/replay/run.sh

test-ecosystem: deps
	@WERROR=1 bash test/tools/build.sh
	@bash test/ecosystem/run.sh

coverage: deps
	@bash test/tools/coverage.sh

dist:
	git archive --format=tar.gz --prefix=$(EXTENSION)-$(EXTVERSION)/ -o $(EXTENSION)-$(EXTVERSION).tar.gz HEAD

deb:
	@bash test/tools/deb-test.sh --build-here

test-deb:
	@bash test/tools/deb-test.sh

test-versions:
	@bash test/tools/versions.sh $(VERSIONS)

test-pg-regress-18:
	@TARGET=test-pg-regress bash test/tools/versions.sh 18

test-replay-18:
	@TARGET=test-replay bash test/tools/versions.sh 18

test-replay-versions:
	@TARGET=test-replay REGRESS_SOURCE_FROM=18 bash test/tools/versions.sh 18 17 19

test-replication: deps
	@WERROR=1 bash test/tools/build.sh
	@TEST_SUITES=tap TAP_DIR=test/replication bash test/tools/run-tests.sh

test-replication-versions:
	@TARGET=test-replication bash test/tools/versions.sh 17 18 19

test-fault-soak: deps
	@WERROR=1 bash test/tools/build.sh
	@SUITE_TIMEOUT=3600 TEST_SUITES=tap TAP_DIR=test/soak bash test/tools/run-tests.sh
