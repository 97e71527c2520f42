#!/usr/bin/python3
# Copyright (c) 2026, the ddl_notify authors
#
# test/cdc/ddl_stream.py: a change-data-capture client outside the server
# that streams pgoutput (messages 'true') over the replication protocol
# with psycopg2's LogicalReplicationConnection, and prints each
# transaction's row changes with the DDL ddl_notify put between them
# (ddl_notify.wal_messages = on).  An example for docs/cdc.md; the TAP test
# test/t/061_cdc_consumers.pl runs it (G15).
#
#   ddl_stream.py --dsn 'dbname=app' --slot cdc --publication cdc_pub \
#                 [--create-slot] [--end-lsn 0/1234ABC] [--timeout 60]
#
# Output, one line per change:
#   BEGIN
#   INSERT public.t id=1 note='a'
#   DDL ALTER TABLE public.t [id integer NOT NULL, note text, w integer] identity default (id)
#   UPDATE public.t id=1 note='b' w=NULL
#   DDL DROP TABLE table public.old
#   COMMIT
# (a DDL line is the JSON message: its command tag, and for table DDL the
# table's columns after the command, else the object type and identity).
# Format version 1 (ddl_notify.wal_message_version = 1) prints the columns
# of the replica identity in parentheses; version 2, the default, prints
# the name of its index, if any, and the changes of an ALTER:
#   DDL ALTER TABLE public.t [id integer NOT NULL, note text, w integer] identity default changes: add column
#
# It stops once the server has sent everything up to --end-lsn and no
# transaction is open (without --end-lsn it runs until interrupted), and
# confirms what it printed, so that the slot moves on.  Exit status 2 when
# --timeout passes first.  Debian: apt-get install python3-psycopg2.

import argparse
import json
import select
import struct
import sys
import time

import psycopg2
import psycopg2.extras

PREFIX = 'ddl_notify'


def lsn_int(text):
    hi, lo = text.split('/')
    return (int(hi, 16) << 32) + int(lo, 16)


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

    def tuple(self):
        vals = []
        for _ in range(self.take('h')):
            kind = self.raw(1)
            if kind == b't':
                vals.append(self.raw(self.take('i')).decode())
            elif kind == b'n':
                vals.append(None)
            else:               # 'u': an unchanged TOASTed value
                vals.append('<unchanged>')
        return vals


def show_row(rel, vals):
    cols = []
    for name, v in zip(rel['columns'], vals):
        if v is None:
            v = 'NULL'
        elif not v.lstrip('-').isdigit():
            v = "'%s'" % v.replace("'", "''")
        cols.append('%s=%s' % (name, v))
    return ' '.join(cols)


def show_ddl(content):
    ev = json.loads(content)
    if ev.get('v') == 2:
        return show_ddl_v2(ev)
    if ev.get('v') != 1:
        return 'DDL (message format v%s, not understood)' % ev.get('v')
    t = ev.get('table')
    if t is None:
        return 'DDL %s %s %s' % (ev['command_tag'], ev['object_type'],
                                 ev['object_identity'])
    cols = ', '.join('%s %s%s' % (c['name'], c['type'],
                                  ' NOT NULL' if c['not_null'] else '')
                     for c in t['columns'] if not c['dropped'])
    return 'DDL %s %s.%s [%s] identity %s (%s)' % (
        ev['command_tag'], t['schema'], t['name'], cols,
        t['replica_identity'], ', '.join(t['identity_columns']))


def show_ddl_v2(ev):
    """Format version 2: the relation after the command from details.after
    (before it, for a drop), and the changes of an ALTER."""
    details = ev.get('details') or {}
    img = details.get('after') or details.get('before')
    if img is None:
        return 'DDL %s %s %s' % (ev['command_tag'], ev['object_type'],
                                 ev['object_identity'])
    cols = ', '.join('%s %s%s' % (c['name'], c['type'],
                                  ' NOT NULL' if c['not_null'] else '')
                     for c in img['columns'])
    line = 'DDL %s %s.%s [%s] identity %s' % (
        ev['command_tag'], img['schema'], img['name'], cols,
        img['replica_identity'])
    if img.get('replica_identity_index'):
        line += ' (%s)' % img['replica_identity_index']
    if details.get('changes'):
        line += ' changes: ' + ', '.join(c['op'] for c in details['changes'])
    return line


class Printer:
    def __init__(self, out):
        self.out = out
        self.relations = {}
        self.in_txn = False

    def handle(self, data):
        r = Reader(data)
        kind = r.raw(1)
        line = None
        if kind == b'B':
            self.in_txn = True
            line = 'BEGIN'
        elif kind == b'C':
            self.in_txn = False
            line = 'COMMIT'
        elif kind == b'R':
            relid = r.take('I')
            nsp, name = r.string(), r.string()
            r.take('b')         # replica identity
            cols = []
            for _ in range(r.take('h')):
                r.take('b')     # flags
                cols.append(r.string())
                r.take('Ii')    # type oid, typmod
            self.relations[relid] = {'name': '%s.%s' % (nsp, name),
                                     'columns': cols}
        elif kind == b'I':
            rel = self.relations[r.take('I')]
            r.raw(1)            # 'N'
            line = 'INSERT %s %s' % (rel['name'], show_row(rel, r.tuple()))
        elif kind == b'U':
            rel = self.relations[r.take('I')]
            if r.raw(1) in (b'K', b'O'):
                r.tuple()
                r.raw(1)        # 'N'
            line = 'UPDATE %s %s' % (rel['name'], show_row(rel, r.tuple()))
        elif kind == b'D':
            rel = self.relations[r.take('I')]
            r.raw(1)            # 'K' or 'O'
            line = 'DELETE %s %s' % (rel['name'], show_row(rel, r.tuple()))
        elif kind == b'T':
            n = r.take('I')
            r.take('b')
            names = [self.relations[r.take('I')]['name'] for _ in range(n)]
            line = 'TRUNCATE %s' % ', '.join(names)
        elif kind == b'M':
            r.take('b')         # flags: 1 = transactional
            r.take('Q')         # the message's LSN
            prefix = r.string()
            content = r.raw(r.take('i')).decode()
            if prefix == PREFIX:
                line = show_ddl(content)
        if line is not None:
            print(line, file=self.out, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--dsn', required=True)
    ap.add_argument('--slot', required=True)
    ap.add_argument('--publication', required=True)
    ap.add_argument('--create-slot', action='store_true')
    ap.add_argument('--end-lsn')
    ap.add_argument('--timeout', type=float, default=0)
    args = ap.parse_args()

    conn = psycopg2.connect(
        args.dsn, connection_factory=psycopg2.extras.LogicalReplicationConnection)
    cur = conn.cursor()
    if args.create_slot:
        cur.create_replication_slot(args.slot, output_plugin='pgoutput')
    cur.start_replication(slot_name=args.slot, decode=False, options={
        'proto_version': '1',
        'publication_names': args.publication,
        'messages': 'true'})

    end = lsn_int(args.end_lsn) if args.end_lsn else None
    deadline = time.monotonic() + args.timeout if args.timeout else None
    printer = Printer(sys.stdout)
    while True:
        msg = cur.read_message()
        if msg is not None:
            printer.handle(msg.payload)
            msg.cursor.send_feedback(flush_lsn=msg.data_start)
            continue
        if end is not None and not printer.in_txn and cur.wal_end >= end:
            break
        if deadline is not None and time.monotonic() > deadline:
            print('ddl_stream.py: timed out before %s' % args.end_lsn,
                  file=sys.stderr)
            return 2
        select.select([cur], [], [], 1.0)
    cur.send_feedback(flush_lsn=cur.wal_end, force=True)
    conn.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
