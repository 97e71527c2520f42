
# Copyright (c) 2026, the ddl_notify authors

# 060_wal_messages.pl: DDL in the WAL stream (G15), read by PostgreSQL's own
# logical decoding consumers: test_decoding (pg_logical_slot_get_changes)
# and pgoutput with messages 'true' (pg_logical_slot_peek_binary_changes,
# its 'B', 'R', 'I', 'M', 'C' messages decoded here in Perl).
#
# The cluster has wal_level = logical and does NOT preload ddl_notify: no
# worker, no subscriber; the messages come from capture alone.
#
# G15 off by default: DDL leaves no "ddl_notify" message (and SET of the
#     setting needs a superuser).
#     Catches: the message written without testing ddl_notify.wal_messages,
#     or a default of on.
# G15 placed where the DDL ran: INSERT, ALTER TABLE ADD COLUMN, INSERT with
#     the new column come out in that order, across three transactions and
#     inside one, in both plugins' streams.
#     Catches: a message that is not transactional (decoded at once, before
#     the transaction's rows and outside it); by construction also one
#     written at commit (it would follow the last INSERT).
# G15 (and G1) a rolled-back DDL leaves nothing: ROLLBACK, ROLLBACK TO
#     SAVEPOINT (the rows around it stay); RELEASE SAVEPOINT keeps it.
#     Catches: transactional = false in LogLogicalMessage (the rolled-back
#     message is decoded anyway).
# G15 two-phase: a two_phase test_decoding slot gets the message with the
#     prepared transaction (then COMMIT/ROLLBACK PREPARED); an ordinary slot
#     gets it at COMMIT PREPARED and never for ROLLBACK PREPARED.
# G15 content (version 1): every message is the recorded event, "v": 1
#     and every column of ddl_notify.event equal to to_jsonb() of its row
#     (details without the relation images and the "statement" key, as
#     0.1.0 wrote them), one
#     message per event row; table DDL (CREATE TABLE [AS], ALTER TABLE,
#     RENAME, SET SCHEMA, a rewrite) carries the columns after the command
#     (name, format_type, not null, position, dropped) and the replica
#     identity with its columns; drops carry the dropped object's identity;
#     other DDL has no "table".
#     Catches: a column left out of the JSON (or spelled differently from
#     to_jsonb), no "table" for table DDL, dropped columns shown as live
#     (this and the two-phase checks), the primary key and the replica
#     identity index mixed up.
# G15 PGC_SUSET: a plain role cannot SET it (nor wal_message_version).
#     Catches: the setting defined as PGC_USERSET.
# G15 versions: the checks above run with ddl_notify.wal_message_version =
#     1 (set for the database), the format consumers written for 0.1.0
#     read, which must not change; then, the setting reset, version 2 (the
#     default): "v": 2 and exactly to_jsonb() of the event row, details
#     included (the relation images), no "table" key.
#     Catches: the version setting ignored (either way), a default other
#     than 2, "table" still added to (or missing from) its version, the
#     images left in version 1's details.
# G15 the switch off in a session (SET) stops the messages there.

use strict;
use warnings FATAL => 'all';

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('walmsg');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', "max_prepared_transactions = 5\n");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql(
	'app', q{
SET client_min_messages = error;
CREATE EXTENSION ddl_notify;
CREATE TABLE public.t (id int PRIMARY KEY, v text);
CREATE PUBLICATION pub FOR TABLE public.t;
SELECT pg_create_logical_replication_slot('td', 'test_decoding');
SELECT pg_create_logical_replication_slot('po', 'pgoutput');
SELECT pg_create_logical_replication_slot('tp', 'test_decoding', false, true);
});

is( $node->safe_psql(
		'app',
		"SELECT ddl_notify.delivery_status() LIKE 'manual%', "
		  . "(SELECT count(*) FROM ddl_notify.subscriber_status)"),
	't|0',
	'G15 set-up: no worker and no subscriber');

# --- the two consumers, summarised the same way ---------------------------
#
# One line per change: BEGIN, COMMIT, "INSERT public.t id=1 v=a",
# "DDL <tag> <identity> [<live columns>]"; test_decoding's two-phase lines
# as they are.  Rows of the extension's own tables are left out (only
# test_decoding shows them), and so is a BEGIN/COMMIT pair with nothing
# left between them.

sub ddl_line
{
	my ($content) = @_;
	my $m = decode_json($content);
	my $line = "DDL $m->{command_tag} $m->{object_identity}";
	$line .= ' [' . join(',', map { $_->{name} } grep { !$_->{dropped} } @{ $m->{table}{columns} }) . ']'
	  if $m->{table};
	return $line;
}

sub drop_empty
{
	my @in = @_;
	my @out;
	for my $l (@in)
	{
		if ($l eq 'COMMIT' && @out && $out[-1] eq 'BEGIN')
		{
			pop @out;
			next;
		}
		push @out, $l;
	}
	return join("\n", @out);
}

sub td_summary
{
	my ($slot) = @_;
	my @lines;
	for my $d (split /\n/,
		$node->safe_psql('app',
			"SELECT data FROM pg_logical_slot_get_changes('$slot', NULL, NULL, 'include-xids', '0')"))
	{
		if ($d =~ /^(BEGIN|COMMIT)$/ || $d =~ /^(PREPARE TRANSACTION|COMMIT PREPARED|ROLLBACK PREPARED) /)
		{
			push @lines, $d;
		}
		elsif ($d =~ /^message: transactional: (\d) prefix: ddl_notify, sz: \d+ content:(.*)$/)
		{
			push @lines, ($1 ? '' : 'NON-TRANSACTIONAL ') . ddl_line($2);
		}
		elsif ($d =~ /^message: /)
		{
			push @lines, "OTHER $d";
		}
		elsif ($d =~ /^table (public\.\w+): (\w+): (.*)$/)
		{
			my ($rel, $op, $cols) = ($1, $2, $3);
			my @kv;
			while ($cols =~ /(\w+)\[[^\]]+\]:('(?:[^']|'')*'|\S+)/g)
			{
				my ($k, $v) = ($1, $2);
				$v = 'NULL' if $v eq 'null';
				$v =~ s/^'(.*)'$/$1/;
				push @kv, "$k=$v";
			}
			push @lines, join(' ', $op, $rel, @kv);
		}
	}
	return drop_empty(@lines);
}

# pgoutput, protocol 1: peeked up to the current LSN, then the slot is
# advanced there.
sub po_summary
{
	my $lsn = $node->safe_psql('app', 'SELECT pg_current_wal_lsn()');
	my @msgs = split /\n/,
	  $node->safe_psql('app',
		    "SELECT encode(data, 'hex') FROM pg_logical_slot_peek_binary_changes('po', '$lsn', NULL, "
		  . "'proto_version', '1', 'publication_names', 'pub', 'messages', 'true')");
	$node->safe_psql('app', "SELECT pg_replication_slot_advance('po', '$lsn')");
	my (%rels, @lines);
	for my $hex (@msgs)
	{
		my $d = pack('H*', $hex);
		my $pos = 0;
		my $take = sub {
			my ($t) = @_;
			my @v = unpack("\@$pos $t", $d);
			$pos += length(pack($t, @v));
			return wantarray ? @v : $v[0];
		};
		my $str = sub {
			my $s = unpack("\@$pos Z*", $d);
			$pos += length($s) + 1;
			return $s;
		};
		my $kind = $take->('a');
		if ($kind eq 'B') { push @lines, 'BEGIN'; }
		elsif ($kind eq 'C') { push @lines, 'COMMIT'; }
		elsif ($kind eq 'R')
		{
			my $relid = $take->('N');
			my $name  = $str->() . '.' . $str->();
			$take->('c');
			my @cols;
			for (1 .. $take->('n'))
			{
				$take->('c');
				push @cols, $str->();
				$take->('N N');
			}
			$rels{$relid} = { name => $name, cols => \@cols };
		}
		elsif ($kind eq 'I')
		{
			my $rel = $rels{ $take->('N') };
			$take->('a');
			my @kv;
			my $n = $take->('n');
			for my $i (0 .. $n - 1)
			{
				my $k = $take->('a');
				my $v = $k eq 't' ? $take->('N/a') : 'NULL';
				push @kv, "$rel->{cols}[$i]=$v";
			}
			push @lines, join(' ', 'INSERT', $rel->{name}, @kv);
		}
		elsif ($kind eq 'M')
		{
			my $flags = $take->('c');
			$take->('Q>');
			my $prefix  = $str->();
			my $content = $take->('N/a');
			if ($prefix eq 'ddl_notify')
			{
				push @lines, ($flags ? '' : 'NON-TRANSACTIONAL ') . ddl_line($content);
			}
			else
			{
				push @lines, "OTHER $prefix";
			}
		}
		else
		{
			push @lines, "UNEXPECTED $kind";
		}
	}
	return drop_empty(@lines);
}

# check(LABEL, EXPECTED): both streams show exactly EXPECTED since the last
# check; the two-phase slot is consumed too (it shows what td shows for
# transactions that were never prepared).
sub check
{
	my ($label, $want) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is(td_summary('td'), $want, "$label (test_decoding)");
	is(po_summary(), $want, "$label (pgoutput, messages 'true')");
	td_summary('tp');
	return;
}

# --- off by default -------------------------------------------------------

# (the library is not preloaded: sessions that ran no DDL load it to SHOW)
is($node->safe_psql('app', "LOAD 'ddl_notify'; SHOW ddl_notify.wal_messages"), 'off',
	'G15: ddl_notify.wal_messages is off by default');
$node->safe_psql('app', 'INSERT INTO public.t VALUES (1, \'a\')');
$node->safe_psql('app', 'ALTER TABLE public.t ADD COLUMN w int');
$node->safe_psql('app', 'INSERT INTO public.t VALUES (2, \'b\', 20)');
check('G15 off: the rows and no DDL message',
	"BEGIN\nINSERT public.t id=1 v=a\nCOMMIT\nBEGIN\nINSERT public.t id=2 v=b w=20\nCOMMIT");
is( $node->safe_psql('app',
		"SELECT count(*) FROM ddl_notify.event WHERE command_tag = 'ALTER TABLE'"),
	'1', 'G15 off: the event was recorded all the same');

# PGC_SUSET: a plain role can neither switch it on nor off
$node->safe_psql('app', 'CREATE ROLE plain LOGIN');
my ($rc, $out, $err) = $node->psql('app',
	"LOAD 'ddl_notify'; SET ROLE plain; SET ddl_notify.wal_messages = on");
like($err, qr/permission denied to set parameter "ddl_notify.wal_messages"/,
	'G15: setting ddl_notify.wal_messages needs a superuser');

# --- on for the database, as a CDC set-up does it ---------------------------

$node->safe_psql('app', 'ALTER DATABASE app SET ddl_notify.wal_messages = on');
# format version 1 (0.1.0's, with "table") for everything down to the
# version 2 section: these checks are those of 0.1.0 and must still pass
$node->safe_psql('app', 'ALTER DATABASE app SET ddl_notify.wal_message_version = 1');
is($node->safe_psql('app', "LOAD 'ddl_notify'; SHOW ddl_notify.wal_messages"), 'on',
	'G15: ALTER DATABASE ... SET ddl_notify.wal_messages = on reaches new sessions');

$node->safe_psql('app', 'INSERT INTO public.t VALUES (3, \'c\', 30)');
$node->safe_psql('app', 'ALTER TABLE public.t ADD COLUMN x text');
$node->safe_psql('app', 'INSERT INTO public.t VALUES (4, \'d\', 40, \'xd\')');
check(
	'G15 across transactions: INSERT, ALTER TABLE ADD COLUMN, INSERT in order',
	"BEGIN\nINSERT public.t id=3 v=c w=30\nCOMMIT\n"
	  . "BEGIN\nDDL ALTER TABLE public.t [id,v,w,x]\nCOMMIT\n"
	  . "BEGIN\nINSERT public.t id=4 v=d w=40 x=xd\nCOMMIT");

$node->safe_psql(
	'app', q{
BEGIN;
INSERT INTO public.t VALUES (5, 'e', 50, 'xe');
ALTER TABLE public.t ADD COLUMN y int;
INSERT INTO public.t VALUES (6, 'f', 60, 'xf', 6);
COMMIT;
});
check(
	'G15 one transaction: INSERT, ALTER TABLE ADD COLUMN, INSERT in order',
	"BEGIN\nINSERT public.t id=5 v=e w=50 x=xe\nDDL ALTER TABLE public.t [id,v,w,x,y]\n"
	  . "INSERT public.t id=6 v=f w=60 x=xf y=6\nCOMMIT");

# --- rolled back: nothing ---------------------------------------------------

$node->safe_psql(
	'app', q{
BEGIN;
INSERT INTO public.t VALUES (7, 'g');
ALTER TABLE public.t ADD COLUMN z int;
INSERT INTO public.t VALUES (8, 'h', 0, '', 0, 8);
ROLLBACK;
});
check('G15 ROLLBACK: neither the rows nor the DDL message', '');

$node->safe_psql(
	'app', q{
BEGIN;
INSERT INTO public.t VALUES (9, 'i');
SAVEPOINT s;
ALTER TABLE public.t ADD COLUMN z int;
CREATE TABLE public.gone (a int);
INSERT INTO public.t VALUES (10, 'j', 0, '', 0, 10);
ROLLBACK TO SAVEPOINT s;
INSERT INTO public.t VALUES (11, 'k');
SAVEPOINT s2;
ALTER TABLE public.t ADD COLUMN kept int;
RELEASE SAVEPOINT s2;
COMMIT;
});
check(
	'G15 ROLLBACK TO SAVEPOINT: the rows around it, no message for its DDL; RELEASE keeps it',
	"BEGIN\nINSERT public.t id=9 v=i w=NULL x=NULL y=NULL\n"
	  . "INSERT public.t id=11 v=k w=NULL x=NULL y=NULL\n"
	  . "DDL ALTER TABLE public.t [id,v,w,x,y,kept]\nCOMMIT");

# --- two-phase --------------------------------------------------------------

$node->safe_psql(
	'app', q{
BEGIN;
INSERT INTO public.t VALUES (12, 'l');
ALTER TABLE public.t DROP COLUMN kept;
PREPARE TRANSACTION 'p1';
});
is( td_summary('tp'),
	"BEGIN\nINSERT public.t id=12 v=l w=NULL x=NULL y=NULL kept=NULL\n"
	  . "DDL ALTER TABLE public.t.kept\nDDL ALTER TABLE public.t [id,v,w,x,y]\nPREPARE TRANSACTION 'p1'",
	'G15 two-phase slot: the messages come with the prepared transaction');
is(td_summary('td'), '', 'G15 ordinary slot: nothing before COMMIT PREPARED');
$node->safe_psql('app', "COMMIT PREPARED 'p1'");
is(td_summary('tp'), "COMMIT PREPARED 'p1'",
	'G15 two-phase slot: then COMMIT PREPARED');
is( td_summary('td'),
	"BEGIN\nINSERT public.t id=12 v=l w=NULL x=NULL y=NULL kept=NULL\n"
	  . "DDL ALTER TABLE public.t.kept\nDDL ALTER TABLE public.t [id,v,w,x,y]\nCOMMIT",
	'G15 ordinary slot: the messages at COMMIT PREPARED');
po_summary();

$node->safe_psql(
	'app', q{
BEGIN;
ALTER TABLE public.t ADD COLUMN never int;
PREPARE TRANSACTION 'p2';
});
is( td_summary('tp'),
	"BEGIN\nDDL ALTER TABLE public.t [id,v,w,x,y,never]\nPREPARE TRANSACTION 'p2'",
	'G15 two-phase slot: a prepared DDL');
$node->safe_psql('app', "ROLLBACK PREPARED 'p2'");
is(td_summary('tp'), "ROLLBACK PREPARED 'p2'",
	'G15 two-phase slot: then ROLLBACK PREPARED');
is(td_summary('td'), '', 'G15 ordinary slot: nothing for ROLLBACK PREPARED');
is(po_summary(), '', 'G15 pgoutput: nothing for ROLLBACK PREPARED');

# --- content ----------------------------------------------------------------

my $before = $node->safe_psql('app', 'SELECT coalesce(max(id), 0) FROM ddl_notify.event');
$node->safe_psql(
	'app', q{
CREATE SCHEMA s1;
CREATE TABLE s1.p (id int PRIMARY KEY, a varchar(5) NOT NULL, b numeric(4,1));
ALTER TABLE s1.p DROP COLUMN a;
ALTER TABLE s1.p ALTER COLUMN b TYPE bigint;
ALTER TABLE s1.p REPLICA IDENTITY FULL;
CREATE UNIQUE INDEX p_b ON s1.p (b);
ALTER TABLE s1.p ALTER COLUMN b SET NOT NULL, REPLICA IDENTITY USING INDEX p_b;
ALTER TABLE s1.p RENAME TO q;
CREATE SCHEMA s2;
ALTER TABLE s1.q SET SCHEMA s2;
CREATE TABLE s1.c AS SELECT 1 AS x, 'a'::text AS "Y";
CREATE VIEW s1.v AS SELECT * FROM s1.c;
COMMENT ON TABLE s1.c IS 'comment';
DROP TABLE s2.q;
});
my $events = $node->safe_psql('app',
	"SELECT count(*) FROM ddl_notify.event WHERE id > $before");
my $msgs = q{
	SELECT substring(data from '^message: transactional: 1 prefix: ddl_notify, sz: \d+ content:(.*)$')::jsonb AS m
	FROM pg_logical_slot_peek_changes('td', NULL, NULL)
	WHERE data LIKE 'message: transactional: 1 prefix: ddl_notify,%'};
is( $node->safe_psql(
		'app', qq{
SELECT count(*), count(e.id),
       count(*) FILTER (WHERE (m->'v') = '1' AND m - 'v' - 'table' = to_jsonb(e) || jsonb_build_object('details',
         CASE WHEN e.details ?| '{before,after,changes,statement}'
              THEN nullif(e.details - '{before,after,changes,statement}'::text[], '{}')
              ELSE e.details END)),
       count(*) FILTER (WHERE m->'details' ?| '{before,after,changes,statement}'),
       count(*) FILTER (WHERE e.details ?| '{before,after,changes}') > 0
FROM ($msgs) x LEFT JOIN ddl_notify.event e ON e.id = (m->>'id')::bigint}),
	"$events|$events|$events|0|t",
	"G15: one message per recorded event ($events), each \"v\": 1 and to_jsonb() of its event row, "
	  . 'the relation images and the statement key of its details left out (0.1.0 had none)');

is( $node->safe_psql(
		'app', qq{
SELECT string_agg(
  concat_ws(' ', m->>'trigger_event', m->>'command_tag', m->>'object_type', m->>'object_identity',
    CASE WHEN m ? 'table' THEN
      concat((m->'table'->>'schema') || '.' || (m->'table'->>'name'), ' ',
        (SELECT string_agg(concat_ws(':', c->>'position', c->>'name', coalesce(c->>'type', 'NULL'),
                                     CASE WHEN (c->'not_null')::bool THEN 'not null' END,
                                     CASE WHEN (c->'dropped')::bool THEN 'dropped' END), ', ')
         FROM jsonb_array_elements(m->'table'->'columns') c),
        ' identity ', m->'table'->>'replica_identity', ' ', m->'table'->'identity_columns')
    END,
    CASE WHEN m->>'trigger_event' = 'sql_drop' THEN m->'details'->'address_names' END),
  E'\n' ORDER BY (m->>'id')::bigint)
FROM ($msgs) x WHERE (m->>'id')::bigint > $before
  -- the NOT NULL constraints catalogued from 18 on (sql/003_not_null.sql)
  AND NOT (m->>'object_type' = 'table constraint' AND m->>'object_identity' LIKE '%\\_not\\_null on %')}),
	q{ddl_command_end CREATE SCHEMA schema s1
ddl_command_end CREATE TABLE table s1.p s1.p 1:id:integer:not null, 2:a:character varying(5):not null, 3:b:numeric(4,1) identity default ["id"]
ddl_command_end CREATE INDEX index s1.p_pkey
sql_drop ALTER TABLE table column s1.p.a ["s1", "p", "a"]
ddl_command_end ALTER TABLE table s1.p s1.p 1:id:integer:not null, 2:........pg.dropped.2........:NULL:dropped, 3:b:numeric(4,1) identity default ["id"]
table_rewrite ALTER TABLE table s1.p s1.p 1:id:integer:not null, 2:........pg.dropped.2........:NULL:dropped, 3:b:bigint identity default ["id"]
ddl_command_end ALTER TABLE table s1.p s1.p 1:id:integer:not null, 2:........pg.dropped.2........:NULL:dropped, 3:b:bigint identity default ["id"]
ddl_command_end ALTER TABLE table s1.p s1.p 1:id:integer:not null, 2:........pg.dropped.2........:NULL:dropped, 3:b:bigint identity full ["id", "b"]
ddl_command_end CREATE INDEX index s1.p_b
ddl_command_end ALTER TABLE table s1.p s1.p 1:id:integer:not null, 2:........pg.dropped.2........:NULL:dropped, 3:b:bigint:not null identity index ["b"]
ddl_command_end ALTER TABLE table s1.q s1.q 1:id:integer:not null, 2:........pg.dropped.2........:NULL:dropped, 3:b:bigint:not null identity index ["b"]
ddl_command_end CREATE SCHEMA schema s2
ddl_command_end ALTER TABLE table s2.q s2.q 1:id:integer:not null, 2:........pg.dropped.2........:NULL:dropped, 3:b:bigint:not null identity index ["b"]
ddl_command_end CREATE TABLE AS table s1.c s1.c 1:x:integer, 2:Y:text identity default []
ddl_command_end CREATE VIEW view s1.v
ddl_command_end COMMENT table s1.c
sql_drop DROP TABLE table s2.q ["s2", "q"]
sql_drop DROP TABLE table constraint p_pkey on s2.q ["s2", "q", "p_pkey"]
sql_drop DROP TABLE index s2.p_pkey ["s2", "p_pkey"]
sql_drop DROP TABLE index s2.p_b ["s2", "p_b"]},
	'G15: table DDL carries the columns after the command and the replica identity; drops their identity');
td_summary('td');
po_summary();
td_summary('tp');

# --- version 2, the default -------------------------------------------------

($rc, $out, $err) = $node->psql('app',
	"LOAD 'ddl_notify'; SET ROLE plain; SET ddl_notify.wal_message_version = 2");
like($err, qr/permission denied to set parameter "ddl_notify.wal_message_version"/,
	'G15: setting ddl_notify.wal_message_version needs a superuser');
$node->safe_psql('app', 'ALTER DATABASE app RESET ddl_notify.wal_message_version');
is($node->safe_psql('app', "LOAD 'ddl_notify'; SHOW ddl_notify.wal_message_version"), '2',
	'G15: ddl_notify.wal_message_version is 2 by default');
$before = $node->safe_psql('app', 'SELECT coalesce(max(id), 0) FROM ddl_notify.event');
$node->safe_psql(
	'app', q{
CREATE TABLE s1.two (id int PRIMARY KEY, a text);
ALTER TABLE s1.two ADD COLUMN b int, ALTER COLUMN a SET NOT NULL;
ALTER TABLE s1.two RENAME TO three;
CREATE VIEW s1.v2 AS SELECT id FROM s1.three;
DROP TABLE s1.three CASCADE;
});
$events = $node->safe_psql('app',
	"SELECT count(*) FROM ddl_notify.event WHERE id > $before");
cmp_ok($events, '>=', 8, "G15 version 2: the DDL was recorded ($events events)");
is( $node->safe_psql(
		'app', qq{
SELECT count(*), count(e.id),
       count(*) FILTER (WHERE (m->'v') = '2' AND m - 'v' = to_jsonb(e)),
       count(*) FILTER (WHERE m ? 'table')
FROM ($msgs) x LEFT JOIN ddl_notify.event e ON e.id = (m->>'id')::bigint
WHERE (m->>'id')::bigint > $before}),
	"$events|$events|$events|0",
	"G15 version 2: one message per event ($events), each \"v\": 2 and exactly to_jsonb() of its row, no \"table\"");
td_summary('td');
po_summary();
td_summary('tp');

# --- off again, in one session ----------------------------------------------

$node->safe_psql('app',
	'SET ddl_notify.wal_messages = off; ALTER TABLE public.t ADD COLUMN quiet int; '
	  . 'INSERT INTO public.t (id) VALUES (13)');
check('G15 SET ddl_notify.wal_messages = off: no message in that session',
	"BEGIN\nINSERT public.t id=13 v=NULL w=NULL x=NULL y=NULL quiet=NULL\nCOMMIT");

$node->stop;
done_testing();
