
# Copyright (c) 2026, the ddl_notify authors

# 014_commit_position_hole: a hole in commit POSITIONS, not event ids.
#
# G4 No holes: a transaction draws its position in commit order at
#    PRE_COMMIT (capture.c, DdlnRecordCommitPosition), before its commit is
#    visible.  Transaction A draws position p and is held before it becomes
#    visible; transaction B draws p' > p, commits and is delivered.  When A
#    becomes visible it must still be delivered, exactly once: no cursor or
#    high-water mark on positions may step over p.
# G5 Commit-consistent order: A was not visible when B began, so B first is
#    the right order; each is handled once.
#
# How A is held, deterministically: synchronous replication waits after the
# commit record is written but before the transaction leaves the proc array
# (becomes visible).  The cluster names a synchronous standby that never
# connects, with synchronous_commit = local as the default; only session A
# sets synchronous_commit = on, so only its commit waits (wait event
# SyncRep).  Setting synchronous_standby_names to '' (ALTER SYSTEM, reload)
# releases it.
#
# Delivery is CALL ddl_notify.deliver() from one session that stays
# connected, so that an in-memory cursor kept by the backend across rounds
# would be seen as well as one kept in the database.
#
# Mutations this test catches (test/mutations/, test/tools/mutate.sh):
# - position_cursor.patch: the engine keeps, per subscriber, the highest
#   commit position it delivered and reads only positions above it: A is
#   never delivered.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('position_hole');
# a sync-rep wait needs max_wal_senders > 0
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
synchronous_standby_names = 'nobody_connects'
synchronous_commit = local
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.log (seq serial PRIMARY KEY, event_id bigint NOT NULL,
	ident text, pos bigint);
CREATE FUNCTION public.h(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.log (event_id, ident, pos)
	VALUES (e.id, e.object_identity,
			(SELECT o.pos FROM ddl_notify.commit_order o WHERE o.xid = e.xid));
END $$;
SELECT ddl_notify.subscribe('sub', 'public.h(ddl_notify.event)');
});

my $deliverer = $node->background_psql('postgres');
sub deliver
{
	$deliverer->query_safe('CALL ddl_notify.deliver()');
	return;
}

my $pos_before = $node->safe_psql('postgres',
	'SELECT last_value FROM ddl_notify.commit_order_pos_seq');

# A: its commit record is written, its position drawn; not visible yet.
my $a = $node->background_psql('postgres');
$a->query_until(qr/committing/, q{
\echo committing
SET synchronous_commit = on;
CREATE TABLE public.a_held ();
});
ok( $node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM pg_stat_activity
WHERE wait_event = 'SyncRep' AND query LIKE '%a_held%'}),
	'A waits for its synchronous standby, after its commit record');
my $pos_a = $node->safe_psql('postgres',
	'SELECT last_value FROM ddl_notify.commit_order_pos_seq');
cmp_ok($pos_a, '>', $pos_before, 'A drew its commit position');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM ddl_notify.event WHERE object_identity = 'public.a_held'"),
	'0', 'A is not visible to others');

# B: later, commits at once, draws a higher position.
$node->safe_psql('postgres', 'CREATE TABLE public.b_later ()');
is( $node->safe_psql('postgres', qq{
SELECT o.pos > $pos_a FROM ddl_notify.commit_order o
WHERE o.xid = (SELECT xid FROM ddl_notify.event WHERE object_identity = 'public.b_later')}),
	't', 'B drew a higher position than A');

deliver();
is($node->safe_psql('postgres', 'SELECT string_agg(ident, \',\' ORDER BY seq) FROM public.log'),
	'public.b_later', 'B is delivered while A is not visible');

# a second round while A is still held: nothing to do, nothing skipped
deliver();
is($node->safe_psql('postgres', 'SELECT count(*) FROM public.log'),
	'1', 'nothing more while A is held');

# A becomes visible.
$node->safe_psql('postgres', q{
ALTER SYSTEM SET synchronous_standby_names = '';
SELECT pg_reload_conf();
});
$a->query('SELECT 1');
$a->quit;
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM ddl_notify.event WHERE object_identity = 'public.a_held'"),
	'1', 'A is visible now, with its lower position');

deliver();
is( $node->safe_psql('postgres',
		'SELECT string_agg(ident || (CASE WHEN pos = ' . $pos_a . ' THEN \'@A\' ELSE \'\' END), \',\' ORDER BY seq) FROM public.log'),
	'public.b_later,public.a_held@A',
	'A is delivered after all, at its own (lower) position');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT event_id) FROM public.log'),
	'0', 'each exactly once');
deliver();
is( $node->safe_psql('postgres', q{
SELECT pending, attempts, delivered FROM ddl_notify.subscriber_status WHERE name = 'sub'}),
	'0|0|2', 'nothing pending, no failure, two delivered');

$deliverer->quit;
$node->stop;
done_testing();
