# Copyright (c) 2026, the ddl_notify authors

# 045_replay_consumer.pl: the consumer of docs/cdc.md (examples/ddl_replay.py)
# stops loudly rather than let the copy diverge (G15; issue 36).
#
# Each case runs DDL in the source, then the consumer up to the current end
# of the WAL, and checks its exit status (3: stopped), its message (the
# event's id, command tag, object and statement; the reason) and that
# nothing of the stopping transaction reached the copy (its progress row
# did not move):
# - a version-1 message (ddl_notify.wal_message_version = 1: no images);
# - an event captured with ddl_notify.capture_changes = off (no images);
# - a copy changed by hand: the verification after the event applied finds
#   the copy's relation different from the event's "after" image, and the
#   stop shows the difference;
# - an event only its statement's text applies (CREATE FUNCTION) whose text
#   is not exact (redaction found a password in the body: "exact": false)
#   in the middle of a transaction: none of the transaction's CREATE TABLEs
#   reach the copy; then the documented resolution: the function made by
#   hand, the consumer run again with --skip-event ID applies the rest of
#   the transaction, records the skip in ddl_replay.skipped and goes on to
#   the end;
# - a statement the copy refuses (a table made there by hand); repaired, the
#   same statement (a serial column: its sequence, the table, OWNED BY)
#   applies;
# - an identity column whose sequence has a name of the source's choosing
#   (SEQUENCE NAME): the copy's sequence takes it, and its options;
# - kinds applied by their statement's text, once per statement id, under
#   the statement's search_path and role: a function made by another role
#   with a search_path of its own (owner and schema match on the copy), a
#   range type, a COMMENT, a GRANT, a table whose default calls the
#   function (typed), CREATE EXTENSION (its script's objects, typed or not,
#   come with its one text: applied once, not twice);
# - CREATE INDEX CONCURRENTLY, CREATE UNIQUE INDEX CONCURRENTLY ... WHERE,
#   DROP INDEX CONCURRENTLY: applied without CONCURRENTLY, which cannot run
#   in the copy's transaction (without_concurrently; before, the copy
#   refused it and the consumer stopped);
# - a text read under the source's DateStyle, TimeZone and
#   standard_conforming_strings (details.statement.settings), and a function
#   whose body names a table made after it (check_function_bodies off);
# - shapes PostgreSQL's regression files have: a partition's own default, a
#   CHECK dropped from a partitioned table (the partitions' copies go with
#   it), a view whose query prints otherwise once made from its printed
#   form (applied by its text), a composite type's attribute dropped and
#   one added CASCADE to its typed table, a domain and a serial column's
#   sequence made as another role (owned by it on the copy too), a domain
#   renamed;
# - a column's STORAGE, COMPRESSION and statistics target, CLUSTER ON and
#   SET WITHOUT CLUSTER, ALTER INDEX ... SET / RESET, ATTACH and DETACH
#   PARTITION: applied typed from the changes (issue 36; before, by the
#   statement's text), verified against "after", the copy's catalogs as the
#   source's; DETACH PARTITION ... CONCURRENTLY by its text;
# - the names of NOT NULL constraints (17: domains, 18: columns) given,
#   kept through renames, taken by LIKE and PARTITION OF, renamed, given by
#   ADD CONSTRAINT, and set again by a partitioned table's ALTER COLUMN
#   TYPE: the copy's are the source's;
# - the drop of a prefix operator (its address has one argument type):
#   checked gone by regoperator;
# - DETACH PARTITION ... CONCURRENTLY cancelled half-way (no event), then
#   DETACH PARTITION ... FINALIZE: typed from its "detach partition" change;
# - columns merged (INHERITS, a parent's ADD COLUMN a child has, INHERIT):
#   local and inherited on the copy as on the source;
# - a statement whose role does not exist on the copy stops the consumer.
#
# Catches (test/mutations/): replay_no_verify.patch (verify_event finds no
# difference: the hand-changed copy passes silently), replay_commit_each.patch
# (each event committed on its own: half a transaction applied),
# replay_left_out_ignored.patch (an event no apply function takes is
# accepted: capture_changes = off passes silently), replay_any_version.patch (the
# format version is not checked: the version-1 event is "applied" as
# nothing), replay_concurrently_kept.patch (a statement applied by its text
# keeps CONCURRENTLY: the copy refuses it), replay_text_settings_ignored.patch
# (the source's settings are not set for a text: the copy's date default is
# January 2nd and the verification stops the consumer), replay_no_storage.patch (the
# consumer leaves "set storage" out: the verification of the copy against
# "after" stops it), images_no_column_storage.patch (no "storage" in the
# images: the typed SET STORAGE is never run), replay_not_null_names_kept.patch
# (the consumer leaves the copy's NOT NULL names as PostgreSQL gave them:
# on 17 and later the verification stops it).

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $python = -x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3';
my $example = 'examples/ddl_replay.py';

my $node = PostgreSQL::Test::Cluster->new('consumer');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', "max_wal_senders = 4\nmax_replication_slots = 4\nfsync = off\n");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->safe_psql(
	'src', q{
SET client_min_messages = warning;
CREATE EXTENSION ddl_notify;
ALTER DATABASE src SET ddl_notify.wal_messages = on;
CREATE PUBLICATION replay_pub;
SELECT pg_create_logical_replication_slot('replay', 'pgoutput');
});

# consume(EXTRA_ARGS...): the consumer up to the current end of the WAL;
# returns (exit status, stderr).
sub consume
{
	my @extra = @_;
	my $end = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			$python, $example,
			'--source', $node->connstr('src'),
			'--target', $node->connstr('dst'),
			'--slot', 'replay', '--publication', 'replay_pub',
			'--end-lsn', $end, '--timeout', $PostgreSQL::Test::Utils::timeout_default, @extra
		],
		'<', \undef, '>', \$out, '2>', \$err);
	note $err;
	return ($? >> 8, $err);
}

sub progress
{
	return $node->safe_psql('dst', q{SELECT coalesce((SELECT end_lsn::text FROM ddl_replay.progress WHERE slot = 'replay'), 'none')});
}

sub on_copy
{
	my ($rel) = @_;
	return $node->safe_psql('dst', "SELECT to_regclass('$rel') IS NOT NULL");
}

sub event_id
{
	my ($where) = @_;
	return $node->safe_psql('src', "SELECT max(id) FROM ddl_notify.event WHERE $where");
}

# the stop message: the event, its statement, the reason
sub stopped_at
{
	my ($name, $rc, $err, $id, $tag, $object, $reason) = @_;
	is($rc, 3, "$name: the consumer stops (exit status 3)");
	like($err, qr/^ddl_replay\.py: stopped at event $id \(ddl_command_end \Q$tag\E \Q$object\E\)$/m,
		"$name: the message names event $id, $tag, $object");
	like($err, qr/^  reason: .*$reason/m, "$name: the reason: $reason");
	like($err, qr/^  source statement: /m, "$name: the statement is shown");
	like($err, qr/--skip-event $id\b/, "$name: how to resume is shown");
}

# a start: a table replayed, the copy's progress recorded
$node->safe_psql('src', 'CREATE TABLE t (id int PRIMARY KEY, v text)');
my ($rc, $err) = consume();
is($rc, 0, 'a plain CREATE TABLE is applied');
is(on_copy('public.t'), 't', 'the copy has the table');
my $lsn = progress();
isnt($lsn, 'none', 'the copy recorded its progress');

# 1. a version-1 message
$node->safe_psql('src', q{ALTER DATABASE src SET ddl_notify.wal_message_version = 1});
$node->safe_psql('src', 'CREATE TABLE v1 (a int)');
$node->safe_psql('src', q{ALTER DATABASE src RESET ddl_notify.wal_message_version});
my $id = event_id(q{object_identity = 'public.v1'});
($rc, $err) = consume();
stopped_at('version 1', $rc, $err, $id, 'CREATE TABLE', 'public.v1', 'message format version 1');
is(on_copy('public.v1'), 'f', 'version 1: nothing applied');
is(progress(), $lsn, 'version 1: the progress did not move');
($rc, $err) = consume('--skip-event', $id);
is($rc, 0, 'version 1: --skip-event goes past it');
$node->safe_psql('dst', 'CREATE TABLE v1 (a int)');    # the hand repair
$lsn = progress();

# 2. capture_changes = off: an ALTER without images
$node->safe_psql('src', q{SET ddl_notify.capture_changes = off; ALTER TABLE t ADD COLUMN w int});
$id = event_id(q{object_identity = 'public.t' AND command_tag = 'ALTER TABLE'});
($rc, $err) = consume();
stopped_at('capture_changes = off', $rc, $err, $id, 'ALTER TABLE', 'public.t', 'no relation image');
is($node->safe_psql('dst', q{SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.t'::regclass AND attname = 'w'}),
	'0', 'capture_changes = off: nothing applied');
is(progress(), $lsn, 'capture_changes = off: the progress did not move');
$node->safe_psql('dst', 'ALTER TABLE t ADD COLUMN w int');
($rc, $err) = consume('--skip-event', $id);
is($rc, 0, 'capture_changes = off: resumed with --skip-event after the hand repair');
$lsn = progress();

# 3. a copy changed by hand
$node->safe_psql('dst', 'ALTER TABLE t ADD COLUMN by_hand int');
$node->safe_psql('src', 'ALTER TABLE t ADD COLUMN x text');
$id = event_id(q{object_identity = 'public.t' AND command_tag = 'ALTER TABLE'});
($rc, $err) = consume();
stopped_at('copy changed by hand', $rc, $err, $id, 'ALTER TABLE', 'public.t', 'does not match the event\'s "after" image');
like($err, qr/^    columns: source \(id, v, w, x\), copy \(id, v, w, by_hand, x\)$/m,
	'copy changed by hand: the difference is shown');
like($err, qr/^  statement applied: ALTER TABLE "public"\."t" ADD COLUMN "x" text$/m,
	'copy changed by hand: the statement applied last is shown');
is($node->safe_psql('dst', q{SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.t'::regclass AND attname = 'x'}),
	'0', 'copy changed by hand: the ALTER was rolled back');
is(progress(), $lsn, 'copy changed by hand: the progress did not move');
$node->safe_psql('dst', 'ALTER TABLE t DROP COLUMN by_hand');
($rc, $err) = consume();
is($rc, 0, 'copy changed by hand: once repaired, the same event applies and verifies');
is($node->safe_psql('dst', q{SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.t'::regclass AND attname = 'x'}),
	'1', 'copy changed by hand: the column is there now');
$lsn = progress();

# 4. an event only its statement's text applies, whose text is not exact
# (redacted), inside a transaction
$node->safe_psql(
	'src', q{
BEGIN;
CREATE TABLE a (x int);
CREATE FUNCTION f(int) RETURNS int LANGUAGE plpgsql
AS $$ DECLARE password text; BEGIN password := 'hunter2'; RETURN $1 + 1; END $$;
CREATE TABLE b (y int DEFAULT public.f(1));
COMMIT;
});
$id = event_id(q{command_tag = 'CREATE FUNCTION'});
($rc, $err) = consume();
stopped_at('CREATE FUNCTION', $rc, $err, $id, 'CREATE FUNCTION', 'public.f(integer)', 'no exact text to apply');
unlike($err, qr/hunter2/, 'CREATE FUNCTION: the secret is in no message');
is(on_copy('public.a'), 'f', 'CREATE FUNCTION: the table created before it in its transaction is not on the copy');
is(progress(), $lsn, 'CREATE FUNCTION: the progress did not move');
($rc, $err) = consume();
is($rc, 3, 'CREATE FUNCTION: run again, it stops at the same event');
$node->safe_psql('dst', q{CREATE FUNCTION f(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1'});    # the hand repair
($rc, $err) = consume('--skip-event', $id);
is($rc, 0, 'CREATE FUNCTION: resumed with --skip-event after the hand repair');
is(on_copy('public.a') . on_copy('public.b'), 'tt', 'CREATE FUNCTION: the rest of the transaction is applied');
is( $node->safe_psql('dst', q{SELECT event_id, command_tag, object_identity FROM ddl_replay.skipped WHERE slot = 'replay' ORDER BY event_id DESC LIMIT 1}),
	"$id|CREATE FUNCTION|public.f(integer)", 'CREATE FUNCTION: the skip is recorded in the copy');
isnt(progress(), $lsn, 'CREATE FUNCTION: the progress moved on');
$lsn = progress();

# 5. a statement the copy refuses (a table made there by hand), then the
# same statement applied once the copy is repaired: a serial column, whose
# sequence comes before its table, with its OWNED BY after it
$node->safe_psql('dst', 'CREATE TABLE s (by_hand int)');
$node->safe_psql('src', 'CREATE TABLE s (id serial PRIMARY KEY)');
$id = event_id(q{object_identity = 'public.s' AND command_tag = 'CREATE TABLE'});
($rc, $err) = consume();
stopped_at('refused', $rc, $err, $id, 'CREATE TABLE', 'public.s', 'the copy refused a statement: ERROR:  relation "s" already exists');
like($err, qr/^  statement applied: CREATE TABLE "public"\."s" /m, 'refused: the statement is shown');
is(on_copy('public.s_id_seq'), 'f', 'refused: nothing applied (the sequence made before the table is rolled back)');
is(progress(), $lsn, 'refused: the progress did not move');
$node->safe_psql('dst', 'DROP TABLE s');
($rc, $err) = consume();
is($rc, 0, 'serial: once repaired, the sequence, the table and OWNED BY apply and verify');
is( $node->safe_psql(
		'dst', q{SELECT pg_get_serial_sequence('public.s', 'id'), pg_get_expr(adbin, adrelid)
			FROM pg_attrdef WHERE adrelid = 'public.s'::regclass}),
	q{public.s_id_seq|nextval('s_id_seq'::regclass)}, 'serial: the copy has the sequence, owned by the column it feeds');

# 6. an identity column whose sequence the source named itself: the copy's,
# named by PostgreSQL, takes that name and the sequence's options
$node->safe_psql('src',
	'CREATE TABLE idn (id int GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME idn_numbers START WITH 100 INCREMENT BY 10))');
($rc, $err) = consume();
is($rc, 0, 'identity with SEQUENCE NAME: applied and verified') or diag $err;
is( $node->safe_psql('dst', q{SELECT pg_get_serial_sequence('public.idn', 'id'), seqstart, seqincrement
			FROM pg_sequence WHERE seqrelid = 'public.idn_numbers'::regclass}),
	'public.idn_numbers|100|10', 'identity with SEQUENCE NAME: the copy\'s sequence has the source\'s name and options');

$lsn = progress();

# 7. kinds applied by their statement's text: once per statement, as its
# role, under its search_path
$node->safe_psql('postgres', 'CREATE ROLE replay_owner');
$node->safe_psql(
	'src', q{
CREATE SCHEMA lib AUTHORIZATION replay_owner;
GRANT CREATE ON SCHEMA public TO replay_owner;
BEGIN;
SET LOCAL ROLE replay_owner;
SET LOCAL search_path = lib;
CREATE FUNCTION twice(int) RETURNS int LANGUAGE sql AS 'SELECT $1 * 2';
CREATE TYPE span AS RANGE (subtype = int4);
COMMENT ON FUNCTION twice(int) IS 'doubles';
CREATE TABLE public.uses (n int DEFAULT lib.twice(2), r lib.span);
GRANT SELECT ON public.uses TO PUBLIC;
COMMIT;
CREATE EXTENSION citext SCHEMA lib;
});
($rc, $err) = consume();
is($rc, 0, 'text-applied kinds: applied and verified') or diag $err;
is( $node->safe_psql(
		'dst', q{SELECT p.oid::regprocedure, pg_get_userbyid(p.proowner), obj_description(p.oid, 'pg_proc'),
			to_regtype('lib.span') IS NOT NULL, has_table_privilege('public', 'public.uses', 'SELECT'),
			pg_get_userbyid(c.relowner)
			FROM pg_proc p, pg_class c WHERE p.proname = 'twice' AND c.oid = 'public.uses'::regclass}),
	'lib.twice(integer)|replay_owner|doubles|t|t|replay_owner',
	'text-applied kinds: the function in the search_path\'s schema, owned by the statement\'s role, its comment, the range type, the grant');
is( $node->safe_psql('dst', q{SELECT extnamespace::regnamespace, count(*) FROM pg_extension e
			JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e' WHERE extname = 'citext' GROUP BY 1}),
	$node->safe_psql('src', q{SELECT extnamespace::regnamespace, count(*) FROM pg_extension e
			JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e' WHERE extname = 'citext' GROUP BY 1}),
	'CREATE EXTENSION: applied once, its members as on the source');
$lsn = progress();

# 7b. CONCURRENTLY, which cannot run in the copy's transaction: the
# statement is applied without it
$node->safe_psql('src', q{CREATE INDEX CONCURRENTLY uses_n ON public.uses (n)});
$node->safe_psql('src', q{CREATE UNIQUE INDEX CONCURRENTLY uses_n_u ON public.uses (n) WHERE n > 0});
$node->safe_psql('src', q{DROP INDEX CONCURRENTLY public.uses_n});
($rc, $err) = consume();
is($rc, 0, 'CONCURRENTLY: applied and verified') or diag $err;
is( $node->safe_psql('dst', q{SELECT string_agg(pg_get_indexdef(indexrelid), '; ') FROM pg_index
			WHERE indrelid = 'public.uses'::regclass}),
	$node->safe_psql('src', q{SELECT string_agg(pg_get_indexdef(indexrelid), '; ') FROM pg_index
			WHERE indrelid = 'public.uses'::regclass}),
	'CONCURRENTLY: the copy has the source\'s indexes');
$lsn = progress();

# 7c. texts read under the source's settings (details.statement.settings):
# ALTER TABLE ONLY goes by its text, and '01-02-2016' is February 1st under
# DateStyle DMY, a timestamp without offset is in the source's TimeZone, a
# backslash is itself only with standard_conforming_strings on; a function
# whose body names a table its transaction makes later (check_function_bodies
# off on the copy, as pg_dump's restores)
$node->safe_psql('src', q{CREATE TABLE public.dated (d date, ts timestamptz, s text)});
# (PostgreSQL 19 has standard_conforming_strings on only: there the
# backslash is written once)
my $scs_off = $node->safe_psql('src', 'SHOW server_version_num') < 190000;
$node->safe_psql(
	'src', q{
SET datestyle = 'Postgres, DMY';
SET timezone = 'Asia/Tokyo';
}
	  . ($scs_off ? q{SET standard_conforming_strings = off; SET escape_string_warning = off;} : '') . q{
ALTER TABLE ONLY public.dated ALTER COLUMN d SET DEFAULT '01-02-2016',
	ALTER COLUMN ts SET DEFAULT '2016-02-01 09:00', ALTER COLUMN s SET DEFAULT }
	  . ($scs_off ? q{'a\\\\b'} : q{'a\\b'}));
$node->safe_psql(
	'src', q{
BEGIN;
SET LOCAL check_function_bodies = off;
CREATE FUNCTION public.later_n() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM public.later';
CREATE TABLE public.later (n int);
COMMIT;
});
($rc, $err) = consume();
is($rc, 0, 'settings: applied and verified') or diag $err;
is( $node->safe_psql('dst', q{SET timezone = 'UTC'; SELECT string_agg(pg_get_expr(adbin, adrelid), ' | ' ORDER BY adnum)
			FROM pg_attrdef WHERE adrelid = 'public.dated'::regclass}),
	q{'2016-02-01'::date | '2016-02-01 00:00:00+00'::timestamp with time zone | 'a\b'::text},
	'settings: the copy\'s defaults mean what the source\'s do');
$lsn = progress();

# 7d. what PostgreSQL's regression files met: a partition's own default
# and NOT NULL (PARTITION OF t (b DEFAULT 1)); a CHECK dropped from a
# partitioned table, whose partitions' inherited copies go with it (their
# own drop is refused); a view whose printed query prints otherwise once
# made again from it (BETWEEN): made from its text; a composite type's
# attribute dropped
$node->safe_psql(
	'src', q{
CREATE TABLE public.parted (a text, b int NOT NULL DEFAULT 0, CONSTRAINT check_b CHECK (b >= 0)) PARTITION BY LIST (a);
CREATE TABLE public.part_b PARTITION OF public.parted (b NOT NULL DEFAULT 1) FOR VALUES IN ('b');
ALTER TABLE public.parted DROP CONSTRAINT check_b;
CREATE VIEW public.between_v AS SELECT b FROM public.parted WHERE b BETWEEN 1 AND 2 AND a IS NOT NULL;
CREATE TYPE public.comptype AS (r int, i int);
ALTER TYPE public.comptype DROP ATTRIBUTE i;
CREATE TABLE public.typed OF public.comptype;
ALTER TYPE public.comptype ADD ATTRIBUTE j int CASCADE;
SET ROLE replay_owner;
CREATE DOMAIN lib.posint AS int CHECK (VALUE > 0);
CREATE TABLE lib.owned (id serial);
RESET ROLE;
CREATE DOMAIN public.renamed_dom AS text;
ALTER DOMAIN public.renamed_dom RENAME TO renamed_dom2;
});
($rc, $err) = consume();
is($rc, 0, 'regression shapes: applied and verified') or diag $err;
is( $node->safe_psql('dst', q{SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'public.part_b'::regclass}),
	'1', 'regression shapes: the partition\'s own default');
is( $node->safe_psql('dst', q{SELECT count(*) FROM pg_constraint WHERE conname = 'check_b'}),
	'0', 'regression shapes: the partitioned table\'s CHECK gone with its partitions\' copies');
is( $node->safe_psql('dst', q{SELECT pg_get_viewdef('public.between_v')}),
	$node->safe_psql('src', q{SELECT pg_get_viewdef('public.between_v')}),
	'regression shapes: the view prints as the source\'s');
is( $node->safe_psql('dst', q{SELECT string_agg(a.attname, ',' ORDER BY attnum) FROM pg_attribute a
			WHERE attrelid = 'public.typed'::regclass AND attnum > 0 AND NOT attisdropped}),
	'r,j', 'regression shapes: a typed table follows its type\'s ADD ATTRIBUTE ... CASCADE');
is( $node->safe_psql('dst', q{SELECT pg_get_userbyid(t.typowner), pg_get_userbyid(c.relowner)
			FROM pg_type t, pg_class c WHERE t.oid = 'lib.posint'::regtype AND c.oid = 'lib.owned_id_seq'::regclass}),
	'replay_owner|replay_owner', 'regression shapes: a domain and a serial column\'s sequence owned by the statement\'s role');
is($node->safe_psql('dst', q{SELECT to_regtype('public.renamed_dom2') IS NOT NULL AND to_regtype('public.renamed_dom') IS NULL}),
	't', 'regression shapes: a domain renamed (by its text: the image says only where it is now)');

# 7e. a column's STORAGE, COMPRESSION and statistics target, CLUSTER ON,
# an index's storage parameters, ATTACH and DETACH PARTITION: typed (one
# statement per change, names quoted as the consumer quotes them), each
# verified against the event's "after" image; DETACH ... CONCURRENTLY (no
# images) by its text, without CONCURRENTLY
$node->safe_psql(
	'src', q{
CREATE TABLE sto (id int PRIMARY KEY, t text, b bytea COMPRESSION pglz, n numeric);
ALTER TABLE sto ALTER COLUMN t SET STORAGE main, ALTER COLUMN n SET STATISTICS 300;
ALTER TABLE sto ALTER COLUMN b SET COMPRESSION default, ALTER COLUMN t SET COMPRESSION pglz,
	ALTER COLUMN id SET STATISTICS 50;
ALTER TABLE sto ALTER COLUMN id SET STATISTICS -1;
CREATE INDEX sto_n ON sto (n);
ALTER TABLE sto CLUSTER ON sto_n;
ALTER INDEX sto_n SET (fillfactor = 70);
CREATE TABLE sto_cl (id int PRIMARY KEY);
ALTER TABLE sto_cl CLUSTER ON sto_cl_pkey;
ALTER TABLE sto_cl SET WITHOUT CLUSTER;
ALTER INDEX sto_cl_pkey SET (fillfactor = 80);
ALTER INDEX sto_cl_pkey RESET (fillfactor);
CREATE TABLE pm (k int, v text) PARTITION BY RANGE (k);
CREATE INDEX pm_v ON pm (v);
CREATE TABLE pm1 (k int, v text);
CREATE TABLE pm2 PARTITION OF pm FOR VALUES FROM (100) TO (200);
CREATE TABLE pm3 PARTITION OF pm FOR VALUES FROM (200) TO (300);
ALTER TABLE pm ATTACH PARTITION pm1 FOR VALUES FROM (0) TO (100);
ALTER TABLE pm DETACH PARTITION pm2;
});
$node->safe_psql('src', q{ALTER TABLE pm DETACH PARTITION pm3 CONCURRENTLY});
($rc, $err) = consume('--verbose');
is($rc, 0, 'storage, cluster, index options, partitions: applied and verified') or diag $err;
foreach my $typed (
	'ALTER TABLE "public"."sto" ALTER COLUMN "t" SET STORAGE MAIN',
	'ALTER TABLE "public"."sto" ALTER COLUMN "b" SET COMPRESSION pglz',
	'ALTER TABLE "public"."sto" ALTER COLUMN "t" SET COMPRESSION pglz',
	'ALTER TABLE "public"."sto" ALTER COLUMN "b" SET COMPRESSION default',
	'ALTER TABLE "public"."sto" ALTER COLUMN "n" SET STATISTICS 300',
	'ALTER TABLE "public"."sto" ALTER COLUMN "id" SET STATISTICS -1',
	'ALTER TABLE "public"."sto" CLUSTER ON "sto_n"',
	'ALTER TABLE "public"."sto_cl" SET WITHOUT CLUSTER',
	q{ALTER INDEX "public"."sto_n" SET (fillfactor = '70')},
	'ALTER INDEX "public"."sto_cl_pkey" RESET (fillfactor)',
	'ALTER TABLE "public"."pm" ATTACH PARTITION "public"."pm1" FOR VALUES FROM (0) TO (100)',
	'ALTER TABLE "public"."pm" DETACH PARTITION "public"."pm2"',
	)
{
	like($err, qr/^  \Q$typed\E$/m, "typed: $typed");
}
like($err, qr/^  ALTER TABLE pm DETACH PARTITION pm3\s*$/m, 'by its text: DETACH ... CONCURRENTLY, without it');
my $storage_sql = q{
SELECT string_agg(format('%s.%s:%s:%s:%s', c.relname, a.attname, a.attstorage, a.attcompression,
		coalesce(a.attstattarget, -1)), ' ' ORDER BY c.relname, a.attnum)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname IN ('sto', 'sto_cl', 'pm', 'pm1', 'pm2', 'pm3') AND a.attnum > 0 AND NOT a.attisdropped};
is($node->safe_psql('dst', $storage_sql), $node->safe_psql('src', $storage_sql),
	'the copy\'s columns have the source\'s storage, compression and statistics targets');
my $index_sql = q{
SELECT string_agg(format('%s:%s:%s', c.relname, i.indisclustered, c.reloptions), ' ' ORDER BY c.relname)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid::regclass::text IN ('sto', 'sto_cl', 'pm', 'pm1', 'pm2', 'pm3')};
is($node->safe_psql('dst', $index_sql), $node->safe_psql('src', $index_sql),
	'the copy\'s indexes are clustered and have storage parameters as the source\'s');
my $part_sql = q{
SELECT string_agg(format('%s:%s:%s', c.relname, i.inhparent::regclass, pg_get_expr(c.relpartbound, c.oid)),
		' ' ORDER BY c.relname)
FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
WHERE c.relname IN ('pm1', 'pm2', 'pm3')};
is($node->safe_psql('dst', $part_sql), $node->safe_psql('src', $part_sql),
	'the copy\'s partitions are attached and detached as the source\'s');
$lsn = progress();

# 7f. the names of NOT NULL constraints (a domain's from 17 on, a
# column's from 18 on): given by CONSTRAINT, kept through a rename, taken
# from another table by LIKE or PARTITION OF, set again by a partitioned
# table's ALTER COLUMN TYPE to the type it has; the copy's names are the
# source's (the images carry the names that are not the default ones, and
# the verification compares them)
$node->safe_psql(
	'src', q{
CREATE TABLE nn (a int NOT NULL, b int CONSTRAINT nn_b_given NOT NULL, c int);
ALTER TABLE nn RENAME TO nn2;
ALTER TABLE nn2 ALTER COLUMN c SET NOT NULL;
CREATE TABLE nn_like (LIKE nn2);
CREATE TABLE nnp (k int NOT NULL, f bigint NOT NULL, v int) PARTITION BY LIST (k);
CREATE TABLE nnp1 PARTITION OF nnp FOR VALUES IN (1);
CREATE TABLE nnp2 PARTITION OF nnp (k CONSTRAINT nnp2_own NOT NULL) FOR VALUES IN (2);
CREATE TABLE nnp3 (k int NOT NULL, f bigint, v int);
ALTER TABLE nnp3 ALTER COLUMN f SET NOT NULL;
ALTER TABLE nnp ATTACH PARTITION nnp3 FOR VALUES IN (3);
ALTER TABLE nnp ALTER COLUMN f TYPE bigint;
CREATE DOMAIN nnd AS int CONSTRAINT nnd_given NOT NULL;
CREATE DOMAIN nnd2 AS int NOT NULL;
ALTER DOMAIN nnd2 RENAME TO nnd3;
});
# (18 on: a column's NOT NULL has a name to rename or to give by ADD
# CONSTRAINT, which the change "set not null" does not carry; and
# NO INHERIT and NOT VALID ones, a VIRTUAL generated column, a partition's
# own generation expression)
$node->safe_psql('src', q{
ALTER TABLE nn2 RENAME CONSTRAINT nn_b_given TO nn_b_given2;
ALTER TABLE nn2 ADD COLUMN d int;
ALTER TABLE nn2 ADD CONSTRAINT nn_d_given NOT NULL d;
ALTER TABLE nn2 ADD COLUMN e int;
ALTER TABLE nn2 ADD CONSTRAINT nn_e_nv NOT NULL e NOT VALID;
CREATE TABLE nni (a int, NOT NULL a NO INHERIT);
CREATE TABLE nni_c (CONSTRAINT nni_c_own NOT NULL a NO INHERIT) INHERITS (nni);
CREATE TABLE gv (a int, v int GENERATED ALWAYS AS (a * 3) VIRTUAL, s int GENERATED ALWAYS AS (a * 4) STORED);
CREATE TABLE gp (a int, b int GENERATED ALWAYS AS (a * 2) STORED) PARTITION BY LIST (a);
CREATE TABLE gp1 PARTITION OF gp (b WITH OPTIONS GENERATED ALWAYS AS (a * 22) STORED) FOR VALUES IN (1);
}) if $node->pg_version >= 18;
($rc, $err) = consume('--verbose');
is($rc, 0, 'NOT NULL names: applied and verified') or diag $err;
my $nn_sql = q{
SELECT string_agg(format('%s.%s:%s', c.relname, a.attname,
		coalesce((SELECT conname || CASE WHEN connoinherit THEN '/noinherit' ELSE '' END
						|| CASE WHEN convalidated THEN '' ELSE '/notvalid' END
				  FROM pg_constraint WHERE conrelid = c.oid AND contype = 'n'
				  AND conkey[1] = a.attnum), '-')), ' ' ORDER BY c.relname, a.attnum)
	   || ' ' || (SELECT string_agg(format('%s:%s', t.typname, n.conname), ' ' ORDER BY t.typname)
				  FROM pg_type t LEFT JOIN pg_constraint n ON n.contypid = t.oid AND n.contype = 'n'
				  WHERE t.typname IN ('nnd', 'nnd3'))
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname IN ('nn2', 'nn_like', 'nnp', 'nnp1', 'nnp2', 'nnp3', 'nni', 'nni_c') AND a.attnum > 0
  AND NOT a.attisdropped AND a.attnotnull};
is($node->safe_psql('dst', $nn_sql), $node->safe_psql('src', $nn_sql),
	'the copy\'s NOT NULL columns and their constraints\' names are the source\'s');
note 'NOT NULL names: ' . $node->safe_psql('src', $nn_sql);
my $gen_sql = q{
SELECT string_agg(format('%s.%s:%s:%s', c.relname, a.attname, a.attgenerated, pg_get_expr(d.adbin, d.adrelid)),
		' ' ORDER BY c.relname, a.attnum)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relname IN ('gv', 'gp', 'gp1') AND a.attgenerated <> ''};
is($node->safe_psql('dst', $gen_sql), $node->safe_psql('src', $gen_sql),
	'the copy\'s generated columns are of the source\'s kinds, with its expressions');
# 7g. the drop of a prefix operator: its address has one argument type, and
# pg_get_object_address wants two, so the consumer asks regoperator whether
# it is gone (before, it could not tell, and stopped: privileges.sql)
$node->safe_psql('src', q{CREATE OPERATOR public.!!! (FUNCTION = int4um, RIGHTARG = int4)});
($rc, $err) = consume();
is($rc, 0, 'prefix operator: created') or diag $err;
is($node->safe_psql('dst', q{SELECT to_regoperator('public.!!!(NONE,int4)') IS NOT NULL}),
	't', 'prefix operator: the copy has it');
$node->safe_psql('src', q{DROP OPERATOR public.!!! (NONE, int4)});
($rc, $err) = consume();
is($rc, 0, 'prefix operator: its drop applied and checked') or diag $err;
is($node->safe_psql('dst', q{SELECT to_regoperator('public.!!!(NONE,int4)') IS NULL}),
	't', 'prefix operator: gone from the copy');
$lsn = progress();

# 7h. DETACH PARTITION ... CONCURRENTLY cancelled half-way (its first
# transaction committed the partition as pending detach; it fires no event),
# then DETACH PARTITION ... FINALIZE: one event, the partitioned table's, whose
# changes say "detach partition" with the partition's name; applied typed and
# verified, the copy's partition detached as the source's
$node->safe_psql('src', q{
CREATE TABLE fin (k int) PARTITION BY RANGE (k);
CREATE TABLE fin1 PARTITION OF fin FOR VALUES FROM (0) TO (10);
});
($rc, $err) = consume();
is($rc, 0, 'DETACH FINALIZE: the partitioned table made') or diag $err;
my $fin_first = $node->safe_psql('src', q{SELECT coalesce(max(id), 0) FROM ddl_notify.event});
my $snapshot = $node->background_psql('src');
$snapshot->query_safe(q{BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM fin});
my ($fin_ret, $fin_out, $fin_err) = $node->psql('src', q{
SET statement_timeout = '500ms';
ALTER TABLE fin DETACH PARTITION fin1 CONCURRENTLY;
});
like($fin_err, qr/canceling statement due to statement timeout/,
	'DETACH CONCURRENTLY: cancelled while it waits for an older snapshot');
$snapshot->query_safe('COMMIT');
$snapshot->quit;
is($node->safe_psql('src', q{SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = 'fin1'::regclass}),
	't', 'DETACH CONCURRENTLY: the partition is pending detach on the source');
is($node->safe_psql('src', qq{SELECT count(*) FROM ddl_notify.event WHERE id > $fin_first}),
	'0', 'DETACH CONCURRENTLY cancelled: no event');
$node->safe_psql('src', q{ALTER TABLE fin DETACH PARTITION fin1 FINALIZE});
is($node->safe_psql('src', qq{
SELECT string_agg(format('%s %s %s %s', command_tag, object_identity,
		details->'subcommands'->0->>'kind', details->'changes'), '; ' ORDER BY id)
FROM ddl_notify.event WHERE id > $fin_first}),
	'ALTER TABLE public.fin DETACH PARTITION FINALIZE '
	  . '[{"op": "detach partition", "partition": {"name": "fin1", "schema": "public"}}]',
	'DETACH FINALIZE: one event, the partitioned table\'s, whose changes detach the partition');
is($node->safe_psql('src', qq{
SELECT format('%s %s', details->'before'->>'kind', details->'after'->>'kind')
FROM ddl_notify.event WHERE id > $fin_first}),
	'partitioned table partitioned table', 'DETACH FINALIZE: the event has the table\'s images before and after');
($rc, $err) = consume('--verbose');
is($rc, 0, 'DETACH FINALIZE: applied and verified') or diag $err;
like($err, qr/^  ALTER TABLE "public"."fin" DETACH PARTITION "public"."fin1"$/m,
	'DETACH FINALIZE: typed, from the changes');
is($node->safe_psql('dst', q{SELECT count(*) FROM pg_inherits WHERE inhrelid = 'fin1'::regclass}),
	'0', 'DETACH FINALIZE: the copy\'s partition is detached');
$lsn = progress();

# 7i. columns merged: CREATE TABLE ... INHERITS with a column the parent
# has, ALTER TABLE parent ADD COLUMN of a column a child has (the child's
# column stays its own, now inherited too: its image, which says
# "inherited" only of a column the child does not have of its own, does not
# change), ALTER TABLE ... INHERIT of a table with the parent's columns; the
# copy's columns local and inherited as the source's
$node->safe_psql('src', q{
CREATE TABLE mp (a int);
CREATE TABLE mc (a int NOT NULL, b text) INHERITS (mp);
CREATE TABLE mc2 (a int, b text, c int);
ALTER TABLE mp ADD COLUMN b text;
ALTER TABLE mc2 INHERIT mp;
ALTER TABLE mp ADD COLUMN c int;
});
($rc, $err) = consume();
is($rc, 0, 'merged columns: applied and verified') or diag $err;
my $merged_sql = q{
SELECT string_agg(format('%s.%s:%s:%s:%s', c.relname, a.attname, a.attislocal, a.attinhcount, a.attnotnull),
		' ' ORDER BY c.relname, a.attnum)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname IN ('mp', 'mc', 'mc2') AND a.attnum > 0 AND NOT a.attisdropped};
is($node->safe_psql('dst', $merged_sql), $node->safe_psql('src', $merged_sql),
	'merged columns: the copy\'s are local and inherited as the source\'s');
like($node->safe_psql('src', $merged_sql), qr/mc\.b:t:1:f .*mc2\.c:t:1:f/,
	'merged columns: the children\'s own columns, inherited too, on the source');
$lsn = progress();

# 8. a statement whose role the copy does not have (roles are not
# replicated); the hand repair would be to create it
$node->safe_psql('postgres', 'CREATE ROLE replay_gone');
$node->safe_psql('src', q{GRANT CREATE ON SCHEMA lib TO replay_gone});
($rc, $err) = consume();
is($rc, 0, 'role missing: the GRANT to it first') or diag $err;
$lsn = progress();
$node->safe_psql('src', q{SET ROLE replay_gone; CREATE FUNCTION lib.g() RETURNS int LANGUAGE sql AS 'SELECT 1'});
$id = event_id(q{command_tag = 'CREATE FUNCTION' AND object_identity = 'lib.g()'});
# the copy is a database of the same cluster here: the role is renamed away
$node->safe_psql('postgres', 'ALTER ROLE replay_gone RENAME TO replay_gone_x');
($rc, $err) = consume();
stopped_at('role missing', $rc, $err, $id, 'CREATE FUNCTION', 'lib.g()', 'role "replay_gone", whose statement this is, does not exist on the copy');
is(progress(), $lsn, 'role missing: the progress did not move');

$node->stop;
done_testing();
