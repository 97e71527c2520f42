
# Copyright (c) 2026, the ddl_notify authors

# 025_invisible.pl: what a publication, a logical decoding slot, a crash and
# a database-wide ANALYZE see of ddl_notify.
#
# G0, G7  A publication FOR ALL TABLES (wal_level = logical) does not stop
#     delivery: with two subscribers (so that the engine both updates and
#     deletes event rows) every event is delivered and no subscriber ever
#     failed.  Catches: ddl_notify.event and commit_order without a replica
#     identity (sql/ddl_notify.sql), on which PostgreSQL refuses the engine's
#     UPDATE and DELETE ("does not have a replica identity and publishes
#     deletes").
# G0  A test_decoding slot sees the user's changes but no insert into
#     ddl_notify.event or ddl_notify.commit_order, and nothing of those two
#     tables but updates and deletes (what docs/operations.md "Publications and logical
#     publications" says).  Catches: capture's inserts without
#     HEAP_INSERT_NO_LOGICAL (DdlnInsertUnpublished in src/capture.c).
#     pg_publication_tables lists ddl_notify's tables: shown, as documented.
# G9, G4  Event ids and commit positions drawn by src/counter.c survive an
#     immediate shutdown: after the crash-restart, new ids and positions are
#     higher than every one handed out before, whether the last WAL record
#     of the sequence came before or after a checkpoint, and after a
#     transaction that used more numbers than one record logs ahead.
#     Catches: counter.c not WAL-logging (or logging a value below what it
#     hands out), which would reuse ids after a crash.
# G0  A database-wide ANALYZE by the database's non-superuser owner names
#     none of ddl_notify's relations; by a role that owns neither the
#     database nor them, ddl_notify's relations are skipped with the same
#     warning PostgreSQL gives for every relation that role does not own (the
#     documented difference).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('invisible',
	conf => "wal_level = logical\nmax_replication_slots = 4\nrestart_after_crash = on\n");
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'plain');
DdlNotifyTest::setup_subscriber($node, $db, 'uniq', unique => 1);

# --- publications and decoding ------------------------------------------
$node->safe_psql(
	$db, q{
CREATE TABLE public.userdata (id int PRIMARY KEY, v text);
CREATE PUBLICATION p_all FOR ALL TABLES;
SELECT 'init' FROM pg_create_logical_replication_slot('s_all', 'test_decoding');
});
$node->safe_psql(
	$db, q{
INSERT INTO public.userdata VALUES (1, 'one');
CREATE TABLE public.pub_a (a int);
ALTER TABLE public.pub_a ADD COLUMN b text;
UPDATE public.userdata SET v = 'uno' WHERE id = 1;
BEGIN;
CREATE TABLE public.pub_b (a int);
CREATE INDEX ON public.pub_b (a);
DROP TABLE public.pub_a;
COMMIT;
DELETE FROM public.userdata WHERE id = 1;
});
is(DdlNotifyTest::wait_for_delivery($node, $db),
	't', 'G0 FOR ALL TABLES publication: every event is delivered');
is( $node->safe_psql(
		$db, q{
SELECT string_agg(name || ':' || pending || ':' || attempts || ':' || coalesce(last_error, 'no error'), ' ' ORDER BY name)
FROM ddl_notify.subscriber_status}),
	'plain:0:0:no error uniq:0:0:no error',
	'G0 FOR ALL TABLES publication: no subscriber ever failed');
is( $node->safe_psql(
		$db, q{
SELECT count(*) FROM public.log_uniq WHERE object_identity LIKE 'public.pub\_%'}),
	'5', 'G0 FOR ALL TABLES publication: the handler got the DDL (5 events)');
is( $node->safe_psql(
		$db, q{SELECT count(*) FROM ddl_notify.event}),
	'0', 'G0 FOR ALL TABLES publication: the queue drained');

# what the publication lists: documented in docs/operations.md
is( $node->safe_psql(
		$db, q{
SELECT string_agg(schemaname || '.' || tablename, ',' ORDER BY tablename)
FROM pg_publication_tables WHERE pubname = 'p_all' AND schemaname = 'ddl_notify'}),
	'ddl_notify.commit_order,ddl_notify.ddl_applied,ddl_notify.ddl_apply,ddl_notify.ddl_outbox,ddl_notify.ddl_publication,ddl_notify.dead_letter,ddl_notify.event,ddl_notify.subscriber',
	'pg_publication_tables lists ddl_notify\'s tables (PostgreSQL 15 has no exclusion from FOR ALL TABLES)');

my $changes = $node->safe_psql(
	$db, q{
SELECT string_agg(data, E'\n' ORDER BY ord) FROM (
	SELECT row_number() OVER () AS ord, data
	FROM pg_logical_slot_get_changes('s_all', NULL, NULL, 'include-xids', '0')) c});
note("decoded changes:\n$changes");
like($changes, qr/table public\.userdata: INSERT: id\[integer\]:1 v\[text\]:'one'/,
	'test_decoding sees the user\'s insert');
like($changes, qr/table public\.userdata: DELETE: id\[integer\]:1/,
	'test_decoding sees the user\'s delete');
unlike($changes, qr/table ddl_notify\.(event|commit_order): INSERT/,
	'G0 no insert into ddl_notify.event or commit_order is decoded');
my @ours = grep { /table ddl_notify\.(event|commit_order):/ } split /\n/, $changes;
ok(scalar(@ours) > 0, 'the engine\'s deletes of finished rows are decoded (documented)');
is(join("\n", grep { !/: (UPDATE|DELETE): / } @ours), '',
	'ddl_notify.event and commit_order appear only as UPDATE or DELETE');
is(join("\n", grep { /: DELETE: / && !/: DELETE: (id\[bigint\]:\d+ xid\[xid8\]:'\d+'|pos\[bigint\]:\d+)$/ } @ours),
	'', 'a decoded DELETE carries only the replica identity key (xid, id) or (pos)');
$node->safe_psql($db,
	"SELECT pg_drop_replication_slot('s_all'); DROP PUBLICATION p_all;");

# --- ids and positions across crashes --------------------------------------
# A subscriber that fails keeps every event (and its commit_order row), so
# the ids and positions handed out so far stay visible.
$node->safe_psql($db, q{
INSERT INTO public.gate VALUES ('plain', false);
});

sub highest
{
	return $node->safe_psql(
		$db, q{
SELECT coalesce((SELECT max(id) FROM ddl_notify.event), 0) || ' '
	   || coalesce((SELECT max(pos) FROM ddl_notify.commit_order), 0)});
}

sub crash_and_check
{
	my ($label) = @_;
	my ($id_before, $pos_before) = split / /, highest();
	$node->stop('immediate');
	$node->start;
	DdlNotifyTest::create_tables($node, $db, "after_$label", 1, 1);
	my $row = $node->safe_psql(
		$db, qq{
SELECT e.id, o.pos FROM ddl_notify.event e JOIN ddl_notify.commit_order o USING (xid)
WHERE e.object_identity = 'public.after_${label}_1'});
	my ($id, $pos) = split /\|/, $row;
	ok($id > $id_before,
		"G9 $label: the first event id after the crash ($id) is above every earlier one ($id_before)");
	ok($pos > $pos_before,
		"G9 $label: the first commit position after the crash ($pos) is above every earlier one ($pos_before)");
	return;
}

# 1. many numbers in one transaction (more than one WAL record logs ahead)
DdlNotifyTest::create_tables($node, $db, 'many', 1, 40, txn => 1);
crash_and_check('many');

# 2. a checkpoint, then one DDL: its record is the first after the redo point
$node->safe_psql($db, 'CHECKPOINT');
DdlNotifyTest::create_tables($node, $db, 'ckpt', 1, 1);
crash_and_check('checkpoint');

# 3. a crash right after the previous restart's first number, twice
crash_and_check('again');
is( $node->safe_psql(
		$db, q{SELECT count(*) = count(DISTINCT id) FROM ddl_notify.event}),
	't', 'G4 no event id was handed out twice across the crashes');
$node->safe_psql($db, q{UPDATE public.gate SET open = true WHERE sub = 'plain'});
is(DdlNotifyTest::wait_for_delivery($node, $db),
	't', 'G9 after the crashes, every event is delivered');

# --- database-wide ANALYZE -------------------------------------------------
$node->safe_psql('postgres', q{
CREATE ROLE g0_owner LOGIN;
CREATE ROLE g0_other LOGIN;
CREATE DATABASE g0db OWNER g0_owner;
});
DdlNotifyTest::setup_db($node, 'g0db');
my @ddln_rels = split /\n/, $node->safe_psql(
	'g0db', q{
SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'ddl_notify'::regnamespace ORDER BY 1});
my $ddln_re = join('|', map { quotemeta } @ddln_rels);
my ($ret, $out, $err) = $node->psql('g0db', 'ANALYZE', extra_params => [ '-U', 'g0_owner' ]);
is($ret, 0, 'G0 database-wide ANALYZE by the database owner succeeds');
unlike($err, qr/"($ddln_re)"/,
	'G0 ... and warns about none of ddl_notify\'s relations');
($ret, $out, $err) = $node->psql('g0db', 'ANALYZE', extra_params => [ '-U', 'g0_other' ]);
# The warning's wording: 15 and 16 say 'skipping "x" --- only table or
# database owner can analyze it', 17 on 'permission denied to analyze "x",
# skipping it' (and no longer name toast tables).
my $skipped = sub {
	my $rel = quotemeta shift;
	return qr/skipping "$rel" --- only table or database owner can analyze it|permission denied to analyze "$rel", skipping it/;
};
like($err, $skipped->('event'),
	'documented difference: a role that owns neither the database nor ddl_notify\'s tables is told it skips them');
like($err, $skipped->('gate'),
	'... with the warning it gets without ddl_notify for every relation it does not own');

$node->stop;
done_testing();
