
# Copyright (c) 2026, the ddl_notify authors

# 049_wait_old_snapshot.pl: wait_for_delivery() behind an old snapshot: its
# cost does not grow with the dead rows the snapshot keeps, and it still
# waits for every event committed before the call, a late commit of a lower
# commit position included.
#
# G11 (cost)  Issue 38: wait_for_delivery() ran, every 10 ms, one statement
#     that read the whole queue (event's heap, with every row version an old
#     snapshot keeps), 12.8 times its baseline time after minutes of a
#     REPEATABLE READ snapshot at 1,000 events/s
#     (test/bench/snapshot_hold.sh).  Now its first look lists the events it
#     waits for by a walk of commit_order from the position floor (fetch.c
#     DdlnWaitCollect; a fresh session starts from the floor the database's
#     worker published in shared memory), and each later look reads only
#     those, by key (DdlnWaitCheck).  Here: the blocks one call reads of
#     event, commit_order and their indexes (pg_stat_get_xact_blocks_fetched)
#     stay about the same when 3,000 more delivered transactions' rows are
#     kept by a held snapshot (24-28 here); the statement it replaced read
#     every block of event's heap (94, then 367: this test failed with it).
# G4  A transaction that drew its commit position, then waits before it
#     becomes visible (synchronous replication, as in
#     014_commit_position_hole.pl), while later transactions commit and are
#     delivered and a wait_for_delivery() of the same session returns: once
#     it is visible, a wait_for_delivery() must wait for its event, which
#     subscriber "a" cannot handle (its gate is closed): false at the
#     timeout, the event still pending; true once the gate opens, the event
#     handled once.
#
# Mutations this test catches (test/mutations/, test/tools/mutate.sh):
# - wait_position_cursor.patch: wait_for_delivery()'s walk starts where the
#   session's previous call ended (a high-water mark on positions): the late
#   commit is never waited for (G4).
# - wait_floor_not_shared.patch: a backend does not take the floor its
#   database's worker published: a fresh session's call walks commit_order
#   from 0, past every entry the old snapshot keeps (G11 cost).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

# a sync-rep wait needs max_wal_senders > 0 (allows_streaming)
my $node = DdlNotifyTest::new_node('wait_old_snapshot',
	allows_streaming => 1,
	conf => "synchronous_standby_names = 'nobody_connects'\n"
	  . "synchronous_commit = local\n");
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'a');
DdlNotifyTest::setup_subscriber($node, $db, 'b');
# A's table is its own: a COMMENT holds its table's lock until visible
$node->safe_psql($db, "CREATE TABLE public.t (); CREATE TABLE public.t_late ()");
is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'the first DDL is delivered');

# an old snapshot, held to the end
my $holder = $node->background_psql($db);
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM ddl_notify.subscriber');

# G11: 1,000 then 3,000 more delivered transactions' rows kept (dead)
DdlNotifyTest::dead_rows_blocks($node, $db,
	"SELECT ddl_notify.wait_for_delivery('60s')",
	't', 'wait_for_delivery() returns true', 'one call');

# G4: A draws its position, then waits before it becomes visible
my $waiter = $node->background_psql($db);
is($waiter->query_safe("SELECT ddl_notify.wait_for_delivery('60s')"),
	't', 'a session waits once');
my $a = $node->background_psql($db);
$a->query_until(qr/committing/, q{
\echo committing
SET synchronous_commit = on;
COMMENT ON TABLE public.t_late IS 'late';
});
ok( $node->poll_query_until($db, q{
SELECT count(*) = 1 FROM pg_stat_activity
WHERE wait_event = 'SyncRep' AND query LIKE '%late%'}),
	'A waits for its synchronous standby, after drawing its position');

# later transactions commit and are delivered; the session waits again
DdlNotifyTest::comment_transactions($node, $db, 20);
is($waiter->query_safe("SELECT ddl_notify.wait_for_delivery('60s')"),
	't', 'the later transactions are delivered while A is not visible');

# "a" cannot handle A's event; A becomes visible
$node->safe_psql($db, "INSERT INTO public.gate VALUES ('a', false)");
$node->safe_psql($db, q{
ALTER SYSTEM SET synchronous_standby_names = '';
SELECT pg_reload_conf();
});
$a->query('SELECT 1');
$a->quit;
my $late = $node->safe_psql($db,
	"SELECT id FROM ddl_notify.event WHERE query LIKE '%''late''%'");
ok($late =~ /^\d+$/, 'A is visible now');
is($waiter->query_safe("SELECT ddl_notify.wait_for_delivery('2s')"),
	'f', 'G4: the session waits for A, with its lower position, until the timeout');
is( $node->safe_psql($db,
		"SELECT count(*) FROM public.log_a WHERE event_id = $late"),
	'0', '"a" did not handle it');
$node->safe_psql($db, "UPDATE public.gate SET open = true WHERE sub = 'a'");
is($waiter->query_safe("SELECT ddl_notify.wait_for_delivery('60s')"),
	't', 'G4: true once "a" handled it');
is( $node->safe_psql($db,
		"SELECT count(*) FROM public.log_a WHERE event_id = $late"),
	'1', 'G4: handled once');
$waiter->quit;
$holder->query_safe('COMMIT');
$holder->quit;

$node->stop;
done_testing();
