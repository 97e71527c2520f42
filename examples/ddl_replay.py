#!/usr/bin/python3
# Copyright (c) 2026, the ddl_notify authors
#
# examples/ddl_replay.py: a consumer of ddl_notify's WAL messages (format
# version 2) that keeps a downstream copy of a database's schema in step
# with the source's DDL.  The events of one statement (details.statement:
# the same "id" in one transaction) are applied together, one of two ways.
#
# By the typed payload, for relations, sequences, schemas' drops, domains
# and enums, where an apply function takes every event of the statement:
#
#   CREATE of a table, view, materialized view or foreign table
#       -> CREATE ... built from details.after, then OWNER TO the
#          statement's role
#   ALTER (and RENAME, SET SCHEMA, CREATE/DROP INDEX on a table, ALTER
#   INDEX ... SET/RESET, ATTACH/DETACH PARTITION on the partitioned table)
#       -> one statement per entry of details.changes
#   drops (sql_drop events, cascaded objects included)
#       -> DROP ... IF EXISTS of the object the event names
#   DROP SCHEMA
#       -> the same on the target
#   a sequence's events (CREATE/ALTER SEQUENCE, a serial or identity
#   column's sequence)
#       -> CREATE or ALTER SEQUENCE to its "after" image, then OWNED BY
#
# By the statement's text, once per statement id, for everything else
# (functions, procedures, aggregates, operators and their classes and
# families, casts, collations, conversions, base and range types, rules,
# triggers, policies, statistics, text search objects, FDWs, servers, user
# mappings, extensions, ALTER INDEX but its SET/RESET, ALTER SCHEMA,
# REFRESH MATERIALIZED VIEW ...), for a statement that mixes such an event with typed ones (the
# typed attempt is rolled back to a savepoint first: nothing is applied
# twice), for the tags whose work no image shows (GRANT, REVOKE, COMMENT,
# SECURITY LABEL, ALTER DEFAULT PRIVILEGES, CREATE SCHEMA, REFRESH
# MATERIALIZED VIEW; ALTER TABLE's OWNER TO, SET TABLESPACE, triggers'
# and rules' ENABLE/DISABLE, row level security, DETACH PARTITION
# CONCURRENTLY ...: TEXT_SUBCOMMANDS, by_text) and for a CREATE or ALTER
# TABLE naming a toast.* parameter, which no image carries:
#
#       -> SET LOCAL search_path to details.statement.search_path, the
#          settings of details.statement.settings that change what literals
#          mean (DateStyle, IntervalStyle, TimeZone,
#          standard_conforming_strings) to the source's,
#          check_function_bodies off (as pg_dump's restores), SET LOCAL
#          ROLE to details.statement.role (stops when the copy has no such
#          role), the event's query run as it is; then each relation's last
#          "after" image of the statement is verified and each object it
#          made or altered is looked up (to_regprocedure, to_regtype, ...)
#
# Only a text marked "exact" (the parser's own text of that top-level
# statement: not redacted, not cut, captured) is applied; the events of a
# statement run inside another ("nested": an extension's script) come with
# the outer statement's text.  Otherwise it stops.  Why texts and not
# definitions built from the catalogs: docs/cdc.md.
#
# Each source transaction is applied in one target transaction, together
# with the LSN it ended at (table ddl_replay.progress on the target): a
# restart skips what was applied already, so nothing is applied twice or
# lost.  After each event it applied, the copy's relation is read with the
# capture's own catalog reading and compared with the event's "after"
# image (verify_event).  It stops (exit status 3), rolling back the whole
# transaction, at an event it cannot apply (no exact text, no images, a
# statement the copy refuses, a missing role) or verify, with the
# event, the statement, the reason and the difference; --skip-event ID
# resumes past an event whose work was done by hand (recorded in
# ddl_replay.skipped).  Row changes are not copied here; a real pipeline
# would apply them in the same loop.  docs/cdc.md shows it;
# test/t/044_replay.pl replays a long random DDL run with it,
# test/t/045_replay_consumer.pl its stops, make test-replay real DDL.
#
# The file's parts: building statements from an image and the changes of
# an ALTER (Applier: one branch per kind of event; apply_event says
# whether it applied the event), verifying the copy (read_image,
# verify_event), the main loop (Replayer: transactions, statements
# (apply_statement: typed or by text, apply_text), progress, stops, the
# events no apply function took), pgoutput and main.
#
#   ddl_replay.py --source 'dbname=app' --slot replay --publication replay_pub \
#                 --target 'host=copy dbname=app' [--create-slot] \
#                 [--end-lsn 0/1234ABC] [--timeout 60] [--verbose] [--stats] \
#                 [--skip-event ID ...]
#
# The source needs wal_level = logical, ddl_notify.wal_messages = on and
# ddl_notify.wal_message_version = 2 (the default); the publication may be
# empty (CREATE PUBLICATION replay_pub): messages ignore publications.
# It stops once the server has sent everything up to --end-lsn (without it,
# it runs until interrupted).  Exit status 2 when --timeout passes first,
# 3 when it stops at an event.
# Debian: apt-get install python3-psycopg2.

import argparse
import json
import re
import select
import struct
import sys
import time

import psycopg2
import psycopg2.extras

PREFIX = 'ddl_notify'

# the relation kinds an image describes, as SQL spells them in ALTER/DROP
KIND_SQL = {
    'table': 'TABLE',
    'partitioned table': 'TABLE',
    'view': 'VIEW',
    'materialized view': 'MATERIALIZED VIEW',
    'foreign table': 'FOREIGN TABLE',
    'composite type': 'TYPE',
}

# object_type of a drop event -> how it is dropped (by its address_names)
DROPS = {
    'table': 'TABLE',
    'view': 'VIEW',
    'materialized view': 'MATERIALIZED VIEW',
    'foreign table': 'FOREIGN TABLE',
}


# the settings of details.statement.settings a text is run under (any
# other name the source sends is ignored: it is not for the source to say
# what is set on the copy)
TEXT_SETTINGS = ('DateStyle', 'IntervalStyle', 'TimeZone', 'standard_conforming_strings')


# object types of events that pg_get_object_address() knows by another name
# (a composite type's attribute is a column of its relation)
ADDRESS_TYPES = {'composite type column': 'table column'}


class NotUnderstood(Exception):
    pass


def lsn_int(text):
    hi, lo = text.split('/')
    return (int(hi, 16) << 32) + int(lo, 16)


def lsn_text(n):
    return '%X/%X' % (n >> 32, n & 0xFFFFFFFF)


def ident(name):
    """A name quoted as SQL needs it (always: never wrong)."""
    return '"' + name.replace('"', '""') + '"'


def qname(schema, name):
    return ident(schema) + '.' + ident(name)


def default_not_null_name(name1, name2):
    """The name PostgreSQL gives a NOT NULL constraint it names itself
    (makeObjectName): TABLE_COLUMN_not_null, or DOMAIN_not_null (name2
    None), its parts cut (the longer first, at a character's end) to fit
    63 bytes.  An image carries a column's or a domain's "not_null_name"
    only when it is not this one."""
    a = name1.encode('utf-8')
    b = name2.encode('utf-8') if name2 is not None else b''
    avail = 63 - len('_not_null') - (1 if name2 is not None else 0)
    la, lb = len(a), len(b)
    while la + lb > avail:
        if la > lb:
            la -= 1
        else:
            lb -= 1

    def clip(raw, n):
        while n > 0 and n < len(raw) and (raw[n] & 0xC0) == 0x80:
            n -= 1      # not inside a character
        return raw[:n].decode('utf-8')
    out = clip(a, la)
    if name2 is not None:
        out += '_' + clip(b, lb)
    return out + '_not_null'


# --- building statements from an image -------------------------------------

def column_sql(col):
    """A column definition: name, type, collation, generated or default,
    NOT NULL, identity."""
    parts = [ident(col['name']), col['type']]
    if col.get('collation'):
        parts.append('COLLATE ' + col['collation'])
    if col.get('generated'):
        parts.append('GENERATED ALWAYS AS (%s) %s' % (col['generated'], 'VIRTUAL' if col.get('virtual') else 'STORED'))
    elif col.get('default') is not None:
        parts.append('DEFAULT ' + col['default'])
    if col.get('not_null'):
        if col.get('not_null_name'):
            parts.append('CONSTRAINT ' + ident(col['not_null_name']))
        parts.append('NOT NULL')
        if col.get('not_null_no_inherit'):
            parts.append('NO INHERIT')
    if col.get('identity'):
        parts.append('GENERATED %s AS IDENTITY' % col['identity'].upper())
    return ' '.join(parts)


def column_storage_sql(alter, col):
    """ALTER COLUMN ... SET STORAGE, SET COMPRESSION, SET STATISTICS for
    what a column of an image has that is not its default (CREATE TABLE
    takes STORAGE only from PostgreSQL 16 on: always set afterwards)."""
    col_alter = alter + 'ALTER COLUMN %s ' % ident(col['name'])
    stmts = []
    if col.get('storage'):
        stmts.append(col_alter + 'SET STORAGE ' + col['storage'].upper())
    if col.get('compression'):
        stmts.append(col_alter + 'SET COMPRESSION ' + col['compression'])
    if col.get('statistics') is not None:
        stmts.append(col_alter + 'SET STATISTICS %d' % col['statistics'])
    return stmts


def replica_identity_sql(image):
    """REPLICA IDENTITY ..., or None: "index" without an index is what
    dropping the identity's index leaves, and the drop made it here too."""
    ri = image.get('replica_identity') or 'default'
    if ri == 'index':
        if image.get('replica_identity_index') is None:
            return None
        return 'REPLICA IDENTITY USING INDEX ' + ident(image['replica_identity_index'])
    return 'REPLICA IDENTITY ' + ri.upper()


def literal(s):
    return "'" + s.replace("'", "''") + "'"


def options_sql(option):
    """name 'value' from a "name=value" option."""
    name, _, value = option.partition('=')
    return '%s %s' % (ident(name), literal(value))


def with_sql(image):
    """ WITH (storage parameters) of an image, or ''."""
    if not image.get('reloptions'):
        return ''
    return ' WITH (%s)' % ', '.join(reloption_sql(o) for o in image['reloptions'])


def reloption_sql(option):
    """name = 'value' from a "name=value" storage parameter."""
    name, _, value = option.partition('=')
    return '%s = %s' % (name, literal(value))


def sequence_options_sql(image):
    """A sequence's parameters as CREATE/ALTER SEQUENCE take them."""
    return 'AS %s INCREMENT BY %d MINVALUE %d MAXVALUE %d START WITH %d CACHE %d %sCYCLE' % (
        image['type'], image['increment'], image['min'], image['max'], image['start'],
        image['cache'], '' if image['cycle'] else 'NO ')


def owner_sql(owner):
    """OWNED BY's target: schema.table.column, or NONE."""
    if owner is None:
        return 'NONE'
    return qname(owner['schema'], owner['name']) + '.' + ident(owner['column'])


class IfMissing:
    """A statement to run only if the constraint or index it makes is not
    there yet (a partition gets its parent's at CREATE)."""

    def __init__(self, what, schema, table, name, sql):
        self.what, self.schema, self.table, self.name, self.sql = what, schema, table, name, sql


class IfColumnDiffers:
    """A statement to run only if a column's NOT NULL or default (what) on
    the copy is not the image's (want) yet: an INHERITS child's column it
    only inherits comes with its parent's at CREATE, and only a child that
    set its own needs more."""

    def __init__(self, what, schema, table, column, want, sql):
        self.what, self.schema, self.table, self.column = what, schema, table, column
        self.want, self.sql = want, sql


def inherited_column_steps(image, columns):
    """For the columns given, which the relation takes from a parent (a
    partition's, an INHERITS child's only inherited ones): statements that
    give each the NOT NULL and default of the image where the parent's
    differ (checked on the copy when they run: IfColumnDiffers)."""
    rel = qname(image['schema'], image['name'])
    steps = []
    for c in columns:
        col = 'ALTER %s %s ALTER COLUMN %s ' % (KIND_SQL[image['kind']], rel, ident(c['name']))
        steps.append(IfColumnDiffers('not_null', image['schema'], image['name'], c['name'],
                                     bool(c.get('not_null')),
                                     col + ('SET NOT NULL' if c.get('not_null') else 'DROP NOT NULL')))
        if not c.get('generated'):
            steps.append(IfColumnDiffers('default', image['schema'], image['name'], c['name'],
                                         c.get('default'),
                                         col + ('SET DEFAULT ' + c['default'] if c.get('default') is not None
                                                else 'DROP DEFAULT')))
    return steps


def create_sql(image, column_options=None):
    """CREATE statements that make the relation of an "after" image.
    column_options: what its CREATE says of some of the columns it takes
    from its parents, by column: for a partition, the options of PARTITION
    OF (Applier.partition_column_options); for an INHERITS child, the name
    of a NOT NULL constraint (Applier.inherited_not_null_names)."""
    kind = image['kind']
    rel = qname(image['schema'], image['name'])
    stmts = []
    if kind == 'composite type':
        return ['CREATE TYPE %s AS (%s)' % (rel, ', '.join(
            '%s %s%s' % (ident(c['name']), c['type'], ' COLLATE ' + c['collation'] if c.get('collation') else '')
            for c in image.get('columns', [])))]
    if kind in ('view', 'materialized view'):
        if image.get('definition') is None:
            raise NotUnderstood('%s %s: the image has no definition' % (kind, rel))
        stmts.append('CREATE %s %s%s AS %s%s' % (
            KIND_SQL[kind], rel, with_sql(image), image['definition'].rstrip().rstrip(';'),
            ' WITH NO DATA' if kind == 'materialized view' else ''))
    elif image.get('partition_of'):
        stmts += create_partition_sql(image, rel, column_options)
    else:
        stmts += create_table_sql(image, rel, column_options)
    if not image.get('partition_of'):
        # indexes a constraint did not make
        stmts += [i['definition'] for i in image.get('indexes', [])
                  if not i.get('constraint')]
    ri = replica_identity_sql(image)
    if ri is not None and ri != 'REPLICA IDENTITY DEFAULT' and kind in ('table', 'partitioned table'):
        stmts.append('ALTER %s %s %s' % (KIND_SQL[kind], rel, ri))
    # a column's STORAGE, COMPRESSION and statistics target, the index the
    # table is clustered on (a partition's columns take their parent's
    # storage and compression at CREATE: setting them again changes nothing)
    alter = 'ALTER %s %s ' % (KIND_SQL[kind], rel)
    for c in image.get('columns', []):
        stmts += column_storage_sql(alter, c)
    stmts += [alter + 'CLUSTER ON ' + ident(i['name'])
              for i in image.get('indexes', []) if i.get('clustered')]
    return stmts


def create_partition_sql(image, rel, column_options):
    """create_sql's statements of a partition ("rel"): PARTITION OF, then
    what it has of its own."""
    kind = image['kind']
    stmts = []
    # a partition: its columns, their defaults and NOT NULL, and the
    # partitioned table's constraints and indexes come from its parent;
    # what it has of its own is added by name below
    parent = image['partition_of']
    named = ''
    if column_options:
        named = ' (%s)' % ', '.join('%s WITH OPTIONS %s' % (ident(c), o)
                                    for c, o in column_options.items())
    stmts.append('CREATE %s%s %s PARTITION OF %s%s %s' % (
        'UNLOGGED ' if image.get('unlogged') else '',
        'FOREIGN TABLE' if kind == 'foreign table' else 'TABLE', rel,
        qname(parent['schema'], parent['name']), named, image['partition_bound']))
    if kind == 'partitioned table':
        stmts[-1] += ' PARTITION BY ' + image['partition_key']
    stmts[-1] += with_sql(image)
    # a partition's own default or NOT NULL (PARTITION OF t (b DEFAULT 1))
    stmts += inherited_column_steps(image, image.get('columns', []))
    stmts += [IfMissing('constraint', image['schema'], image['name'], c['name'],
                        'ALTER TABLE %s ADD CONSTRAINT %s %s' % (rel, ident(c['name']), c['definition']))
              for c in image.get('constraints', [])]
    stmts += [IfMissing('index', image['schema'], image['name'], i['name'], i['definition'])
              for i in image.get('indexes', []) if not i.get('constraint')]
    return stmts


def create_table_sql(image, rel, column_options):
    """create_sql's statements of a table that is no partition ("rel"):
    CREATE TABLE (or FOREIGN TABLE) with its own columns and constraints,
    then what it inherits and its type."""
    kind = image['kind']
    stmts = []
    # an INHERITS child: the columns and constraints it only inherits
    # come from its parents (as pg_dump leaves them out); one it has of
    # its own as well is listed and merges with the parent's
    elems = [column_sql(c) for c in image.get('columns', []) if not c.get('inherited')]
    no_inherit = {c['name']: c.get('not_null_no_inherit') for c in image.get('columns', [])}
    elems += ['CONSTRAINT %s %s' % (ident(c['name']), c['definition'])
              for c in image.get('constraints', []) if not c.get('inherited')]
    elems += ['CONSTRAINT %s NOT NULL %s%s' % (ident(n), ident(c), ' NO INHERIT' if no_inherit.get(c) else '')
              for c, n in (column_options or {}).items()]
    stmt = 'CREATE %s%s %s (%s)' % (
        'UNLOGGED ' if image.get('unlogged') else '',
        'FOREIGN TABLE' if kind == 'foreign table' else 'TABLE',
        rel, ', '.join(elems))
    if kind == 'partitioned table':
        if image.get('partition_key') is None:
            raise NotUnderstood('%s: the image has no partition key' % rel)
        stmt += ' PARTITION BY ' + image['partition_key']
    if image.get('inherits'):
        stmt += ' INHERITS (%s)' % ', '.join(qname(p['schema'], p['name']) for p in image['inherits'])
    stmt += with_sql(image)
    if kind == 'foreign table':
        if image.get('server') is None:
            raise NotUnderstood('%s: the image has no server' % rel)
        stmt += ' SERVER ' + ident(image['server'])
        if image.get('options'):
            stmt += ' OPTIONS (%s)' % ', '.join(options_sql(o) for o in image['options'])
    stmts.append(stmt)
    stmts += inherited_column_steps(image, [c for c in image.get('columns', []) if c.get('inherited')])
    if image.get('of_type'):
        # a typed table: its columns are the type's (they must match)
        stmts.append('ALTER TABLE %s OF %s' % (rel, qname(image['of_type']['schema'], image['of_type']['name'])))
    return stmts


# --- the changes of an ALTER -------------------------------------------------

# The changes come by column (attnum order), then constraints, indexes and
# the replica identity.  One ALTER TABLE may need them in another order to
# be accepted when they are applied one by one: a primary key dropped before
# its column's NOT NULL, an identity dropped before its column's type
# changes, a default dropped before and set after a type change, a foreign
# key added after the key it references, the replica identity moved off an
# index before the index goes and onto one after it came.
COLUMN_STEPS = ['rename column', 'drop identity', 'drop expression', 'drop default',
                'alter column type', 'set collation', 'set not null', 'drop not null',
                'set default', 'add identity', 'set identity', 'set expression',
                'set storage', 'set compression', 'set statistics']
CONSTRAINT_STEPS = ['primary key', 'unique', 'exclusion', 'check', 'foreign key']


def change_order(ch):
    op = ch['op']
    if op in ('rename', 'set schema'):
        return (0,)
    if op == 'set definition':
        return (4, len(COLUMN_STEPS))   # after RENAME COLUMN (its alias is in the query)
    if op == 'set replica identity':
        return (1,) if ch.get('new') != 'index' else (9,)
    if op in ('drop constraint', 'drop index'):
        return (2,)
    if op == 'add column' and ch['column'].get('generated'):
        return (4, len(COLUMN_STEPS))   # after the types of the columns it reads
    if op in ('add column', 'drop column'):
        return (3,)
    if op in COLUMN_STEPS:
        return (4, COLUMN_STEPS.index(op))
    if op in ('rename constraint', 'rename index'):
        return (5,)
    if op == 'add constraint':
        t = ch['constraint'].get('type')
        return (6, CONSTRAINT_STEPS.index(t) if t in CONSTRAINT_STEPS else 0)
    if op == 'add index':
        return (7,)
    if op in ('validate constraint', 'alter constraint'):
        return (7, 1)
    return (8,)


def after_column(after, name):
    for c in (after or {}).get('columns', []):
        if c['name'] == name:
            return c
    return None


# The change ops of a relation (not of a composite type), by the method of
# Applier that applies them.
CHANGE_GROUPS = {op: group for group, ops in (
    ('change_relation', ('set replica identity', 'set logged', 'set unlogged', 'set inherits',
                         'set of type', 'cluster on', 'set without cluster', 'attach partition',
                         'detach partition', 'set reloptions')),
    ('change_column', ('add column', 'drop column', 'rename column', 'alter column type',
                       'set collation', 'set not null', 'set not null inherit', 'drop not null',
                       'set default', 'drop default', 'add identity', 'set identity',
                       'drop identity', 'drop expression', 'set expression', 'set storage',
                       'set compression', 'set statistics')),
    ('change_constraint', ('add constraint', 'drop constraint', 'validate constraint',
                           'alter constraint', 'rename constraint')),
    ('change_index', ('add index', 'drop index', 'rename index', 'set index reloptions')),
) for op in ops}


class ChangeTarget:
    """The relation Applier.apply_changes changes: its kind's SQL word,
    its name as the changes applied so far left it (a rename or SET
    SCHEMA moves it on), "after", and the constraints and indexes the
    changes drop and add under the same name (redefined: often only by
    what the other changes do to it, a renamed column's new name in its
    definition, so dropped and added again only if its definition on the
    copy still differs, and never with CASCADE: what depends on it stays)."""

    def __init__(self, kind, schema, name, after, changes):
        self.kind, self.schema, self.name, self.after = kind, schema, name, after
        self.redefined = {}
        for op in ('constraint', 'index'):
            dropped = {ch['name'] for ch in changes if ch['op'] == 'drop ' + op}
            self.redefined[op] = {ch[op]['name'] for ch in changes
                                  if ch['op'] == 'add ' + op and ch[op]['name'] in dropped}

    @property
    def rel(self):
        return qname(self.schema, self.name)

    @property
    def alter(self):
        return 'ALTER %s %s ' % (self.kind, self.rel)


class Applier:
    def __init__(self, cur, verbose, counts):
        self.cur = cur
        self.verbose = verbose
        self.counts = counts    # what was applied, by kind: for --stats
        self.last_sql = None
        self.server_version = cur.connection.server_version    # 180006: 18.6

    def run(self, sql, params=None):
        if self.verbose:
            print('  ' + sql, file=sys.stderr)
        self.last_sql = sql     # named when the copy refuses it
        self.cur.execute(sql, params)

    def own(self, ev, kind_sql, rel):
        """A relation, sequence, domain or enum made from an image gets the
        owner the source gave it: the role its statement ran as
        (details.statement), when the copy has that role; a statement
        applied by its text later (a GRANT) runs as that role and needs it."""
        key = statement_key(ev)
        if key is None or not key.get('role') or key.get('nested'):
            return
        if not self.exists('SELECT EXISTS (SELECT FROM pg_roles WHERE rolname OPERATOR(pg_catalog.=) %s)'
                           ' AND %s IS DISTINCT FROM current_user', (key['role'], key['role'])):
            return
        self.run('ALTER %s %s OWNER TO %s' % (kind_sql, rel, ident(key['role'])))

    def exists(self, sql, params):
        self.cur.execute(sql, params)
        return self.cur.fetchone()[0]

    def constraint_exists(self, schema, table, name):
        return self.exists(
            'SELECT EXISTS (SELECT FROM pg_catalog.pg_constraint c'
            ' JOIN pg_catalog.pg_class r ON r.oid OPERATOR(pg_catalog.=) c.conrelid'
            ' JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) r.relnamespace'
            ' WHERE n.nspname OPERATOR(pg_catalog.=) %s AND r.relname OPERATOR(pg_catalog.=) %s'
            ' AND c.conname OPERATOR(pg_catalog.=) %s)', (schema, table, name))

    def constraint_def(self, schema, table, name):
        """pg_get_constraintdef() of that constraint here, or None."""
        self.cur.execute(
            'SELECT pg_catalog.pg_get_constraintdef(c.oid) FROM pg_catalog.pg_constraint c'
            ' WHERE c.conrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND c.conname OPERATOR(pg_catalog.=) %s', (qname(schema, table), name))
        row = self.cur.fetchone()
        return row[0] if row else None

    def view_def(self, schema, name):
        """pg_get_viewdef() of that view here, or None."""
        self.cur.execute('SELECT pg_catalog.pg_get_viewdef(pg_catalog.to_regclass(%s))',
                         (qname(schema, name),))
        row = self.cur.fetchone()
        return row[0] if row else None

    def index_def(self, schema, name):
        """pg_get_indexdef() of that index here, or None."""
        self.cur.execute(
            'SELECT pg_catalog.pg_get_indexdef(i.indexrelid) FROM pg_catalog.pg_index i'
            ' WHERE i.indexrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)',
            (qname(schema, name),))
        row = self.cur.fetchone()
        return row[0] if row else None

    def relation_exists(self, schema, name):
        return self.exists(
            'SELECT pg_catalog.to_regclass(%s) IS NOT NULL', (qname(schema, name),))

    def constraint_droppable(self, schema, table, name):
        """Is there such a constraint on the copy, other than a NOT NULL
        one?  (PostgreSQL 18 and later record NOT NULL as constraints and
        report their drops; a column's nullability travels in the ALTER's
        changes, "set not null" / "drop not null", instead.)  None when it
        is there but inherited: a partition's or an INHERITS child's goes
        with its parent's, which the same statement drops, and its own drop
        is refused; the main loop checks it gone once the statement is
        applied (check_left_out)."""
        self.cur.execute(
            'SELECT coninhcount OPERATOR(pg_catalog.>) 0 FROM pg_catalog.pg_constraint'
            ' WHERE conrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND conname OPERATOR(pg_catalog.=) %s'
            ' AND contype OPERATOR(pg_catalog.<>) \'n\'',
            (qname(schema, table), name))
        row = self.cur.fetchone()
        if row is None:
            return False
        return None if row[0] else True

    def constraint_only_inherited(self, schema, table, name):
        """Is the copy's constraint of that name one the table only
        inherits (not its own too)?"""
        return self.exists(
            'SELECT EXISTS (SELECT FROM pg_catalog.pg_constraint'
            ' WHERE conrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND conname OPERATOR(pg_catalog.=) %s AND NOT conislocal)',
            (qname(schema, table), name))

    def index_droppable(self, schema, name):
        """Is there such an index, and no constraint's (the constraint's
        drop takes it)?"""
        return self.exists(
            'SELECT pg_catalog.to_regclass(%s) IS NOT NULL AND NOT EXISTS ('
            ' SELECT FROM pg_catalog.pg_constraint'
            ' WHERE conindid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s))',
            (qname(schema, name), qname(schema, name)))

    def apply_changes(self, before, after, changes, subcommands=None):
        """One statement per change, to the relation as "before" names it
        (a rename or SET SCHEMA moves on to its new name), in an order
        PostgreSQL accepts (change_order); then each ALTER COLUMN TYPE of
        the statement that changed no type (retype_again)."""
        kind = KIND_SQL.get((after or before)['kind'])
        if kind is None:
            raise NotUnderstood('changes of a %s' % (after or before)['kind'])
        at = ChangeTarget(kind, before['schema'], before['name'], after, changes)
        for ch in sorted(changes, key=change_order):
            op = ch['op']
            self.counts[op] = self.counts.get(op, 0) + 1
            if op in ('rename', 'set schema', 'set definition'):
                self.change_relation(at, ch)
            elif kind in ('VIEW', 'MATERIALIZED VIEW') and op in ('add column', 'alter column type'):
                pass            # what a new query (set definition) did
            elif kind == 'TYPE':
                self.change_composite(at, ch)
            elif op in CHANGE_GROUPS:
                getattr(self, CHANGE_GROUPS[op])(at, ch)
            else:
                raise NotUnderstood('change "%s"' % op)
        if kind == 'TABLE':
            self.retype_again(at.rel, after, changes, subcommands)

    def change_relation(self, at, ch):
        """A change of the relation itself: its name, schema, query,
        persistence, parents, type, replica identity, storage parameters,
        partitions, clustering."""
        op, alter = ch['op'], at.alter
        if op == 'rename':
            self.run(alter + 'RENAME TO ' + ident(ch['new']))
            at.name = ch['new']
        elif op == 'set schema':
            self.run(alter + 'SET SCHEMA ' + ident(ch['new']))
            at.schema = ch['new']
        elif op == 'set definition':
            # CREATE OR REPLACE: the view's columns follow its query;
            # nothing when the other changes made it so (RENAME COLUMN)
            if self.view_def(at.schema, at.name) != ch['new']:
                if at.kind != 'VIEW':
                    raise NotUnderstood('a new query for materialized view %s' % at.rel)
                self.run('CREATE OR REPLACE VIEW %s AS %s' % (at.rel, ch['new'].rstrip().rstrip(';')))
        elif op == 'set replica identity':
            ri = replica_identity_sql({'replica_identity': ch['new'],
                                       'replica_identity_index': ch.get('new_index')})
            if ri is not None:
                self.run(alter + ri)
        elif op in ('set logged', 'set unlogged'):
            self.run(alter + op.upper())
        elif op == 'set inherits':
            # ALTER TABLE ... NO INHERIT / INHERIT: parents gone, then new ones
            old_p = [qname(p['schema'], p['name']) for p in ch.get('old') or []]
            new_p = [qname(p['schema'], p['name']) for p in ch.get('new') or []]
            for p in old_p:
                if p not in new_p:
                    self.run(alter + 'NO INHERIT ' + p)
            for p in new_p:
                if p not in old_p:
                    self.run(alter + 'INHERIT ' + p)
        elif op == 'set of type':
            if ch.get('new'):
                self.run(alter + 'OF ' + qname(ch['new']['schema'], ch['new']['name']))
            else:
                self.run(alter + 'NOT OF')
        elif op == 'cluster on':
            self.run(alter + 'CLUSTER ON ' + ident(ch['name']))
        elif op == 'set without cluster':
            self.run(alter + 'SET WITHOUT CLUSTER')
        elif op == 'attach partition':
            if ch.get('bound') is None:
                raise NotUnderstood('attach partition: the change has no bound')
            part = ch['partition']
            self.run(alter + 'ATTACH PARTITION %s %s' % (qname(part['schema'], part['name']), ch['bound']))
        elif op == 'detach partition':
            part = ch['partition']
            self.run(alter + 'DETACH PARTITION ' + qname(part['schema'], part['name']))
        else:   # set reloptions
            self.set_reloptions(alter, ch)

    def set_reloptions(self, alter, ch):
        """RESET the storage parameters gone, SET the new ones: of the
        relation ("alter" its ALTER ... prefix) or of an index."""
        new = {o.partition('=')[0]: o for o in ch.get('new') or []}
        gone = [o.partition('=')[0] for o in ch.get('old') or []
                if o.partition('=')[0] not in new]
        if gone:
            self.run(alter + 'RESET (%s)' % ', '.join(gone))
        if new:
            self.run(alter + 'SET (%s)' % ', '.join(reloption_sql(o) for o in new.values()))

    def change_composite(self, at, ch):
        """A composite type's attributes; CASCADE to the typed tables of
        the type, which the source's statement must have said when it had
        any (it is refused without)."""
        op, alter = ch['op'], at.alter
        col = ch.get('column') if isinstance(ch.get('column'), dict) else after_column(at.after, ch.get('column'))
        if op == 'add column':
            self.run(alter + 'ADD ATTRIBUTE %s %s%s CASCADE' % (
                ident(col['name']), col['type'], ' COLLATE ' + col['collation'] if col.get('collation') else ''))
        elif op == 'drop column':
            self.run(alter + 'DROP ATTRIBUTE IF EXISTS %s CASCADE' % ident(ch['column']))
        elif op == 'rename column':
            self.run(alter + 'RENAME ATTRIBUTE %s TO %s CASCADE' % (ident(ch['old']), ident(ch['new'])))
        elif op in ('alter column type', 'set collation') and col is not None:
            self.run(alter + 'ALTER ATTRIBUTE %s TYPE %s%s CASCADE' % (
                ident(col['name']), col['type'], ' COLLATE ' + col['collation'] if col.get('collation') else ''))
        else:
            raise NotUnderstood('change "%s" of a composite type' % op)

    def change_column(self, at, ch):
        """A column added, dropped, renamed, retyped; its settings
        (change_column_setting)."""
        op, alter = ch['op'], at.alter
        if op == 'add column':
            self.run(alter + 'ADD COLUMN ' + column_sql(ch['column']))
            for stmt in column_storage_sql(alter, ch['column']):
                self.run(stmt)
        elif op == 'drop column':
            self.run(alter + 'DROP COLUMN IF EXISTS ' + ident(ch['column']) + ' CASCADE')
        elif op == 'rename column':
            self.run(alter + 'RENAME COLUMN %s TO %s' % (ident(ch['old']), ident(ch['new'])))
        elif op in ('alter column type', 'set collation'):
            col = after_column(at.after, ch['column'])
            if col is None:
                raise NotUnderstood('%s: column %s not in "after"' % (op, ch['column']))
            # a foreign table has no rows here to convert, and no USING;
            # nor has a generated column (its expression makes its values)
            self.run(alter + 'ALTER COLUMN %s TYPE %s%s%s' % (
                ident(col['name']), col['type'],
                ' COLLATE ' + col['collation'] if col.get('collation') else '',
                '' if at.kind == 'FOREIGN TABLE' or col.get('generated') else
                ' USING %s::%s' % (ident(col['name']), col['type'])))
        elif op in ('set not null', 'set not null inherit', 'drop not null'):
            self.change_not_null(at, ch)
        else:
            self.change_column_setting(at, ch)

    def change_not_null(self, at, ch):
        """SET NOT NULL (a named, NO INHERIT or NOT VALID one as 18's ADD
        CONSTRAINT ... NOT NULL), its [NO] INHERIT, DROP NOT NULL."""
        op, alter = ch['op'], at.alter
        if op == 'set not null':
            col = after_column(at.after, ch['column'])
            if col is not None and (col.get('not_null_name') or col.get('not_null_no_inherit')
                                    or col.get('not_null_not_valid')):
                # 18: ADD CONSTRAINT name NOT NULL, as the source's
                # statement must have said (its children take the name)
                self.run(alter + 'ADD CONSTRAINT %s NOT NULL %s%s%s' % (
                    ident(col.get('not_null_name') or default_not_null_name(at.name, col['name'])),
                    ident(col['name']), ' NO INHERIT' if col.get('not_null_no_inherit') else '',
                    ' NOT VALID' if col.get('not_null_not_valid') else ''))
            else:
                self.run(alter + 'ALTER COLUMN %s SET NOT NULL' % ident(ch['column']))
        elif op == 'set not null inherit':
            self.run(alter + 'ALTER CONSTRAINT %s %sINHERIT' % (
                ident(ch['name']), 'NO ' if ch['no_inherit'] else ''))
        else:
            self.run(alter + 'ALTER COLUMN %s DROP NOT NULL' % ident(ch['column']))

    def change_column_setting(self, at, ch):
        """A column's default, identity, generation expression, storage,
        compression or statistics target."""
        op, alter, column = ch['op'], at.alter, ident(ch['column'])
        if op == 'set default':
            self.run(alter + 'ALTER COLUMN %s SET DEFAULT %s' % (column, ch['new']))
        elif op == 'drop default':
            self.run(alter + 'ALTER COLUMN %s DROP DEFAULT' % column)
        elif op in ('add identity', 'set identity'):
            col = after_column(at.after, ch['column'])
            if col is None or not col.get('identity'):
                raise NotUnderstood('%s: column %s has no identity in "after"' % (op, ch['column']))
            how = col['identity'].upper()
            if op == 'add identity':
                self.run(alter + 'ALTER COLUMN %s ADD GENERATED %s AS IDENTITY' % (ident(col['name']), how))
            else:
                self.run(alter + 'ALTER COLUMN %s SET GENERATED %s' % (ident(col['name']), how))
        elif op == 'drop expression':
            self.run(alter + 'ALTER COLUMN %s DROP EXPRESSION IF EXISTS' % column)
        elif op == 'set expression':
            # nothing when the other changes made it so (a RENAME COLUMN
            # of a column it reads, here or in a parent it inherits from)
            if self.column_state(at.schema, at.name, ch['column'], 'default') != ch['new']:
                self.run(alter + 'ALTER COLUMN %s SET EXPRESSION AS (%s)' % (column, ch['new']))
        elif op == 'drop identity':
            self.run(alter + 'ALTER COLUMN %s DROP IDENTITY IF EXISTS' % column)
        elif op == 'set storage':
            self.run(alter + 'ALTER COLUMN %s SET STORAGE %s' % (column, ch['new'].upper()))
        elif op == 'set compression':
            self.run(alter + 'ALTER COLUMN %s SET COMPRESSION %s' % (column, ch['new'] or 'default'))
        else:   # set statistics
            self.run(alter + 'ALTER COLUMN %s SET STATISTICS %d' % (
                column, -1 if ch['new'] is None else ch['new']))

    def change_constraint(self, at, ch):
        """A constraint added (add_constraint), dropped, validated, made
        [NOT] DEFERRABLE or renamed."""
        op, alter = ch['op'], at.alter
        if op == 'add constraint':
            self.add_constraint(at, ch)
        elif op == 'drop constraint':
            if ch['name'] not in at.redefined['constraint']:
                self.run(alter + 'DROP CONSTRAINT IF EXISTS %s CASCADE' % ident(ch['name']))
        elif op == 'validate constraint':
            self.validate_constraint(alter, at.schema, at.name, ch['name'], at.after)
        elif op == 'alter constraint':
            self.run(alter + 'ALTER CONSTRAINT %s %sDEFERRABLE INITIALLY %s' % (
                ident(ch['name']), '' if ch['deferrable'] else 'NOT ',
                'DEFERRED' if ch['deferred'] else 'IMMEDIATE'))
        elif self.constraint_exists(at.schema, at.name, ch['old']):     # rename constraint
            # renaming a constraint's index renames the constraint too
            self.run(alter + 'RENAME CONSTRAINT %s TO %s' % (ident(ch['old']), ident(ch['new'])))

    def add_constraint(self, at, ch):
        """ADD CONSTRAINT, or USING INDEX when it took over an index; one
        redefined (dropped and added under its name) only if the copy's
        still differs."""
        con, alter = ch['constraint'], at.alter
        if con['name'] in at.redefined['constraint']:
            now = self.constraint_def(at.schema, at.name, con['name'])
            if now == con['definition']:
                # the same, but a child's own now as well as inherited:
                # ADD CONSTRAINT merges it so
                if con.get('inherited') or not self.constraint_only_inherited(at.schema, at.name, con['name']):
                    return
            elif now is not None:
                self.run(alter + 'DROP CONSTRAINT ' + ident(con['name']))
        if ch.get('using_index'):
            # the constraint takes over an index the table has
            d = con['definition']
            self.run(alter + 'ADD CONSTRAINT %s %s USING INDEX %s%s%s' % (
                ident(con['name']), con['type'].upper(), ident(ch['using_index']),
                ' DEFERRABLE' if d.endswith(' DEFERRABLE') or ' DEFERRABLE INITIALLY' in d else '',
                ' INITIALLY DEFERRED' if 'INITIALLY DEFERRED' in d else ''))
        else:
            self.run(alter + 'ADD CONSTRAINT %s %s' % (ident(con['name']), con['definition']))

    def change_index(self, at, ch):
        """An index added (only if the copy's differs, when redefined),
        dropped, renamed, or given other storage parameters."""
        op, schema = ch['op'], at.schema
        if op == 'add index':
            idx = ch['index']
            if idx['name'] in at.redefined['index']:
                now = self.index_def(schema, idx['name'])
                if now == idx['definition']:
                    return
                if now is not None:
                    self.run('DROP INDEX ' + qname(schema, idx['name']))
            self.run(idx['definition'])
        elif op == 'drop index':
            if (ch['name'] not in at.redefined['index'] and
                    self.index_droppable(schema, ch['name'])):
                self.run('DROP INDEX %s CASCADE' % qname(schema, ch['name']))
        elif op == 'rename index':
            # renaming a constraint renames its index too
            if self.relation_exists(schema, ch['old']):
                self.run('ALTER INDEX %s RENAME TO %s' % (qname(schema, ch['old']), ident(ch['new'])))
        else:   # set index reloptions
            self.set_reloptions('ALTER INDEX %s ' % qname(schema, ch['name']), ch)

    def validate_constraint(self, alter, schema, table, con, after):
        """VALIDATE CONSTRAINT; or, for one the copy has NOT ENFORCED
        (18) that "after" has enforced, what makes it so there: ALTER
        CONSTRAINT ... ENFORCED for a foreign key, the constraint added
        again for a CHECK (merged with the inherited one, as the source's
        ADD CONSTRAINT did, or dropped first when the table has it of its
        own)."""
        want = next((c['definition'] for c in (after or {}).get('constraints', []) if c['name'] == con), None)
        now = self.constraint_def(schema, table, con)
        if not (now and want and now.endswith(' NOT ENFORCED') and not want.endswith(' NOT ENFORCED')):
            self.run(alter + 'VALIDATE CONSTRAINT ' + ident(con))
        elif want.startswith('FOREIGN KEY'):
            self.run(alter + 'ALTER CONSTRAINT %s ENFORCED' % ident(con))
        else:
            if not self.constraint_only_inherited(schema, table, con):
                self.run(alter + 'DROP CONSTRAINT ' + ident(con))
            self.run(alter + 'ADD CONSTRAINT %s %s' % (ident(con), want))

    def not_null_constraints(self, rel):
        """The copy's NOT NULL constraints of a relation (18 on: none
        before), by column: (name, whether the relation has it of its
        own only, not inherited)."""
        self.cur.execute(
            'SELECT a.attname::text, c.conname::text, c.coninhcount OPERATOR(pg_catalog.=) 0'
            ' FROM pg_catalog.pg_constraint c JOIN pg_catalog.pg_attribute a'
            ' ON a.attrelid OPERATOR(pg_catalog.=) c.conrelid'
            ' AND a.attnum OPERATOR(pg_catalog.=) c.conkey[1]'
            ' WHERE c.conrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND c.contype OPERATOR(pg_catalog.=) \'n\'', (rel,))
        return {r[0]: (r[1], r[2]) for r in self.cur.fetchall()}

    def partition_column_options(self, after):
        """For a partition about to be made, by column: what PARTITION OF
        must say of its own, where the image differs from what the copy's
        parent would give it (PARTITION OF t (c WITH OPTIONS ...)): a
        generation expression of its own, and (18 on) a NOT NULL
        constraint's name other than the parent's (a partition takes its
        parent's names, unless its statement named its own)."""
        parent = after['partition_of']
        prel = qname(parent['schema'], parent['name'])
        names = self.not_null_constraints(prel) if self.server_version >= 180000 else None
        self.cur.execute(
            'SELECT a.attname::text, pg_catalog.pg_get_expr(d.adbin, d.adrelid)'
            ' FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_attrdef d'
            ' ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum'
            ' WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND a.attgenerated OPERATOR(pg_catalog.<>) \'\'', (prel,))
        generated = dict(self.cur.fetchall())
        out = {}
        for c in after.get('columns', []):
            opts = []
            if c.get('generated') and c['name'] in generated and generated[c['name']] != c['generated']:
                opts.append('GENERATED ALWAYS AS (%s) %s' % (c['generated'], 'VIRTUAL' if c.get('virtual') else 'STORED'))
            if c.get('not_null') and names is not None:
                want = c.get('not_null_name') or default_not_null_name(after['name'], c['name'])
                if names.get(c['name'], (None,))[0] != want:
                    opts.append('CONSTRAINT %s NOT NULL' % ident(want))
            if opts:
                out[c['name']] = ' '.join(opts)
        return out

    def inherited_not_null_names(self, after):
        """For an INHERITS child about to be made (18 on): the NOT NULL
        constraints of the columns it only inherits whose name in the image
        is not the one its parents' would give it on the copy (the first
        parent's that has one), by column; CREATE TABLE names them
        (CONSTRAINT n NOT NULL c), as the source's statement did."""
        if self.server_version < 180000 or not after.get('inherits'):
            return {}
        have = {}
        for p in reversed(after['inherits']):
            have.update(self.not_null_constraints(qname(p['schema'], p['name'])))
        out = {}
        for c in after.get('columns', []):
            if c.get('inherited') and c.get('not_null'):
                want = c.get('not_null_name') or default_not_null_name(after['name'], c['name'])
                if have.get(c['name'], (None,))[0] != want:
                    out[c['name']] = want
        return out

    def sync_not_null_names(self, after):
        """Give each NOT NULL constraint of the relation (18 on) the name
        "after" says (its column's "not_null_name", else PostgreSQL's
        default name), where the copy named it otherwise: SET NOT NULL or
        a LIKE name theirs as PostgreSQL does, not as the source's
        statement did.  A constraint the copy's table inherits cannot be
        renamed there: left as it is, for the verification to show."""
        if after is None or not after.get('columns') or after.get('kind') not in KIND_SQL:
            return
        rel = qname(after['schema'], after['name'])
        have = self.not_null_constraints(rel)
        for c in after['columns']:
            if not c.get('not_null') or c['name'] not in have:
                continue
            want = c.get('not_null_name') or default_not_null_name(after['name'], c['name'])
            now, own = have[c['name']]
            if now != want and own:
                self.run('ALTER %s %s RENAME CONSTRAINT %s TO %s' % (
                    KIND_SQL[after['kind']], rel, ident(now), ident(want)))

    def retype_again(self, rel, after, changes, subcommands):
        """ALTER COLUMN TYPE to the type the column has changes nothing an
        image of the table shows, but PostgreSQL 18 makes the NOT NULL
        constraints of its partitions and children again under the
        table's names: run it here too, for each such subcommand."""
        retyped = {ch.get('column') for ch in changes if ch['op'] in ('alter column type', 'set collation')}
        for sc in subcommands or []:
            col = after_column(after, sc.get('name'))
            if sc.get('kind') != 'ALTER COLUMN TYPE' or col is None or col['name'] in retyped:
                continue
            self.run('ALTER TABLE %s ALTER COLUMN %s TYPE %s%s' % (
                rel, ident(col['name']), col['type'],
                ' COLLATE ' + col['collation'] if col.get('collation') else ''))

    def column_state(self, schema, table, column, what):
        """A column's NOT NULL (what 'not_null') or default or generated
        expression (what 'default', None for none) on the copy, as
        read_image reads it."""
        self.cur.execute(
            'SELECT a.attnotnull, pg_catalog.pg_get_expr(d.adbin, d.adrelid)'
            ' FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d'
            ' ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum'
            ' WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND a.attname OPERATOR(pg_catalog.=) %s AND NOT a.attisdropped',
            (qname(schema, table), column))
        row = self.cur.fetchone()
        if row is None:
            return None
        return row[0] if what == 'not_null' else row[1]

    def column_exists(self, schema, table, column):
        return self.exists(
            'SELECT EXISTS (SELECT FROM pg_catalog.pg_attribute'
            ' WHERE attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND attname OPERATOR(pg_catalog.=) %s AND NOT attisdropped)',
            (qname(schema, table), column))

    def apply_sequence(self, ev, before, after, changes):
        """A sequence's event, from its "after" image: the renames of its
        changes first, then CREATE SEQUENCE if the copy has none of that
        name, else ALTER SEQUENCE to every parameter of "after" (an
        identity's sequence altered through ALTER TABLE comes without
        "before"), and OWNED BY.  Two cases wait: the sequence of an
        identity column not made yet (False: the table's CREATE or ALTER
        in the same statement makes it; check_left_out then sets its
        parameters), and the OWNED BY of a serial column whose table the
        statement creates after the sequence (its ALTER SEQUENCE event
        follows)."""
        self.counts['sequence'] = self.counts.get('sequence', 0) + 1
        schema, name = (before or after)['schema'], (before or after)['name']
        for ch in changes or []:
            if ch['op'] == 'rename':
                self.run('ALTER SEQUENCE %s RENAME TO %s' % (qname(schema, name), ident(ch['new'])))
                name = ch['new']
            elif ch['op'] == 'set schema':
                self.run('ALTER SEQUENCE %s SET SCHEMA %s' % (qname(schema, name), ident(ch['new'])))
                schema = ch['new']
        rel = qname(after['schema'], after['name'])
        owner = after.get('owned_by')
        owner_there = owner is not None and self.column_exists(owner['schema'], owner['name'], owner['column'])
        if not self.relation_exists(after['schema'], after['name']):
            if owner is not None and owner.get('identity'):
                return False
            self.run('CREATE %sSEQUENCE %s %s' % ('UNLOGGED ' if after.get('unlogged') else '',
                                                  rel, sequence_options_sql(after)))
            # (a serial column's too: OWNED BY needs the table's owner)
            self.own(ev, 'SEQUENCE', rel)
        else:
            self.run('ALTER SEQUENCE %s %s%s' % (rel, sequence_options_sql(after), self.restart_sql(rel, after)))
            if any(ch['op'] in ('set logged', 'set unlogged') for ch in changes or []):
                self.run('ALTER SEQUENCE %s SET %s' % (rel, 'UNLOGGED' if after.get('unlogged') else 'LOGGED'))
        if owner is None or (owner_there and not owner.get('identity')):
            # an identity's sequence is the column's: it takes no OWNED BY
            if not self.sequence_identity(after['schema'], after['name']):
                self.run('ALTER SEQUENCE %s OWNED BY %s' % (rel, owner_sql(owner)))
        return True

    def restart_sql(self, rel, image):
        """' RESTART' when the copy's current value is outside the new
        bounds (the source's moved as its rows used it; the copy's is still
        where it started, and ALTER SEQUENCE would refuse): the current
        value is data, not shape."""
        self.cur.execute('SELECT last_value FROM ' + rel)
        last = self.cur.fetchone()[0]
        return '' if image['min'] <= last <= image['max'] else ' RESTART'

    def sequence_identity(self, schema, name):
        """Is that sequence on the copy an identity column's?"""
        return self.exists(
            'SELECT EXISTS (SELECT FROM pg_catalog.pg_depend'
            ' WHERE classid OPERATOR(pg_catalog.=) \'pg_catalog.pg_class\'::pg_catalog.regclass'
            ' AND objid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)'
            ' AND deptype OPERATOR(pg_catalog.=) \'i\')', (qname(schema, name),))

    def apply_type(self, ev, after):
        """A domain's or an enum's event, from its "after" image: CREATE
        DOMAIN / CREATE TYPE ... AS ENUM when the statement made it, else
        the copy's type brought to "after" (a domain's default, NOT NULL,
        constraints; an enum's labels added where they stand, or one
        renamed).  A type the copy does not have at an ALTER (renamed, moved
        to another schema: the image says only where it is now) is not
        understood."""
        kind = after['kind']
        self.counts[kind] = self.counts.get(kind, 0) + 1
        rel = qname(after['schema'], after['name'])
        have = read_type(self.cur, after['schema'], after['name'])
        if have is None:
            if not (ev.get('command_tag') or '').startswith('CREATE'):
                # renamed or moved (the image says only where it is now):
                # the statement's text, when it has it exactly
                raise CannotApply('%s %s is not in the copy (renamed or moved? the image says only '
                                  'where it is now)' % (kind, rel), ev)
            if kind == 'enum':
                self.run('CREATE TYPE %s AS ENUM (%s)' % (rel, ', '.join(literal(l) for l in after['labels'])))
                self.own(ev, 'TYPE', rel)
                return
            self.run('CREATE DOMAIN %s AS %s%s%s%s%s' % (
                rel, after['type'], ' COLLATE ' + after['collation'] if after.get('collation') else '',
                ' DEFAULT ' + after['default'] if after.get('default') is not None else '',
                ' CONSTRAINT ' + ident(after['not_null_name']) if after.get('not_null_name') else '',
                ' NOT NULL' if after.get('not_null') else ''))
            self.own(ev, 'DOMAIN', rel)
            have = {'constraints': [], 'default': after.get('default'), 'not_null': after.get('not_null'),
                    'not_null_name': after.get('not_null_name'),
                    'type': after['type'], 'collation': after.get('collation')}
        if kind == 'enum':
            self.sync_enum(rel, have['labels'], after['labels'])
            return
        if (have['type'], have.get('collation')) != (after['type'], after.get('collation')):
            raise NotUnderstood('domain %s: its type or collation differs on the copy' % rel)
        alter = 'ALTER DOMAIN %s ' % rel
        if have.get('default') != after.get('default'):
            self.run(alter + ('DROP DEFAULT' if after.get('default') is None else 'SET DEFAULT ' + after['default']))
        if bool(have.get('not_null')) != bool(after.get('not_null')):
            self.run(alter + ('SET NOT NULL' if after.get('not_null') else 'DROP NOT NULL'))
            have['not_null_name'] = None    # SET NOT NULL names it as PostgreSQL does
        if after.get('not_null'):
            # its NOT NULL constraint's name (17 on), the default one unless the image says
            now = have.get('not_null_name') or default_not_null_name(after['name'], None)
            want_name = after.get('not_null_name') or default_not_null_name(after['name'], None)
            if now != want_name:
                self.run(alter + 'RENAME CONSTRAINT %s TO %s' % (ident(now), ident(want_name)))
        want, got = by_name(after.get('constraints')), by_name(have.get('constraints'))
        for n in sorted(got):
            if n not in want:
                self.run(alter + 'DROP CONSTRAINT IF EXISTS ' + ident(n))
            elif got[n]['definition'] == want[n]['definition'] + ' NOT VALID':
                self.run(alter + 'VALIDATE CONSTRAINT ' + ident(n))
            elif got[n]['definition'] != want[n]['definition']:
                self.run(alter + 'DROP CONSTRAINT ' + ident(n))
                del got[n]
        for n in sorted(want):
            if n not in got:
                self.run(alter + 'ADD CONSTRAINT %s %s' % (ident(n), want[n]['definition']))

    def sync_enum(self, rel, have, want):
        """ALTER TYPE ... ADD VALUE each label "want" has and "have" has
        not, next to a neighbour the copy has; or one RENAME VALUE."""
        if have == want:
            return
        if len(have) == len(want):
            diff = [i for i in range(len(want)) if have[i] != want[i]]
            if len(diff) == 1:
                self.run('ALTER TYPE %s RENAME VALUE %s TO %s' % (rel, literal(have[diff[0]]), literal(want[diff[0]])))
                return
        if [l for l in want if l in have] != have:
            raise NotUnderstood('enum %s: its labels on the copy (%s) are not a part of the source\'s (%s)'
                                % (rel, ', '.join(have), ', '.join(want)))
        now = list(have)
        for i, label in enumerate(want):
            if label in now:
                continue
            after_label = next((l for l in reversed(want[:i]) if l in now), None)
            if after_label is not None:
                self.run('ALTER TYPE %s ADD VALUE %s AFTER %s' % (rel, literal(label), literal(after_label)))
                now.insert(now.index(after_label) + 1, label)
            else:
                before_label = now[0] if now else None
                self.run('ALTER TYPE %s ADD VALUE %s%s' % (
                    rel, literal(label), ' BEFORE ' + literal(before_label) if before_label else ''))
                now.insert(0, label)

    def apply_event(self, ev):
        """Apply one event (a decoded message) to the target: True when it
        was applied (or needs nothing), False when nothing here applies
        that kind of event (the main loop then stops, unless the event's
        object is part of what the transaction applied: check_left_out).
        Raises NotUnderstood for an event of a kind it knows but cannot
        apply.  The main loop checked the format version."""
        trig = ev['trigger_event']
        otype = ev.get('object_type')
        details = ev.get('details') or {}
        before, after = details.get('before'), details.get('after')
        changes = details.get('changes')
        if trig == 'sql_drop':
            return self.apply_drop(otype, details)
        if trig != 'ddl_command_end':
            return True         # table_rewrite: the shape comes at ddl_command_end
        if otype == 'schema' and ev['command_tag'] == 'CREATE SCHEMA':
            self.run('CREATE SCHEMA IF NOT EXISTS ' + ev['object_identity'])
        elif otype == 'sequence' and after is not None:
            return self.apply_sequence(ev, before, after, changes)
        elif after is not None and after.get('kind') in ('domain', 'enum'):
            self.apply_type(ev, after)
        elif changes is not None and before is not None:
            self.apply_changes(before, after, changes, details.get('subcommands'))
            self.sync_not_null_names(after)
        elif after is not None and before is None and (otype in KIND_SQL or after.get('kind') == 'composite type'):
            self.apply_create(ev, after)
        else:
            return False        # nothing here applies it: the main loop decides
        return True

    def apply_drop(self, otype, details):
        """apply_event of a sql_drop event: the DROP of the object it
        names, or False when it goes with the object that owns it."""
        key = 'drop ' + (otype or '?')
        self.counts[key] = self.counts.get(key, 0) + 1
        names = details.get('address_names') or []
        if otype == 'schema':
            self.run('DROP SCHEMA IF EXISTS %s CASCADE' % ident(names[0]))
        elif otype == 'index' and len(names) == 2:
            if self.index_droppable(*names):
                self.run('DROP INDEX %s CASCADE' % qname(*names))
        elif otype == 'type' and len(names) == 1 and details.get('original'):
            # a domain, an enum, a composite type the statement named
            self.run('DROP TYPE IF EXISTS %s CASCADE' % names[0])
        elif otype == 'composite type' and len(names) == 2:
            # the relation of a composite type, beside the type's own drop
            if self.relation_exists(*names):
                self.run('DROP TYPE %s CASCADE' % qname(*names))
        elif otype == 'sequence' and len(names) == 2:
            # the sequence the statement named; one that went with its
            # table or column (an identity's cannot be dropped alone)
            # is checked gone with the rest (check_left_out)
            if not details.get('original'):
                return False
            self.run('DROP SEQUENCE IF EXISTS %s CASCADE' % qname(*names))
        elif otype in DROPS and len(names) == 2:
            self.run('DROP %s IF EXISTS %s CASCADE' % (DROPS[otype], qname(*names)))
        elif otype == 'table constraint' and len(names) == 3:
            droppable = self.constraint_droppable(names[0], names[1], names[2])
            if droppable is None:
                return False
            if droppable:
                self.run('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s CASCADE'
                         % (qname(names[0], names[1]), ident(names[2])))
        elif otype == 'table column' and len(names) == 3:
            if self.relation_exists(names[0], names[1]):
                self.run('ALTER TABLE %s DROP COLUMN IF EXISTS %s CASCADE'
                         % (qname(names[0], names[1]), ident(names[2])))
        else:
            # anything else (a table's row type, an identity's
            # sequence, a default) should go with the object that owns
            # it: the main loop checks that it is gone from the copy
            # once its statement's events are applied (check_left_out)
            return False
        return True

    def apply_create(self, ev, after):
        """apply_event of the CREATE of a relation or composite type: the
        statements create_sql makes of its "after" image, then its NOT
        NULL constraints' names and owner."""
        key = 'create ' + ('partition' if after.get('partition_of') else after['kind'])
        self.counts[key] = self.counts.get(key, 0) + 1
        options = (self.partition_column_options(after) if after.get('partition_of')
                   else self.inherited_not_null_names(after))
        for stmt in create_sql(after, options):
            if isinstance(stmt, IfMissing):
                there = (self.constraint_exists(stmt.schema, stmt.table, stmt.name)
                         if stmt.what == 'constraint'
                         else self.relation_exists(stmt.schema, stmt.name))
                if not there:
                    self.run(stmt.sql)
            elif isinstance(stmt, IfColumnDiffers):
                if self.column_state(stmt.schema, stmt.table, stmt.column, stmt.what) != stmt.want:
                    self.run(stmt.sql)
            else:
                self.run(stmt)
        self.sync_not_null_names(after)
        self.own(ev, KIND_SQL[after['kind']], qname(after['schema'], after['name']))


# --- verifying the copy --------------------------------------------------------
#
# After each event it applied, the consumer reads the relation's image on
# the copy with the same catalog reading as ddl_notify's capture
# (src/relimage.c: format_type, pg_get_expr, pg_get_constraintdef,
# pg_get_indexdef, pg_get_viewdef, pg_get_partkeydef, with search_path
# pg_catalog) and compares it with the event's "after" image, key by key.
# Reading it here in SQL, rather than installing ddl_notify on the copy
# and comparing the images it records, keeps the copy free of the
# extension (any PostgreSQL will do) and verifies also an event whose
# apply ran no statement at all (a constraint already redefined by the
# other changes).  What is left out: "attnum" (the copy numbers its
# columns afresh: the order of the columns is compared instead).  A key
# of an "after" image that this reader does not know (a newer capture)
# stops the consumer: a key it cannot compare would be a silent
# divergence.  When the capture grows a key, read it here too (IMAGE_KEYS).

IMAGE_KEYS = {'kind', 'name', 'schema', 'columns', 'indexes', 'constraints',
              'replica_identity', 'replica_identity_index', 'definition',
              'partition_key', 'partition_of', 'partition_bound', 'server', 'options',
              'unlogged', 'reloptions', 'inherits', 'of_type',
              'type', 'start', 'increment', 'min', 'max', 'cache', 'cycle', 'owned_by',
              'labels', 'default', 'collation', 'not_null', 'not_null_name'}

RELKIND_NAME = {'r': 'table', 'p': 'partitioned table', 'v': 'view',
                'm': 'materialized view', 'f': 'foreign table', 'S': 'sequence',
                'c': 'composite type'}

CONTYPE_NAME = {'p': 'primary key', 'u': 'unique', 'c': 'check',
                'f': 'foreign key', 'x': 'exclusion'}

IDENTITY_NAME = {'a': 'always', 'd': 'by default'}

REPLIDENT_NAME = {'n': 'nothing', 'f': 'full', 'i': 'index'}

STORAGE_NAME = {'p': 'plain', 'e': 'external', 'x': 'extended', 'm': 'main'}

COMPRESSION_NAME = {'p': 'pglz', 'l': 'lz4'}


def read_image(cur, schema, name):
    """The image of relation schema.name on the copy, as the capture would
    write it (without attnum), or None when there is no such relation of a
    kind that has images.  The connection's search_path is pg_catalog."""
    cur.execute(
        'SELECT c.oid, c.relkind::text, c.relreplident::text, c.relispartition,'
        ' CASE WHEN c.relkind IN (\'v\', \'m\') THEN pg_get_viewdef(c.oid) END,'
        ' CASE WHEN c.relkind OPERATOR(pg_catalog.=) \'p\' THEN pg_get_partkeydef(c.oid) END,'
        ' CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid) END,'
        ' c.relpersistence OPERATOR(pg_catalog.=) \'u\', c.reloptions::text[]'
        ' FROM pg_class c JOIN pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace'
        ' WHERE n.nspname OPERATOR(pg_catalog.=) %s AND c.relname OPERATOR(pg_catalog.=) %s',
        (schema, name))
    row = cur.fetchone()
    if row is None or row[1] not in RELKIND_NAME:
        return None
    oid, relkind, replident, ispartition, viewdef, partkey, bound, unlogged, reloptions = row
    img = {'kind': RELKIND_NAME[relkind], 'name': name, 'schema': schema}
    if unlogged:
        img['unlogged'] = True
    if relkind == 'S':
        return read_sequence(cur, oid, img)
    if reloptions:
        img['reloptions'] = list(reloptions)
    img['columns'] = read_columns(cur, oid, name, ispartition)
    read_keys(cur, oid, replident, ispartition, img)
    if viewdef is not None:
        img['definition'] = viewdef
    if partkey is not None:
        img['partition_key'] = partkey
    read_parents(cur, oid, relkind, ispartition, bound, img)
    if relkind == 'f':
        cur.execute(
            'SELECT s.srvname::text, coalesce(f.ftoptions, \'{}\')::text[] FROM pg_foreign_table f'
            ' JOIN pg_foreign_server s ON s.oid OPERATOR(pg_catalog.=) f.ftserver'
            ' WHERE f.ftrelid OPERATOR(pg_catalog.=) %s', (oid,))
        srv = cur.fetchone()
        if srv is not None:
            img['server'], img['options'] = srv[0], list(srv[1])
    return img


def read_columns(cur, oid, name, ispartition):
    """read_image's columns of relation "oid" (named "name", a partition
    or not)."""
    cur.execute(
        'SELECT a.attname::text, format_type(a.atttypid, a.atttypmod),'
        ' pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attnotnull,'
        ' CASE WHEN a.attcollation OPERATOR(pg_catalog.<>) 0'
        '  AND a.attcollation OPERATOR(pg_catalog.<>) t.typcollation THEN'
        '  CASE WHEN l.collnamespace OPERATOR(pg_catalog.=) \'pg_catalog\'::regnamespace'
        '  THEN quote_ident(l.collname)'
        '  ELSE quote_ident(ln.nspname) OPERATOR(pg_catalog.||) \'.\' OPERATOR(pg_catalog.||) quote_ident(l.collname) END'
        ' END, a.attgenerated::text, a.attislocal,'
        # STORAGE when not the type's, COMPRESSION when set, the statistics
        # target when set (-1 up to 16, NULL from 17 on: the default)
        ' CASE WHEN a.attstorage OPERATOR(pg_catalog.<>) t.typstorage THEN a.attstorage::text END,'
        ' NULLIF(a.attcompression::text, \'\'),'
        ' CASE WHEN a.attstattarget OPERATOR(pg_catalog.>=) 0 THEN a.attstattarget::int END,'
        # its NOT NULL constraint's name, NO INHERIT and NOT VALID (18 on)
        ' (SELECT ARRAY[conname::text, connoinherit::text, (NOT convalidated)::text] FROM pg_constraint'
        '  WHERE conrelid OPERATOR(pg_catalog.=) a.attrelid'
        '  AND contype OPERATOR(pg_catalog.=) \'n\' AND conkey[1] OPERATOR(pg_catalog.=) a.attnum)'
        ' FROM pg_attribute a JOIN pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid'
        ' LEFT JOIN pg_attrdef d ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid'
        '  AND d.adnum OPERATOR(pg_catalog.=) a.attnum'
        ' LEFT JOIN pg_collation l ON l.oid OPERATOR(pg_catalog.=) a.attcollation'
        ' LEFT JOIN pg_namespace ln ON ln.oid OPERATOR(pg_catalog.=) l.collnamespace'
        ' WHERE a.attrelid OPERATOR(pg_catalog.=) %s AND a.attnum OPERATOR(pg_catalog.>) 0'
        ' AND NOT a.attisdropped ORDER BY a.attnum', (oid,))
    rows = cur.fetchall()
    cols = [
        {'name': n, 'type': t, 'default': None if g else d,
         'identity': IDENTITY_NAME.get(i), 'not_null': nn, 'collation': coll,
         'generated': d if g else None}
        for n, t, d, i, nn, coll, g, *_ in rows]
    for c, row in zip(cols, rows):
        storage, compression, statistics, nn = row[8:12]
        if nn is not None and nn[0] != default_not_null_name(name, c['name']):
            c['not_null_name'] = nn[0]
        if nn is not None and nn[1] == 'true':
            c['not_null_no_inherit'] = True
        if nn is not None and nn[2] == 'true':
            c['not_null_not_valid'] = True
        if storage:
            c['storage'] = STORAGE_NAME[storage]
        if compression:
            c['compression'] = COMPRESSION_NAME[compression]
        if statistics is not None:
            c['statistics'] = statistics
    # a column or constraint an INHERITS child only inherits (a partition's
    # are all its parent's, and not flagged)
    for c, row in zip(cols, rows):
        if not row[7] and not ispartition:
            c['inherited'] = True
        if row[6] == 'v':
            c['virtual'] = True     # a VIRTUAL generated column (18 on)
    return cols


def read_keys(cur, oid, replident, ispartition, img):
    """read_image's constraints, indexes and replica identity (the
    relation's relreplident) of relation "oid", into "img"."""
    cur.execute(
        'SELECT conname::text, contype::text, pg_get_constraintdef(oid), conindid, conislocal'
        ' FROM pg_constraint WHERE conrelid OPERATOR(pg_catalog.=) %s'
        # a foreign key's clones are PostgreSQL's (as the capture leaves them out)
        ' AND NOT (contype OPERATOR(pg_catalog.=) \'f\' AND conparentid OPERATOR(pg_catalog.<>) 0)', (oid,))
    cons = [r for r in cur.fetchall() if r[1] in CONTYPE_NAME]
    img['constraints'] = [dict({'name': n, 'type': CONTYPE_NAME[t], 'definition': d},
                               **({} if local or ispartition else {'inherited': True}))
                          for n, t, d, _, local in cons]
    by_index = {i: n for n, t, _, i, _ in cons if t != 'f'}
    cur.execute(
        'SELECT i.indexrelid, c.relname::text, pg_get_indexdef(i.indexrelid), i.indisreplident,'
        ' c.relkind OPERATOR(pg_catalog.=) \'I\' AND i.indisvalid, i.indisclustered'
        ' FROM pg_index i JOIN pg_class c ON c.oid OPERATOR(pg_catalog.=) i.indexrelid'
        ' WHERE i.indrelid OPERATOR(pg_catalog.=) %s AND i.indislive', (oid,))
    img['indexes'] = []
    img['replica_identity'] = REPLIDENT_NAME.get(replident, 'default')
    img['replica_identity_index'] = None
    for ioid, iname, idef, isreplident, recursive, clustered in cur.fetchall():
        if recursive:
            # "ON ONLY" only while a partitioned index is not valid (as the capture prints it)
            prefix = re.match(r'CREATE (UNIQUE )?INDEX ', idef).group(0) + quote_ident(cur, iname)
            if idef.startswith(prefix + ' ON ONLY '):
                idef = prefix + ' ON ' + idef[len(prefix + ' ON ONLY '):]
        img['indexes'].append(dict({'name': iname, 'constraint': by_index.get(ioid), 'definition': idef},
                                   **({'clustered': True} if clustered else {})))
        if replident == 'i' and isreplident:
            img['replica_identity_index'] = iname


def read_parents(cur, oid, relkind, ispartition, bound, img):
    """read_image's parent and bound of a partition, or INHERITS parents
    and type of a table, into "img"."""
    if ispartition and bound is not None:
        cur.execute(
            'SELECT n.nspname::text, p.relname::text FROM pg_inherits i'
            ' JOIN pg_class p ON p.oid OPERATOR(pg_catalog.=) i.inhparent'
            ' JOIN pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.relnamespace'
            ' WHERE i.inhrelid OPERATOR(pg_catalog.=) %s', (oid,))
        parent = cur.fetchone()
        if parent is not None:
            img['partition_of'] = {'schema': parent[0], 'name': parent[1]}
            img['partition_bound'] = bound
    elif not ispartition and relkind in ('r', 'p', 'f'):
        # INHERITS parents in their order, a typed table's type (as the capture reads them)
        cur.execute(
            'SELECT n.nspname::text, p.relname::text FROM pg_inherits i'
            ' JOIN pg_class p ON p.oid OPERATOR(pg_catalog.=) i.inhparent'
            ' JOIN pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.relnamespace'
            ' WHERE i.inhrelid OPERATOR(pg_catalog.=) %s ORDER BY i.inhseqno', (oid,))
        parents = [{'schema': r[0], 'name': r[1]} for r in cur.fetchall()]
        if parents:
            img['inherits'] = parents
        cur.execute(
            'SELECT n.nspname::text, t.typname::text FROM pg_class c'
            ' JOIN pg_type t ON t.oid OPERATOR(pg_catalog.=) c.reloftype'
            ' JOIN pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace'
            ' WHERE c.oid OPERATOR(pg_catalog.=) %s', (oid,))
        oftype = cur.fetchone()
        if oftype is not None:
            img['of_type'] = {'schema': oftype[0], 'name': oftype[1]}


def read_type(cur, schema, name):
    """The image of a domain or an enum on the copy, as the capture writes
    it, or None when there is no such domain or enum."""
    cur.execute(
        'SELECT t.oid, t.typtype::text, format_type(t.typbasetype, t.typtypmod),'
        ' CASE WHEN t.typcollation OPERATOR(pg_catalog.<>) 0'
        '  AND t.typcollation OPERATOR(pg_catalog.<>) b.typcollation THEN'
        '  CASE WHEN l.collnamespace OPERATOR(pg_catalog.=) \'pg_catalog\'::regnamespace'
        '  THEN quote_ident(l.collname)'
        '  ELSE quote_ident(ln.nspname) OPERATOR(pg_catalog.||) \'.\' OPERATOR(pg_catalog.||) quote_ident(l.collname) END'
        ' END, pg_get_expr(t.typdefaultbin, 0), t.typnotnull'
        ' FROM pg_type t JOIN pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace'
        ' LEFT JOIN pg_type b ON b.oid OPERATOR(pg_catalog.=) t.typbasetype'
        ' LEFT JOIN pg_collation l ON l.oid OPERATOR(pg_catalog.=) t.typcollation'
        ' LEFT JOIN pg_namespace ln ON ln.oid OPERATOR(pg_catalog.=) l.collnamespace'
        ' WHERE n.nspname OPERATOR(pg_catalog.=) %s AND t.typname OPERATOR(pg_catalog.=) %s'
        ' AND t.typtype IN (\'d\', \'e\')', (schema, name))
    row = cur.fetchone()
    if row is None:
        return None
    oid, typtype, base, coll, default, notnull = row
    if typtype == 'e':
        cur.execute('SELECT enumlabel::text FROM pg_enum WHERE enumtypid OPERATOR(pg_catalog.=) %s'
                    ' ORDER BY enumsortorder', (oid,))
        return {'kind': 'enum', 'name': name, 'schema': schema, 'labels': [r[0] for r in cur.fetchall()]}
    cur.execute('SELECT conname::text FROM pg_constraint WHERE contypid OPERATOR(pg_catalog.=) %s'
                ' AND contype OPERATOR(pg_catalog.=) \'n\'', (oid,))
    nn = cur.fetchone()     # its NOT NULL constraint (17 on)
    cur.execute('SELECT conname::text, pg_get_constraintdef(oid) FROM pg_constraint'
                ' WHERE contypid OPERATOR(pg_catalog.=) %s AND contype OPERATOR(pg_catalog.=) \'c\''
                ' ORDER BY conname', (oid,))
    img = {'kind': 'domain', 'name': name, 'schema': schema, 'type': base, 'collation': coll,
           'default': default, 'not_null': notnull,
           'constraints': [{'name': n, 'type': 'check', 'definition': d} for n, d in cur.fetchall()]}
    if nn is not None and nn[0] != default_not_null_name(name, None):
        img['not_null_name'] = nn[0]
    return img


def read_sequence(cur, oid, img):
    """A sequence's image: its parameters and the column that owns it."""
    cur.execute(
        'SELECT format_type(seqtypid, NULL), seqstart, seqincrement, seqmin, seqmax, seqcache,'
        ' seqcycle FROM pg_sequence WHERE seqrelid OPERATOR(pg_catalog.=) %s', (oid,))
    row = cur.fetchone()
    if row is not None:
        for k, v in zip(('type', 'start', 'increment', 'min', 'max', 'cache', 'cycle'), row):
            img[k] = v
    cur.execute(
        'SELECT n.nspname::text, c.relname::text, a.attname::text,'
        ' d.deptype OPERATOR(pg_catalog.=) \'i\''
        ' FROM pg_depend d JOIN pg_class c ON c.oid OPERATOR(pg_catalog.=) d.refobjid'
        ' JOIN pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace'
        ' JOIN pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid'
        '  AND a.attnum OPERATOR(pg_catalog.=) d.refobjsubid'
        ' WHERE d.classid OPERATOR(pg_catalog.=) \'pg_class\'::regclass'
        ' AND d.objid OPERATOR(pg_catalog.=) %s'
        ' AND d.refclassid OPERATOR(pg_catalog.=) \'pg_class\'::regclass'
        ' AND d.refobjsubid OPERATOR(pg_catalog.<>) 0 AND d.deptype IN (\'a\', \'i\')'
        ' ORDER BY d.deptype LIMIT 1', (oid,))
    owner = cur.fetchone()
    img['owned_by'] = None if owner is None else {
        'schema': owner[0], 'name': owner[1], 'column': owner[2], 'identity': owner[3]}
    return img


def quote_ident(cur, name):
    """The server's quote_ident(), as pg_get_indexdef quotes a name."""
    cur.execute('SELECT quote_ident(%s)', (name,))
    return cur.fetchone()[0]


def by_name(parts):
    """Constraints or indexes keyed by name (the capture sorts them by name)."""
    return {p['name']: p for p in parts or []}


def image_differences(want, have):
    """What differs between the event's "after" image (want) and the
    copy's (have), as lines for the stop message; [] when they match."""
    if have is None:
        return ['the copy has no %s %s.%s' % (want.get('kind'), want.get('schema'), want.get('name'))]
    out = []
    unknown = sorted(set(want) - IMAGE_KEYS)
    if unknown:
        out.append('the image has keys this consumer cannot verify: %s (teach read_image '
                   'to read them)' % ', '.join(unknown))
    for key in sorted(IMAGE_KEYS):
        a, b = want.get(key), have.get(key)
        if key == 'columns':
            a = [{k: v for k, v in c.items() if k != 'attnum'} for c in a or []]
            b = b or []
            if a != b:
                names_a, names_b = [c['name'] for c in a], [c['name'] for c in b]
                if names_a != names_b:
                    out.append('columns: source (%s), copy (%s)' % (', '.join(names_a), ', '.join(names_b)))
                ca, cb = {c['name']: c for c in a}, {c['name']: c for c in b}
                for n in names_a:
                    if n in cb and ca[n] != cb[n]:
                        for k in sorted(set(ca[n]) | set(cb[n])):
                            if ca[n].get(k) != cb[n].get(k):
                                out.append('column %s: %s is %s in the source, %s in the copy'
                                           % (n, k, json.dumps(ca[n].get(k)), json.dumps(cb[n].get(k))))
        elif key in ('constraints', 'indexes'):
            what = 'constraint' if key == 'constraints' else 'index'
            pa, pb = by_name(a), by_name(b)
            for n in sorted(set(pa) | set(pb)):
                if n not in pb:
                    out.append('%s %s: missing in the copy (%s)' % (what, n, pa[n].get('definition')))
                elif n not in pa:
                    out.append('%s %s: only in the copy (%s)' % (what, n, pb[n].get('definition')))
                elif pa[n] != pb[n]:
                    out.append('%s %s: source %s, copy %s' % (what, n, json.dumps(pa[n]), json.dumps(pb[n])))
        elif a != b:
            out.append('%s: source %s, copy %s' % (key, json.dumps(a), json.dumps(b)))
    return out


def verify_event(cur, ev):
    """What differs on the copy from what the event says the source had
    after it, as lines ([] when nothing does, or when the event says
    nothing to compare): a relation's "after" image, or for the drop of a
    relation, that it is gone."""
    details = ev.get('details') or {}
    after = details.get('after')
    if ev['trigger_event'] == 'ddl_command_end' and after is not None:
        owner = after.get('owned_by')
        if after.get('kind') == 'sequence' and owner is not None:
            # a serial column's sequence is made before its table: its
            # OWNED BY is applied and verified at the ALTER SEQUENCE event
            # that follows in the same statement
            cur.execute('SELECT EXISTS (SELECT FROM pg_attribute WHERE attrelid OPERATOR(pg_catalog.=)'
                        ' to_regclass(%s) AND attname OPERATOR(pg_catalog.=) %s AND NOT attisdropped)',
                        (qname(owner['schema'], owner['name']), owner['column']))
            if not cur.fetchone()[0] and ev.get('command_tag') == 'CREATE SEQUENCE':
                after = dict(after, owned_by=None)
        if after.get('kind') in ('domain', 'enum'):
            return image_differences(after, read_type(cur, after['schema'], after['name']))
        return image_differences(after, read_image(cur, after['schema'], after['name']))
    if ev['trigger_event'] == 'sql_drop' and ev.get('object_type') in DROPS:
        names = details.get('address_names') or []
        if len(names) == 2 and read_image(cur, names[0], names[1]) is not None:
            return ['%s %s is still in the copy' % (ev['object_type'], qname(*names))]
    return []


def without_definitions(image):
    """The image without its printed expressions: a view's query, each
    constraint's and index's definition."""
    image = dict(image, definition=None)
    for key in ('constraints', 'indexes'):
        image[key] = [dict(p, definition=None) for p in image.get(key) or []]
    return image


def only_printing_differs(cur, ev):
    """Does the copy's relation differ from the event's "after" image in
    the printed definitions of its view query, constraints or indexes
    alone?"""
    after = (ev.get('details') or {}).get('after')
    if ev['trigger_event'] != 'ddl_command_end' or after is None or after.get('kind') in ('domain', 'enum', 'sequence'):
        return False
    have = read_image(cur, after['schema'], after['name'])
    return have is not None and not image_differences(without_definitions(after), without_definitions(have))


# --- the main loop: transactions, progress, stops --------------------------------

class Stop(Exception):
    """The consumer stops at an event: nothing of its transaction applied."""

    def __init__(self, reason, ev=None, sql=None, detail=None):
        super().__init__(reason)
        self.reason, self.ev, self.sql, self.detail = reason, ev, sql, detail
        self.end_lsn = None

    def message(self, slot):
        ev = self.ev or {}
        lines = ['ddl_replay.py: stopped at event %s (%s %s %s)' % (
            ev.get('id', '?'), ev.get('trigger_event'), ev.get('command_tag'),
            ev.get('object_identity') or ev.get('object_type') or '')]
        if self.end_lsn is not None:
            lines.append('  transaction: xid %s, ends at %s; nothing of it was applied'
                         % (ev.get('xid', '?'), lsn_text(self.end_lsn)))
        lines.append('  reason: ' + self.reason)
        for d in (self.detail or '').strip().splitlines():
            lines.append('    ' + d)
        if self.sql:
            lines.append('  statement applied: ' + self.sql)
        if ev.get('query'):
            lines.append('  source statement: ' + ' '.join(ev['query'].split())[:2000])
        if ev.get('id') is not None:
            lines.append('  to resume: make the copy what the source was after this event by hand')
            lines.append('    (or leave it out), then run again with --skip-event %s: the rest of' % ev['id'])
            lines.append('    the transaction is applied and verified, and the skip is recorded in')
            lines.append('    ddl_replay.skipped of the copy (docs/cdc.md, "when the consumer stops")')
        return '\n'.join(lines)


class CannotApply(Stop):
    """No apply function here takes the event: its statement is applied by
    its text instead, when the events carry it exactly (Replayer.apply_text)."""


def statement_key(ev):
    """The event's "statement" key (details.statement), or None (a capture
    older than 0.2.0)."""
    key = (ev.get('details') or {}).get('statement')
    return key if isinstance(key, dict) and 'id' in key else None


def statement_of(ev):
    """What tells the events of one statement from the next one's: its
    transaction and statement id; without a statement key, its transaction,
    start time and text."""
    key = statement_key(ev)
    if key is not None:
        return (ev.get('xid'), key['id'])
    return (ev.get('xid'), ev.get('occurred_at'), ev.get('query'))


def statements(events):
    """The events in runs of one statement each (a statement's events are
    consecutive: a top-level statement ends before the next begins)."""
    run = []
    for ev in events:
        if run and statement_of(ev) != statement_of(run[-1]):
            yield run
            run = []
        run.append(ev)
    if run:
        yield run


# command tags whose work no image shows: their statement is always applied
# by its text (a typed apply would verify nothing and diverge silently;
# CREATE SCHEMA: its AUTHORIZATION and its elements).  ALTER INDEX is not
# one: its RENAME, SET and RESET are typed, the rest goes by text (by_text)
TEXT_TAGS = {'GRANT', 'REVOKE', 'COMMENT', 'SECURITY LABEL', 'ALTER DEFAULT PRIVILEGES',
             'REFRESH MATERIALIZED VIEW', 'CREATE SCHEMA'}

# ALTER TABLE subcommands whose work no image shows (or shows only on
# another relation): their statement is applied by its text
TEXT_SUBCOMMANDS = {
    'ALTER COLUMN SET OPTIONS', 'ALTER COLUMN RESET OPTIONS', 'ALTER COLUMN OPTIONS', 'OPTIONS',
    'OWNER TO', 'SET ACCESS METHOD', 'SET TABLESPACE',
    'ENABLE TRIGGER', 'ENABLE ALWAYS TRIGGER', 'ENABLE REPLICA TRIGGER', 'DISABLE TRIGGER',
    'ENABLE TRIGGER ALL', 'DISABLE TRIGGER ALL', 'ENABLE TRIGGER USER', 'DISABLE TRIGGER USER',
    'ENABLE RULE', 'ENABLE ALWAYS RULE', 'ENABLE REPLICA RULE', 'DISABLE RULE',
    'ENABLE ROW LEVEL SECURITY', 'DISABLE ROW LEVEL SECURITY', 'FORCE ROW LEVEL SECURITY',
    'NO FORCE ROW LEVEL SECURITY'}

# ALTER TABLE's ATTACH / DETACH PARTITION are typed ("attach partition",
# "detach partition" in the partitioned table's changes), but DETACH ...
# CONCURRENTLY commits on its way and its event has no images: by its text
PARTITION_SUBCOMMANDS = {'ATTACH PARTITION', 'DETACH PARTITION', 'DETACH PARTITION FINALIZE'}

# ALTER INDEX: SET (...) and RESET (...) are typed ("set index reloptions"
# in its table's changes); its other subcommands (ALTER COLUMN SET
# STATISTICS of an index's column, ATTACH PARTITION, SET TABLESPACE ...)
# change nothing an image shows: by their text
INDEX_TYPED_SUBCOMMANDS = {'SET', 'RESET'}


# ALTER COLUMN ... TYPE ... USING an expression other than a cast of a column
# (the typed path casts the column: USING c::type): the expression is in no
# image, so the statement goes by its text
USING_CLAUSE = re.compile(r'\busing\b\s*', re.IGNORECASE)
COLUMN_CAST = re.compile(r'("(?:[^"]|"")+"|[A-Za-z_][\w$]*)\s*::')


def using_not_a_cast(query):
    """Does the statement say USING something else than column::type?"""
    return any(not COLUMN_CAST.match(query, m.end()) for m in USING_CLAUSE.finditer(query))

# REINDEX changes nothing a schema's dump shows, and of a schema, a
# database, the system or a partitioned table or index it cannot run in a
# transaction block: its events are verified (the indexes are there),
# nothing is run
REINDEX_STMT = re.compile(r'\s*reindex\b', re.IGNORECASE)


def by_text(ev):
    """Does an event's ALTER subcommand make its statement go by text?"""
    details = ev.get('details') or {}
    for sc in details.get('subcommands') or []:
        kind = sc.get('kind')
        if kind in TEXT_SUBCOMMANDS:
            return True
        if kind == 'ALTER COLUMN TYPE' and using_not_a_cast(ev.get('query') or ''):
            return True
        if kind in PARTITION_SUBCOMMANDS and details.get('changes') is None:
            return True
        if ev.get('command_tag') == 'ALTER INDEX' and kind not in INDEX_TYPED_SUBCOMMANDS:
            return True
    return False

# the toast.* storage parameters are in no image: a CREATE or ALTER TABLE
# that names them replayed from the image would leave the copy without
# them, and verification could not tell (a column's STORAGE, COMPRESSION
# and statistics target are in the images: "storage", "compression",
# "statistics");
# nor is ALTER TABLE ONLY (its event is the same as the one that recursed to
# the children: DROP COLUMN from the image would drop theirs too).  (A
# table's INHERITS parents and a typed table's type are in the images:
# "inherits", "of_type", and the changes "set inherits", "set of type".)
NOT_IMAGED = re.compile(r'\btoast\.|\bonly\b', re.IGNORECASE)

# the commands that may say CONCURRENTLY, which cannot run inside the copy's
# transaction: applied without it (the schema it leaves is the same)
CONCURRENT_TAGS = {'CREATE INDEX', 'DROP INDEX', 'REINDEX', 'REFRESH MATERIALIZED VIEW', 'ALTER TABLE'}


def without_concurrently(query, tag):
    """The statement without its CONCURRENTLY keyword, if it is one of
    CONCURRENT_TAGS: the first CONCURRENTLY outside quotes and comments
    (unquoted, it is no name there; in ALTER TABLE only DETACH PARTITION
    takes it).  Else the statement itself."""
    if tag not in CONCURRENT_TAGS:
        return query
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c in '\'"':
            i += 1
            while i < n:
                if query[i] == c:
                    if i + 1 < n and query[i + 1] == c:
                        i += 2
                        continue
                    break
                i += 1
            i += 1
        elif query.startswith('--', i):
            j = query.find('\n', i)
            i = n if j < 0 else j
        elif query.startswith('/*', i):
            depth, i = 1, i + 2
            while i < n and depth:
                if query.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif query.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif (query[i:i + 12].lower() == 'concurrently' and
              (i == 0 or not (query[i - 1].isalnum() or query[i - 1] in '_$')) and
              (i + 12 >= n or not (query[i + 12].isalnum() or query[i + 12] in '_$'))):
            if tag == 'ALTER TABLE' and not re.search(r'(?i)\bdetach\s+partition\b', query[:i]):
                return query
            head, tail = query[:i], query[i + 12:]
            # an option list, REINDEX (CONCURRENTLY [, ...]): the option goes
            # with its comma, the list with its parentheses if it was alone
            m = re.match(r'\s*(true|on|1)?\s*', tail, re.IGNORECASE)
            rest = tail[m.end():]
            if head.rstrip().endswith('(') and rest.startswith(')'):
                return head.rstrip()[:-1] + rest[1:]
            if head.rstrip().endswith('(') and rest.startswith(','):
                return head + rest[1:]
            if head.rstrip().endswith(',') and (rest.startswith(')') or rest.startswith(',')):
                return head.rstrip()[:-1] + rest
            return head + tail
        else:
            i += 1
    return query


# what an object's identity is checked with after its statement was applied
# by text (pg_get_object_address needs names the ddl_command_end events do
# not carry); other kinds are checked by the dump comparison of a test.  A
# shell type (CREATE TYPE t; before its I/O functions) is no type to
# to_regtype, nor to to_regprocedure in a function's arguments: those are
# looked up by their identity among the objects of the event's schema.
IDENTITY_IN_SCHEMA = (
    ' OR EXISTS (SELECT FROM pg_catalog.{cat} o WHERE o.{nsp} OPERATOR(pg_catalog.=)'
    ' pg_catalog.to_regnamespace(pg_catalog.quote_ident(%(schema)s))'
    ' AND (pg_catalog.pg_identify_object(\'pg_catalog.{cat}\'::pg_catalog.regclass, o.oid, 0)).identity'
    ' OPERATOR(pg_catalog.=) %(identity)s)')
PROC_THERE = 'SELECT to_regprocedure(%(identity)s) IS NOT NULL' + IDENTITY_IN_SCHEMA.format(
    cat='pg_proc', nsp='pronamespace')
TYPE_THERE = 'SELECT to_regtype(%(identity)s) IS NOT NULL' + IDENTITY_IN_SCHEMA.format(
    cat='pg_type', nsp='typnamespace')
EXISTS_SQL = {
    'function': PROC_THERE,
    'procedure': PROC_THERE,
    'aggregate': PROC_THERE,
    'type': TYPE_THERE,
    'domain': TYPE_THERE,
    'schema': 'SELECT to_regnamespace(%(identity)s) IS NOT NULL',
    'table': 'SELECT to_regclass(%(identity)s) IS NOT NULL',
    'index': 'SELECT to_regclass(%(identity)s) IS NOT NULL',
    'sequence': 'SELECT to_regclass(%(identity)s) IS NOT NULL',
    'view': 'SELECT to_regclass(%(identity)s) IS NOT NULL',
    'materialized view': 'SELECT to_regclass(%(identity)s) IS NOT NULL',
    'foreign table': 'SELECT to_regclass(%(identity)s) IS NOT NULL',
    'collation': 'SELECT to_regcollation(%(identity)s) IS NOT NULL',
    'operator': 'SELECT to_regoperator(%(identity)s) IS NOT NULL',
}


# SQLSTATEs of pg_get_object_address() for an object that is not there
NOT_THERE = {'42704', '42P01', '42703', '42883', '3F000', '42P17'}


class Replayer:
    """Collects a transaction's ddl_notify messages and applies them, with
    the transaction's end LSN, in one target transaction at its COMMIT:
    each event applied (Applier.apply_event) and then verified
    (verify_event); an event nothing applies must be part of what the
    transaction applied (check_left_out).  Anything else raises Stop and
    rolls the whole transaction back."""

    def __init__(self, target, slot, verbose, skip=()):
        self.target = target
        self.slot = slot
        self.verbose = verbose
        self.skip = set(skip)   # event ids to leave out (--skip-event)
        self.skipped = set()
        self.events = None      # inside a transaction: its messages
        self.applied = 0        # transactions applied
        self.counts = {}        # statements applied, by kind
        cur = target.cursor()
        # the images print every name outside pg_catalog qualified, as
        # pg_dump does, and every expression under fixed output settings
        # (docs/reference.md, "The payload"): so must what is compared with
        # them here, and what reads the literals built from them
        cur.execute("SET search_path = pg_catalog; SET datestyle = 'ISO, YMD'; "
                    "SET intervalstyle = postgres; SET timezone = 'UTC'; "
                    "SET extra_float_digits = 1; SET bytea_output = hex; "
                    "SET standard_conforming_strings = on; SET quote_all_identifiers = off")
        target.commit()
        cur.execute('CREATE SCHEMA IF NOT EXISTS ddl_replay')
        cur.execute('CREATE TABLE IF NOT EXISTS ddl_replay.progress'
                    ' (slot text PRIMARY KEY, end_lsn pg_lsn NOT NULL)')
        cur.execute('CREATE TABLE IF NOT EXISTS ddl_replay.skipped'
                    ' (slot text, event_id bigint, end_lsn pg_lsn NOT NULL,'
                    ' command_tag text, object_identity text, query text,'
                    ' skipped_at timestamptz NOT NULL DEFAULT now(),'
                    ' PRIMARY KEY (slot, event_id))')
        cur.execute('SELECT end_lsn::text FROM ddl_replay.progress'
                    ' WHERE slot OPERATOR(pg_catalog.=) %s', (slot,))
        row = cur.fetchone()
        target.commit()
        self.done_lsn = lsn_int(row[0]) if row else 0

    def handle(self, data):
        r = Reader(data)
        kind = r.raw(1)
        if kind == b'B':
            self.events = []
        elif kind == b'M':
            flags = r.take('b')
            r.take('Q')         # the message's LSN
            prefix = r.string()
            content = r.raw(r.take('i')).decode()
            if prefix == PREFIX and flags & 1 and self.events is not None:
                try:
                    self.events.append(json.loads(content))
                except ValueError as e:
                    self.events.append({'bad_json': str(e), 'content': content[:200]})
        elif kind == b'C':
            r.take('b')         # flags
            r.take('Q')         # commit LSN
            end_lsn = r.take('Q')
            events, self.events = self.events, None
            if events and end_lsn > self.done_lsn:
                self.apply(events, end_lsn)
        return self.events is None

    def apply(self, events, end_lsn):
        cur = self.target.cursor()
        applier = Applier(cur, self.verbose, self.counts)
        try:
            applied = []
            for run in statements(events):
                self.apply_statement(applier, cur, run, end_lsn, applied)
            cur.execute('INSERT INTO ddl_replay.progress VALUES (%s, %s)'
                        ' ON CONFLICT (slot) DO UPDATE SET end_lsn = EXCLUDED.end_lsn',
                        (self.slot, lsn_text(end_lsn)))
            self.target.commit()
        except Stop as e:
            self.target.rollback()
            e.end_lsn = end_lsn
            raise
        except psycopg2.Error as e:
            self.target.rollback()
            raise Stop('the copy failed: %s' % (e.pgerror or e).strip(), None)
        self.done_lsn = end_lsn
        self.applied += 1

    def apply_statement(self, applier, cur, run, end_lsn, applied):
        """Apply the events of one statement: by their typed payload when
        an apply function takes each of them; else (CannotApply, or a
        command tag whose work no image shows) by the statement's text,
        once, after the typed attempt is rolled back to a savepoint."""
        for ev in run:
            if 'bad_json' in ev:
                raise Stop('a ddl_notify message that is not JSON (%s): %s' % (ev['bad_json'], ev['content']))
        # a statement with an event to skip goes the typed way, event by
        # event (--skip-event leaves out each event it names)
        skipped = [ev for ev in run if ev.get('id') in self.skip]
        text_first = not skipped and statement_key(run[0]) is not None and (
            any(ev.get('command_tag') in TEXT_TAGS for ev in run) or
            any(by_text(ev) for ev in run) or
            any(NOT_IMAGED.search(ev.get('query') or '')
                for ev in run if ev.get('command_tag') in ('CREATE TABLE', 'ALTER TABLE')))
        if not text_first:
            mark = len(applied)
            counts = dict(self.counts)
            cur.execute('SAVEPOINT ddl_replay_statement')
            try:
                left_out = []
                for ev in run:
                    self.apply_one(applier, cur, ev, end_lsn, applied, left_out)
                # the events no apply function took are checked once their
                # statement's events are all applied: before the next
                # statement, which may need what they made
                self.check_left_out(applier, left_out, applied)
                cur.execute('RELEASE SAVEPOINT ddl_replay_statement')
                return
            except CannotApply as e:
                if skipped or statement_key(run[0]) is None:
                    raise
                cur.execute('ROLLBACK TO SAVEPOINT ddl_replay_statement')
                cur.execute('RELEASE SAVEPOINT ddl_replay_statement')
                del applied[mark:]
                self.counts.clear()
                self.counts.update(counts)
                if self.verbose:
                    print('  (%s: applying the statement\'s text)' % e.reason, file=sys.stderr)
        self.apply_text(applier, cur, run, applied)

    def text_settings(self, cur, key):
        """SET LOCAL what a statement's text must be read under on the
        copy: the source's search_path and the settings that change what
        its literals mean (details.statement.settings, TEXT_SETTINGS:
        DateStyle's field order, TimeZone for a timestamp without an
        offset, standard_conforming_strings for backslashes ...), and
        check_function_bodies off, as pg_dump's restores do (a body was
        checked on the source, and may name what its transaction makes
        later).  Returns [(name, value)] to set them back with."""
        wanted = [('search_path', key['search_path']), ('check_function_bodies', 'off')]
        wanted += [(name, value) for name, value in sorted((key.get('settings') or {}).items())
                   if name in TEXT_SETTINGS and isinstance(value, str)]
        saved = []
        for name, value in wanted:
            cur.execute('SELECT pg_catalog.current_setting(%s), pg_catalog.set_config(%s, %s, true)',
                        (name, name, value))
            saved.append((name, cur.fetchone()[0]))
        return saved[::-1]

    def apply_text(self, applier, cur, run, applied):
        """Apply one statement by its text, once for all its events: with
        SET LOCAL search_path and SET LOCAL ROLE to what it ran under on
        the source (details.statement), then verify what can be verified
        cheaply: each relation's last "after" image of the statement, and
        that each object it created or altered is there."""
        for ev in run:
            if ev.get('v') != 2:
                raise Stop('message format version %s: this consumer reads version 2 (set '
                           'ddl_notify.wal_message_version = 2 on the source; docs/cdc.md, '
                           '"versions")' % ev.get('v'), ev)
        own = [ev for ev in run if not statement_key(ev).get('nested')]
        if not own:
            raise Stop('no event of the statement carries its own text (only statements it ran '
                       'inside it were recorded): this consumer cannot apply it', run[0])
        ev = own[0]
        key = statement_key(ev)
        if not key.get('exact') or ev.get('query') is None:
            raise Stop('the statement has no exact text to apply ("exact": false: its text was '
                       'redacted, cut by ddl_notify.max_query_length, or not captured)', ev)
        cur.execute('SELECT EXISTS (SELECT FROM pg_roles WHERE rolname OPERATOR(pg_catalog.=) %s)',
                    (key['role'],))
        if not cur.fetchone()[0]:
            raise Stop('role "%s", whose statement this is, does not exist on the copy: create it '
                       '(roles are not replicated)' % key['role'], ev)
        key_name = 'statement ' + (ev.get('command_tag') or '?')
        self.counts[key_name] = self.counts.get(key_name, 0) + 1
        applier.last_sql = None
        try:
            saved = self.text_settings(cur, key)
            cur.execute('SET LOCAL ROLE ' + ident(key['role']))
            if not REINDEX_STMT.match(ev['query']):
                applier.run(without_concurrently(ev['query'], ev.get('command_tag')))
            cur.execute('RESET ROLE')
            for name, value in saved:
                cur.execute('SELECT pg_catalog.set_config(%s, %s, true)', (name, value))
        except psycopg2.Error as e:
            raise Stop('the copy refused the statement: %s' % (e.pgerror or e).strip().splitlines()[0],
                       ev, sql=applier.last_sql,
                       detail='\n'.join((e.pgerror or '').strip().splitlines()[1:]))
        # verify: a relation's image as the statement left it (the last
        # event on it), and that the objects it made or altered are there
        last = {}
        for e in run:
            after = (e.get('details') or {}).get('after')
            if e['trigger_event'] == 'ddl_command_end' and after is not None:
                last[(after.get('schema'), after.get('name'))] = e
        for e in last.values():
            diff = verify_event(cur, e)
            if diff:
                raise Stop('after applying its statement\'s text, the copy does not match the '
                           'event\'s "after" image', e, sql=applier.last_sql, detail='\n'.join(diff))
        dropped = {(e.get('object_type'), e.get('object_identity'))
                   for e in run if e['trigger_event'] == 'sql_drop'}
        for e in run:
            check = EXISTS_SQL.get(e.get('object_type'))
            # (a TOAST table's index is named after the OIDs of its table:
            # a REINDEX reports it under the source's name)
            if (e['trigger_event'] != 'ddl_command_end' or check is None or not e.get('object_identity')
                    or e.get('schema_name') == 'pg_toast'
                    or (e.get('command_tag') or '').startswith('DROP')
                    or (e.get('object_type'), e.get('object_identity')) in dropped):
                continue
            cur.execute('SAVEPOINT ddl_replay_check')
            try:
                cur.execute(check, {'identity': e['object_identity'], 'schema': e.get('schema_name')})
                there = cur.fetchone()[0]
            except psycopg2.Error:
                there = None    # an identity these functions do not read
            cur.execute('ROLLBACK TO SAVEPOINT ddl_replay_check')
            if there is False:
                raise Stop('after applying its statement\'s text, the copy has no %s %s'
                           % (e['object_type'], e['object_identity']), e, sql=applier.last_sql)
        applied.extend(run)

    def apply_one(self, applier, cur, ev, end_lsn, applied, left_out):
        """Apply and verify one event, or leave it for check_left_out."""
        if 'bad_json' in ev:
            raise Stop('a ddl_notify message that is not JSON (%s): %s' % (ev['bad_json'], ev['content']))
        if self.verbose:
            print('event %s %s %s %s' % (ev.get('id'), ev.get('trigger_event'),
                                         ev.get('command_tag'), ev.get('object_identity')),
                  file=sys.stderr)
        if ev.get('id') in self.skip:
            cur.execute('INSERT INTO ddl_replay.skipped (slot, event_id, end_lsn, command_tag,'
                        ' object_identity, query) VALUES (%s, %s, %s, %s, %s, %s)'
                        ' ON CONFLICT DO NOTHING',
                        (self.slot, ev['id'], lsn_text(end_lsn), ev.get('command_tag'),
                         ev.get('object_identity'), ev.get('query')))
            self.skipped.add(ev['id'])
            return
        if ev.get('v') != 2:
            raise Stop('message format version %s: this consumer reads version 2, whose events '
                       'carry the relation images (set ddl_notify.wal_message_version = 2 on the '
                       'source; docs/cdc.md, "versions")' % ev.get('v'), ev)
        applier.last_sql = None
        try:
            done = applier.apply_event(ev)
        except NotUnderstood as e:
            raise Stop('not understood: %s' % e, ev)
        except psycopg2.Error as e:
            raise Stop('the copy refused a statement: %s' % (e.pgerror or e).strip().splitlines()[0],
                       ev, sql=applier.last_sql, detail='\n'.join((e.pgerror or '').strip().splitlines()[1:]))
        if not done:
            left_out.append(ev)
            return
        diff = verify_event(cur, ev)
        if diff and (statement_key(ev) or {}).get('exact') and only_printing_differs(cur, ev):
            # PostgreSQL prints some expressions otherwise once made again
            # from their printed form (a view's BETWEEN or VALUES list, a
            # CHECK's IN list over varchar): the statement's own text makes
            # what the source has, and is verified in turn
            raise CannotApply('an expression made from its printed form prints otherwise', ev)
        if diff:
            raise Stop('after applying it, the copy does not match the event\'s "after" image',
                       ev, sql=applier.last_sql, detail='\n'.join(diff))
        applied.append(ev)

    def check_left_out(self, applier, left_out, applied):
        """Check the events of left_out (and empty it)."""
        for ev in left_out:
            self.check_one_left_out(applier, ev, applied)
        del left_out[:]

    def check_one_left_out(self, applier, ev, applied):
        """An event that no apply function took is fine only when the
        transaction's other events did its work: a dropped object must be
        gone from the copy (a table's row type, an identity's sequence, a
        column's default went with what owned them); a sequence or index
        created or altered by the same statement as an event applied
        (an identity's sequence, a primary key's index) must be there; a
        second event of the same statement on the same object (the foreign
        keys of a CREATE TABLE) is covered by the first's image.
        The sequence of an identity column, which its table's statement
        made, gets the parameters of its "after" image then, and is
        verified.  Anything else stops the consumer."""
        cur = applier.cur
        details = ev.get('details') or {}
        otype = ev.get('object_type')
        after = details.get('after') or {}
        if ev['trigger_event'] == 'ddl_command_end' and after.get('kind') == 'sequence':
            owner = after.get('owned_by')
            if not applier.relation_exists(after['schema'], after['name']) and owner is not None:
                # the column made its sequence under the name PostgreSQL
                # chose on the copy (the source's may have been given:
                # SEQUENCE NAME): it takes the source's
                cur.execute('SELECT n.nspname::text, c.relname::text FROM pg_class c'
                            ' JOIN pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace'
                            ' WHERE c.oid OPERATOR(pg_catalog.=) pg_get_serial_sequence(%s, %s)::regclass',
                            (qname(owner['schema'], owner['name']), owner['column']))
                made = cur.fetchone()
                if made is not None and made[0] != after['schema']:
                    applier.run('ALTER SEQUENCE %s SET SCHEMA %s' % (qname(*made), ident(after['schema'])))
                    made = (after['schema'], made[1])
                if made is not None and made[1] != after['name']:
                    applier.run('ALTER SEQUENCE %s RENAME TO %s' % (qname(*made), ident(after['name'])))
            if not applier.relation_exists(after['schema'], after['name']):
                raise Stop('the sequence of identity column %s is not in the copy after its statement'
                           % owner_sql(owner), ev)
            applier.last_sql = None
            try:
                rel = qname(after['schema'], after['name'])
                applier.run('ALTER SEQUENCE %s %s%s' % (rel, sequence_options_sql(after),
                                                        applier.restart_sql(rel, after)))
            except psycopg2.Error as e:
                raise Stop('the copy refused a statement: %s' % (e.pgerror or e).strip().splitlines()[0],
                           ev, sql=applier.last_sql)
            diff = verify_event(cur, ev)
            if diff:
                raise Stop('after applying it, the copy does not match the event\'s "after" image',
                           ev, sql=applier.last_sql, detail='\n'.join(diff))
            return
        if ev['trigger_event'] == 'sql_drop':
            cur.execute('SAVEPOINT left_out')
            try:
                if otype == 'operator':
                    # pg_get_object_address wants two argument types, and
                    # a prefix operator's address has one (no left one):
                    # its identity, "(NONE,type)", is what regoperator reads
                    cur.execute(EXISTS_SQL[otype], {'identity': ev.get('object_identity'), 'schema': ev.get('schema_name')})
                    there = cur.fetchone()[0]
                else:
                    cur.execute('SELECT pg_get_object_address(%s, %s, %s)',
                                (ADDRESS_TYPES.get(otype, otype), details.get('address_names') or [],
                                 details.get('address_args') or []))
                    there = True
            except psycopg2.Error as e:
                if e.pgcode not in NOT_THERE:
                    raise Stop('cannot tell whether the %s it drops is gone from the copy: %s'
                               % (otype, (e.pgerror or e).strip()), ev)
                there = False
            cur.execute('ROLLBACK TO SAVEPOINT left_out')
            if there:
                raise CannotApply('this consumer cannot apply the drop of this %s, and the copy still has it'
                                  % otype, ev)
            return
        same_statement = [a for a in applied if statement_of(a) == statement_of(ev)]
        # a CREATE TABLE's foreign keys come as an ALTER TABLE of the same
        # table without an image: the CREATE's image has them
        if any(a.get('object_identity') == ev.get('object_identity') and
               a['trigger_event'] == 'ddl_command_end' for a in same_statement):
            return
        if same_statement and otype in ('sequence', 'index') and ev.get('object_identity'):
            cur.execute('SELECT to_regclass(%s) IS NOT NULL', (ev['object_identity'],))
            if cur.fetchone()[0]:
                return
        if (otype in KIND_SQL and ev['trigger_event'] == 'ddl_command_end' and 'after' not in details and
                (ev.get('command_tag') or '').startswith(('CREATE', 'ALTER', 'SELECT INTO'))):
            raise Stop('the event carries no relation image ("after"): was it captured with '
                       'ddl_notify.capture_changes = off?', ev)
        raise CannotApply('this consumer cannot apply %s (object type "%s")' % (ev.get('command_tag'), otype), ev)


# --- pgoutput ----------------------------------------------------------------

class Reader:
    """Reads pgoutput's binary fields from one message."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, fmt):
        vals = struct.unpack_from('!' + fmt, self.data, self.pos)
        self.pos += struct.calcsize('!' + fmt)
        return vals[0] if len(vals) == 1 else vals

    def string(self):
        end = self.data.index(b'\0', self.pos)
        s = self.data[self.pos:end].decode()
        self.pos = end + 1
        return s

    def raw(self, n):
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--source', required=True)
    ap.add_argument('--target', required=True)
    ap.add_argument('--slot', required=True)
    ap.add_argument('--publication', required=True)
    ap.add_argument('--create-slot', action='store_true')
    ap.add_argument('--end-lsn')
    ap.add_argument('--timeout', type=float, default=0)
    ap.add_argument('--verbose', action='store_true')
    ap.add_argument('--stats', action='store_true',
                    help='print what was applied, by kind, as JSON at the end')
    ap.add_argument('--skip-event', type=int, action='append', default=[], metavar='ID',
                    help='leave event ID out (its effect was made on the copy by hand); '
                    'recorded in ddl_replay.skipped; may be given more than once')
    args = ap.parse_args()

    target = psycopg2.connect(args.target)
    replayer = Replayer(target, args.slot, args.verbose, args.skip_event)

    conn = psycopg2.connect(
        args.source, connection_factory=psycopg2.extras.LogicalReplicationConnection)
    cur = conn.cursor()
    if args.create_slot:
        cur.create_replication_slot(args.slot, output_plugin='pgoutput')
    cur.start_replication(slot_name=args.slot, decode=False, options={
        'proto_version': '1',
        'publication_names': args.publication,
        'messages': 'true'})

    end = lsn_int(args.end_lsn) if args.end_lsn else None
    deadline = time.monotonic() + args.timeout if args.timeout else None
    idle = True
    while True:
        msg = cur.read_message()
        if msg is not None:
            try:
                idle = replayer.handle(msg.payload)
            except Stop as e:
                print(e.message(args.slot), file=sys.stderr)
                return 3
            if idle:
                # applied and committed on the target: the slot may move on
                msg.cursor.send_feedback(flush_lsn=msg.data_start)
            continue
        if end is not None and idle and cur.wal_end >= end:
            break
        if deadline is not None and time.monotonic() > deadline:
            print('ddl_replay.py: timed out before %s' % args.end_lsn, file=sys.stderr)
            return 2
        select.select([cur], [], [], 1.0)
    cur.send_feedback(flush_lsn=cur.wal_end, force=True)
    conn.close()
    print('ddl_replay.py: %d transactions applied' % replayer.applied, file=sys.stderr)
    for ev_id in sorted(set(args.skip_event) - replayer.skipped):
        print('ddl_replay.py: --skip-event %d: no such event was met' % ev_id, file=sys.stderr)
    if args.stats:
        print(json.dumps(replayer.counts, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
