#!/usr/bin/python3
# Copyright (c) 2026, the ddl_notify authors
#
# test/replay/replay.py: the body of `make test-replay` (test/replay/run.sh
# prepares its inputs and runs it as the postgres OS user).  Real DDL,
# written by nobody here, is replayed one step at a time into a second
# database through examples/ddl_replay.py, exactly as docs/cdc.md shows it
# (pgoutput with messages 'true', the same slot and publication options as
# test/t/044_replay.pl), and pg_dump --schema-only of source and copy are
# compared after each step (G15, the relation images of G2's details).
#
# Corpora (--corpus, default both):
#   pgregress  every file of PostgreSQL's own regression suite (sql/*.sql of
#              the source test-pg-regress fetches), in parallel_schedule's
#              order, the files the schedule does not name after it.  Each
#              file is one step against a FRESH pair of databases made from
#              one template: test_setup.sql (the suite's own setup, run once)
#              and nothing else.  Fresh pairs make each step's outcome
#              independent of the ones before (a stop in one file does not
#              hide the next) and the run bounded (no schema that grows
#              with every file to dump 200 times).  A file that needs the
#              objects an earlier file of the schedule made fails some of
#              its statements here; what it did run is what is replayed.
#              test_setup.sql is itself the first step, from an empty pair.
#   django     Debian's python3-django (3.2): its contrib apps' migrations
#              (contenttypes, auth, admin, sessions, sites, flatpages,
#              redirects) and test/replay/django/replayshop, a small app
#              evolving over 7 migrations, applied with `migrate` one
#              migration at a time in the plan's order (each one is a step),
#              then unapplied one at a time in the reverse order.  One pair
#              of databases for the whole history: when the consumer stops,
#              the copy is resolved as docs/cdc.md says for a hand repair
#              (its schema rebuilt from a dump of the source, its
#              ddl_replay.progress moved to the source's current LSN) and
#              the next step goes on from there.
#
# Roles: event triggers never see roles, and a copy in another cluster
# gets them by other means (docs/cdc.md); here source and copy share a
# cluster, and a regression file drops the roles it made before the
# consumer runs.  So before each file's replay the harness makes again the
# roles the file created (regress_* names in CREATE ROLE, USER or GROUP)
# that no longer exist, NOLOGIN and without memberships or attributes, and
# drops them after the step (roles_back): what needs more (a membership, a
# database privilege) still stops.
#
# A step's outcome:
#   equal     the consumer applied everything, the dumps are the same;
#   stopped   the consumer stopped at an event with its message (exit 3):
#             the reason is logged;
#   diverged  the consumer applied everything and said nothing, but the
#             dumps differ: a silent divergence (the diff is kept);
#   error     the consumer failed otherwise (a traceback, a timeout).
# Ranked equal > stopped > diverged = error.  test/replay/expected-CORPUS-
# MAJOR.txt lists, per step, the outcome seen when it was last recorded
# (REPLAY_UPDATE=1 writes them anew).  A step fails when its outcome ranks
# below the expected one (an equal step that now stops or diverges, a
# stopped one that now diverges); a step the list does not name is
# expected to stop (a new file that diverges fails).  Better outcomes pass
# and show in the counts.  Without an expected file for the server's major
# version the same rule holds for every step.
#
# Output: a line per step in the log (--log), the counts per corpus
# (steps, equal, stopped, diverged, error), the most frequent stop reasons,
# and the last line "N passed, M failed" (one per step).
import argparse
import collections
import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import psycopg2

RANK = {'equal': 3, 'stopped': 2, 'diverged': 1, 'error': 1}


class Cluster:
    """A temporary cluster with wal_level = logical, run by this user.
    The harness's own statements go over one connection to database
    postgres, kept open (query); those that must run in another database
    over a connection opened for them: a psql process each would cost
    more than the statement."""

    def __init__(self, bindir, work, port):
        self.bindir, self.work, self.port = bindir, work, port
        self.data = os.path.join(work, 'data')
        self.sock = work
        self.conn = None

    def bin(self, name):
        return os.path.join(self.bindir, name)

    def start(self):
        os.makedirs(self.work, exist_ok=True)
        subprocess.run([self.bin('initdb'), '-D', self.data, '-A', 'trust', '-U', 'postgres',
                        '--no-locale', '-E', 'UTF8'], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(self.data, 'postgresql.conf'), 'a') as f:
            f.write("port = %d\nunix_socket_directories = '%s'\nlisten_addresses = ''\n"
                    "wal_level = logical\nmax_wal_senders = 4\nmax_replication_slots = 4\n"
                    "fsync = off\nfull_page_writes = off\n"
                    "max_prepared_transactions = 2\nlog_min_messages = fatal\n"
                    "log_statement = none\nlog_min_error_statement = panic\n"
                    "allow_in_place_tablespaces = on\n" % (self.port, self.sock))
        subprocess.run([self.bin('pg_ctl'), '-D', self.data, '-l', os.path.join(self.work, 'server.log'),
                        '-w', 'start'], check=True, stdout=subprocess.DEVNULL)

    def stop(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        subprocess.run([self.bin('pg_ctl'), '-D', self.data, '-m', 'immediate', 'stop'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def connstr(self, db):
        return 'host=%s port=%d user=postgres dbname=%s' % (self.sock, self.port, db)

    def psql(self, db, sql=None, file=None, cwd=None, env=None, timeout=300):
        cmd = [self.bin('psql'), '-X', '-q', '-d', self.connstr(db)]
        cmd += ['-f', file] if file else ['-c', sql]
        return subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def connect(self, db):
        conn = psycopg2.connect(self.connstr(db))
        conn.autocommit = True
        return conn

    def query(self, db, *statements):
        """Each statement in autocommit (one that holds several, separated
        by semicolons, in one implicit transaction, as psql -c runs it),
        in database db; the first column of the last one's first row, as
        text ('' without one).  The kept connection, found broken (the
        server restarted after a crash in the step before), is made again
        once, as a new psql would connect."""
        try:
            if db != 'postgres':
                with contextlib.closing(self.connect(db)) as conn:
                    return self.run(conn, statements)
            if self.conn is None or self.conn.closed:
                self.conn = self.connect('postgres')
            try:
                return self.run(self.conn, statements)
            except (psycopg2.OperationalError, psycopg2.InterfaceError):
                if not self.conn.closed:
                    raise
            self.conn = self.connect('postgres')
            return self.run(self.conn, statements)
        except psycopg2.Error as e:
            raise RuntimeError('%s: %s: %s' % (db, ' '.join(statements), str(e).strip()))

    @staticmethod
    def run(conn, statements):
        with conn.cursor() as cur:
            value = ''
            for sql in statements:
                cur.execute(sql)
                row = cur.fetchone() if cur.description else None
                value = '' if row is None or row[0] is None else str(row[0])
            return value

    def dump(self, db, exclude):
        """pg_dump --schema-only without the schema given and the
        ddl_notify extension's entries, psql's \\restrict lines (a random
        key each time, from 15.14 on) and the SET default_tablespace /
        default_table_access_method said before the first table (as
        test/t/044_replay.pl filters them)."""
        r = subprocess.run([self.bin('pg_dump'), '--schema-only', '--exclude-schema=' + exclude,
                            '-d', self.connstr(db)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError('pg_dump %s: %s' % (db, r.stderr.strip()))
        blocks = re.split(r'(?m)(?=^--\n-- Name: )', r.stdout)
        blocks = [b for b in blocks if not re.search(
            r'(?m)^-- Name: (ddl_notify; Type: EXTENSION|EXTENSION ddl_notify; Type: COMMENT);', b)]
        text = ''.join(blocks)
        text = re.sub(r'(?m)^\\(un)?restrict .*\n', '', text)
        text = re.sub(r'(?m)^SET default_(tablespace|table_access_method) = .*\n\n', '', text)
        return text


class Harness:
    def __init__(self, args):
        self.args = args
        ports = [int(p) for p in args.port.split(',')]
        self.clusters = [Cluster(args.bindir, os.path.join(args.work, 'job%d' % i), port)
                         for i, port in enumerate(ports[:max(1, args.jobs)])]
        self.cluster = self.clusters[0]
        self.lock = threading.Lock()
        self.log = open(args.log, 'w')
        self.results = collections.OrderedDict()    # step -> (outcome, detail)
        self.reasons = collections.Counter()        # corpus, stop reason
        self.diffdir = os.path.join(os.path.dirname(args.log), 'diffs')
        os.makedirs(self.diffdir, exist_ok=True)
        self.slot_no = 0

    def say(self, text):
        with self.lock:
            print(text, flush=True)
            self.log.write(text + '\n')
            self.log.flush()

    # --- one replay -------------------------------------------------------

    def consume(self, c, src, dst, slot):
        """The consumer of docs/cdc.md up to the source's current WAL end:
        (exit status, stderr).  (pg_current_wal_lsn() is where WAL is
        written up to: past the step's last commit only because commits
        are synchronous here.)"""
        end = c.query('postgres', 'SELECT pg_current_wal_lsn()')
        r = subprocess.run([sys.executable, self.args.consumer,
                            '--source', c.connstr(src), '--target', c.connstr(dst),
                            '--slot', slot, '--publication', 'replay_pub', '--end-lsn', end,
                            '--timeout', '120'],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        return r.returncode, r.stderr

    def outcome(self, c, src, dst, slot, step):
        """Replay what the source has in its slot and compare: (outcome, detail)."""
        rc, err = self.consume(c, src, dst, slot)
        if rc == 3:
            m = re.search(r'(?m)^  reason: (.*)$', err)
            ev = re.search(r'(?m)^ddl_replay.py: stopped at event \S+ \((.*)\)$', err)
            reason = m.group(1) if m else err.strip().splitlines()[-1]
            return 'stopped', '%s [%s]' % (reason, ev.group(1) if ev else '?'), err
        if rc != 0:
            lines = err.strip().splitlines() or ['exit status %d' % rc]
            return 'error', 'exit status %d: %s' % (rc, lines[-1]), err
        a, b = c.dump(src, 'ddl_notify'), c.dump(dst, 'ddl_replay')
        if a == b:
            return 'equal', '', ''
        path = os.path.join(self.diffdir, step.replace('/', '_') + '.diff')
        for name, text in (('src', a), ('dst', b)):
            with open(path + '.' + name, 'w') as f:
                f.write(text)
        d = subprocess.run(['diff', '-u', path + '.src', path + '.dst'], capture_output=True, text=True).stdout
        os.unlink(path + '.src')
        os.unlink(path + '.dst')
        with open(path, 'w') as f:
            f.write(d)
        changed = [l for l in d.splitlines()[2:] if l[:1] in '+-' and l[1:].strip()]
        return 'diverged', '%d changed lines, first: %s (%s)' % (
            len(changed), changed[0][:160] if changed else '?', os.path.relpath(path, os.path.dirname(self.args.log))), d

    def record(self, corpus, step, outcome, detail, err, seconds):
        with self.lock:
            self.results[step] = (outcome, detail)
            if outcome == 'stopped':
                self.reasons[(corpus, normalise_reason(detail))] += 1
        self.say('%-9s %s%s' % (outcome, step, ('  ' + detail) if detail else ''))
        if self.args.verbose:
            with self.lock:
                if err:
                    self.log.write(''.join('    | ' + l + '\n' for l in err.strip().splitlines()[:40]))
                self.log.write('    (%.1f s)\n' % seconds)

    def new_pair(self, c, template, name):
        """Source and copy made from the same template (FILE_COPY: the
        template's rows are not written to the WAL the slot decodes); the
        source gets ddl_notify with WAL messages on and a pgoutput slot."""
        src, dst = name + '_src', name + '_dst'
        for db in (src, dst):
            c.query('postgres', 'DROP DATABASE IF EXISTS %s WITH (FORCE)' % db)
            c.query('postgres', 'CREATE DATABASE %s TEMPLATE %s STRATEGY FILE_COPY' % (db, template))
        slot = 'replay_' + name
        c.query(src, 'SET client_min_messages = error; CREATE EXTENSION ddl_notify',
                'ALTER DATABASE %s SET ddl_notify.wal_messages = on' % src,
                "SELECT pg_create_logical_replication_slot('%s', 'pgoutput')" % slot)
        return src, dst, slot

    def drop_pair(self, c, src, dst, slot):
        # the walsender of the stream that read it may not have ended yet:
        # wait (up to a minute) until the slot is released, then drop it
        c.query('postgres',
                "DO $$ BEGIN "
                "FOR i IN 1..6000 LOOP "
                "EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_catalog.pg_replication_slots "
                "WHERE slot_name = '%s' AND active); "
                "PERFORM pg_catalog.pg_sleep(0.01); END LOOP; "
                "PERFORM pg_catalog.pg_drop_replication_slot('%s'); END $$" % (slot, slot))
        for db in (src, dst):
            c.query('postgres', 'DROP DATABASE IF EXISTS %s WITH (FORCE)' % db)

    # --- corpus: PostgreSQL's regression suite ------------------------------

    def regress_env(self):
        env = dict(os.environ)
        out = os.path.join(self.args.work, 'regress_out')
        os.makedirs(os.path.join(out, 'results'), exist_ok=True)
        os.makedirs(os.path.join(out, 'testtablespace'), exist_ok=True)
        env.update(PG_ABS_SRCDIR=self.args.regress, PG_ABS_BUILDDIR=out,
                   PG_LIBDIR=self.args.regress_lib, PG_DLSUFFIX='.so',
                   PGTZ='PST8PDT', PGDATESTYLE='Postgres, MDY', PGOPTIONS='-c intervalstyle=postgres_verbose')
        return env

    def regress_files(self):
        sqldir = os.path.join(self.args.regress, 'sql')
        names = []
        with open(os.path.join(self.args.regress, 'parallel_schedule')) as f:
            for line in f:
                if line.startswith('test:'):
                    names += line.split()[1:]
        have = sorted(n[:-4] for n in os.listdir(sqldir) if n.endswith('.sql'))
        names = [n for n in names if n in have]
        return names + [n for n in have if n not in names]

    def regress_templates(self, c, env):
        """replay_base (empty) and replay_tmpl (test_setup.sql run), with
        the database settings pg_regress gives its database and the
        publication the consumer names."""
        sqldir = os.path.join(self.args.regress, 'sql')
        for db in ('replay_base', 'replay_tmpl'):
            c.query('postgres', 'CREATE DATABASE %s TEMPLATE template0' % db)
            for setting in ("lc_messages TO 'C'", "lc_monetary TO 'C'", "lc_numeric TO 'C'",
                            "lc_time TO 'C'", "bytea_output TO 'hex'", "timezone_abbreviations TO 'Default'"):
                c.query('postgres', 'ALTER DATABASE %s SET %s' % (db, setting))
            c.query(db, 'CREATE PUBLICATION replay_pub')
        r = c.psql('replay_tmpl', file=os.path.join(sqldir, 'test_setup.sql'), cwd=self.args.regress, env=env)
        if r.returncode != 0:
            raise RuntimeError('test_setup.sql: %s' % r.stderr)

    def regress_job(self, c, files, env):
        """The files given, one after the other, in cluster c."""
        sqldir = os.path.join(self.args.regress, 'sql')
        self.regress_templates(c, env)
        for name in files:
            t0 = time.monotonic()
            template = 'replay_base' if name == 'test_setup' else 'replay_tmpl'
            src, dst, slot = self.new_pair(c, template, 'r')
            try:
                c.psql(src, file=os.path.join(sqldir, name + '.sql'), cwd=self.args.regress, env=env,
                       timeout=180)
            except subprocess.TimeoutExpired:
                self.say('   (%s: the file ran over 180 s; replaying what it did)' % name)
            roles = self.roles_back(c, os.path.join(sqldir, name + '.sql'))
            outcome, detail, err = self.outcome(c, src, dst, slot, 'pgregress/' + name)
            self.record('pgregress', 'pgregress/' + name, outcome, detail, err, time.monotonic() - t0)
            self.drop_pair(c, src, dst, slot)
            self.drop_roles(c, roles)

    def roles_back(self, c, path):
        """The roles the file made (CREATE ROLE, USER or GROUP, or a rename
        to its name) and dropped again, made anew (NOLOGIN, no memberships, no attributes) for the
        replay: roles are outside the event stream, and a copy's cluster
        has its roles from elsewhere (pg_dumpall --roles-only); a file that
        drops its roles before the consumer runs would otherwise stop it at
        the first statement run as one.  Returns the names made."""
        with open(path, errors='replace') as f:
            text = f.read()
        names = sorted(set(m.group(2) for m in re.finditer(
            r'(?im)^\s*create\s+(?:role|user|group)\s+("?)(regress_[\w$]+)\1', text)) |
                       set(m.group(2) for m in re.finditer(
            r'(?im)^\s*alter\s+(?:role|user|group)\s+\S+\s+rename\s+to\s+("?)(regress_[\w$]+)\1', text)))
        made = []
        for name in names:
            if c.query('postgres', "SELECT count(*) FROM pg_roles WHERE rolname = '%s'" % name) == '0':
                c.query('postgres', 'CREATE ROLE "%s" NOLOGIN' % name)
                made.append(name)
        return made

    def drop_roles(self, c, roles):
        """Drop the roles roles_back made (the pair they may own objects
        in is dropped already)."""
        for name in roles:
            try:
                c.query('postgres', 'DROP ROLE IF EXISTS "%s"' % name)
            except RuntimeError as e:       # what it owns elsewhere: left, said
                self.say('   (role %s kept: %s)' % (name, e))

    def corpus_pgregress(self):
        """Every file, spread over the clusters (--jobs; each its own
        cluster, so that the roles a file leaves behind meet the same
        files whatever the timing: file i goes to cluster i mod jobs)."""
        env = self.regress_env()
        files = self.regress_files()
        if self.args.only:
            files = [f for f in files if re.search(self.args.only, f)]
        n = len(self.clusters)
        errors = []

        def job(i):
            try:
                self.regress_job(self.clusters[i], files[i::n], env)
            except Exception as e:      # reported below: the run fails
                errors.append('job %d: %s' % (i, e))
        threads = [threading.Thread(target=job, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise RuntimeError('; '.join(errors))
        # the log in the schedule's order, whatever order the jobs finished in
        order = {'pgregress/' + f: i for i, f in enumerate(files)}
        rest = [(k, v) for k, v in self.results.items() if k not in order]
        mine = sorted(((k, v) for k, v in self.results.items() if k in order), key=lambda kv: order[kv[0]])
        self.results = collections.OrderedDict(rest + mine)

    # --- corpus: Django migrations ------------------------------------------

    def corpus_django(self):
        c = self.cluster
        c.query('postgres', 'CREATE DATABASE replay_dj TEMPLATE template0')
        c.query('replay_dj', 'CREATE PUBLICATION replay_pub')
        src, dst, slot = self.new_pair(c, 'replay_dj', 'dj')
        sys.path.insert(0, self.args.django_app)
        import django
        from django.conf import settings
        settings.configure(
            DATABASES={'default': {'ENGINE': 'django.db.backends.postgresql', 'NAME': src,
                                   'HOST': c.sock, 'PORT': str(c.port), 'USER': 'postgres'}},
            INSTALLED_APPS=['django.contrib.contenttypes', 'django.contrib.auth',
                            'django.contrib.admin', 'django.contrib.sessions',
                            'django.contrib.sites', 'django.contrib.flatpages',
                            'django.contrib.redirects', 'replayshop'],
            DEFAULT_AUTO_FIELD='django.db.models.AutoField', USE_TZ=True, SITE_ID=1,
            SECRET_KEY='test-replay: no secret')
        django.setup()
        from django.core.management import call_command
        from django.db import connection
        from django.db.migrations.executor import MigrationExecutor
        self.say('   (Django %s)' % django.get_version())
        executor = MigrationExecutor(connection)
        plan = [m for m, _ in executor.migration_plan(executor.loader.graph.leaf_nodes())]
        done = {}                   # app -> migrations applied, in order
        steps = []
        for m in plan:
            steps.append(('forwards', m.app_label, m.name))
        for m in reversed(plan):
            steps.append(('backwards', m.app_label, m.name))
        for direction, app, name in steps:
            if direction == 'forwards':
                target = name
                done.setdefault(app, []).append(name)
            else:
                done[app].remove(name)
                target = done[app][-1] if done[app] else 'zero'
            step = 'django/%s/%s.%s' % (direction, app, name)
            if self.args.only and not re.search(self.args.only, step):
                continue
            t0 = time.monotonic()
            with open(os.devnull, 'w') as null:
                call_command('migrate', app, target, skip_checks=True, interactive=False,
                             verbosity=0, stdout=null)
            connection.close()
            outcome, detail, err = self.outcome(c, src, dst, slot, step)
            self.record('django', step, outcome, detail, err, time.monotonic() - t0)
            if outcome != 'equal':
                self.resync(c, src, dst, slot)
        self.drop_pair(c, src, dst, slot)

    def resync(self, c, src, dst, slot):
        """The copy resolved by hand as docs/cdc.md says: its schema
        rebuilt from a dump of the source (which runs no DDL meanwhile),
        then its progress moved to the source's current LSN."""
        lsn = c.query('postgres', 'SELECT pg_current_wal_lsn()')
        c.query('postgres', 'DROP DATABASE %s WITH (FORCE)' % dst)
        c.query('postgres', 'CREATE DATABASE %s TEMPLATE template0' % dst)
        dump = subprocess.run([c.bin('pg_dump'), '--schema-only', '--exclude-schema=ddl_notify',
                               '-d', c.connstr(src)], capture_output=True, text=True, check=True).stdout
        dump = ''.join(b for b in re.split(r'(?m)(?=^--\n-- Name: )', dump)
                       if not re.search(r'(?m)^-- Name: (ddl_notify; Type: EXTENSION|EXTENSION ddl_notify; Type: COMMENT);', b))
        r = subprocess.run([c.bin('psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', c.connstr(dst)],
                           input=dump, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError('restoring the copy: %s' % r.stderr)
        c.query(dst, 'CREATE SCHEMA ddl_replay; CREATE TABLE ddl_replay.progress'
                ' (slot text PRIMARY KEY, end_lsn pg_lsn NOT NULL);'
                " INSERT INTO ddl_replay.progress VALUES ('%s', '%s')" % (slot, lsn))

    # --- the verdict ----------------------------------------------------------

    def verdict(self, corpora):
        passed = failed = 0
        for corpus in corpora:
            path = os.path.join(self.args.expected_dir, 'expected-%s-%s.txt' % (corpus, self.args.major))
            expected = {}
            if os.path.exists(path):
                with open(path) as f:
                    for line in f:
                        if line.strip() and not line.startswith('#'):
                            o, s = line.split()[:2]
                            expected[s] = o
            else:
                self.say('   (no %s: every step is expected to stop at worst)' % ('test/replay/' + os.path.basename(path)))
            counts = collections.Counter()
            better, worse = [], []
            steps = [s for s in self.results if s.startswith(corpus + '/')]
            for s in steps:
                o = self.results[s][0]
                counts[o] += 1
                e = expected.get(s, 'stopped')
                if RANK[o] < RANK[e]:
                    worse.append('%s: %s, expected %s' % (s, o, e))
                    failed += 1
                else:
                    passed += 1
                    if RANK[o] > RANK[e]:
                        better.append('%s: %s, was %s' % (s, o, e))
            self.say('== %s: %d steps, %d equal, %d stopped, %d diverged, %d error' % (
                corpus, len(steps), counts['equal'], counts['stopped'], counts['diverged'], counts['error']))
            for (c, reason), n in self.reasons.most_common():
                if c == corpus and n >= 2:
                    self.say('   %4d stopped: %s' % (n, reason))
            for b in better:
                self.say('   better: ' + b)
            for w in worse:
                self.say('   WORSE: ' + w)
            if self.args.update:
                with open(path, 'w') as f:
                    f.write('# test/replay: the outcome of each step of corpus %s on PostgreSQL %s,\n'
                            '# as last recorded (REPLAY_UPDATE=1 make test-replay); see\n'
                            '# test/replay/replay.py for what the outcomes mean.\n' % (corpus, self.args.major))
                    for s in steps:
                        f.write('%s %s\n' % (self.results[s][0], s))
                self.say('   wrote ' + 'test/replay/' + os.path.basename(path))
        return passed, failed


def normalise_reason(detail):
    """A stop reason without its names, to count the causes."""
    reason = re.sub(r'\[(\S+ )?(\S+ [A-Z ]+?) .*\]$', r'[\2]', detail)
    reason = re.sub(r'"[^"]*"', '"..."', reason)
    reason = re.sub(r'\b[0-9]+\b', 'N', reason)
    return reason[:200]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bindir', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--port', required=True, help='one port per job, comma-separated')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--repo', required=True)
    ap.add_argument('--consumer', required=True)
    ap.add_argument('--major', required=True)
    ap.add_argument('--expected-dir', required=True)
    ap.add_argument('--log', required=True)
    ap.add_argument('--corpus', default='pgregress,django')
    ap.add_argument('--regress')
    ap.add_argument('--regress-lib')
    ap.add_argument('--django-app')
    ap.add_argument('--only')
    ap.add_argument('--update', action='store_true')
    ap.add_argument('--verbose', action='store_true')
    args = ap.parse_args()
    corpora = args.corpus.split(',')
    h = Harness(args)
    for c in h.clusters:
        c.start()
    t0 = time.monotonic()
    try:
        for corpus in corpora:
            t1 = time.monotonic()
            h.say('== corpus %s' % corpus)
            getattr(h, 'corpus_' + corpus)()
            h.say('   (%s: %d s)' % (corpus, time.monotonic() - t1))
    finally:
        for c in h.clusters:
            c.stop()
    passed, failed = h.verdict(corpora)
    h.say('   (test-replay: %d s)' % (time.monotonic() - t0))
    h.say('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
