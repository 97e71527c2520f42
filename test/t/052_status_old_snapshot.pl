
# Copyright (c) 2026, the ddl_notify authors

# 052_status_old_snapshot.pl: subscriber_status behind an old snapshot: its
# cost does not grow with the dead rows the snapshot keeps, and its pending
# counts stay exact.
#
# G11 (cost)  Issue 38: subscriber_status's pending events were counted by a
#     scan of event's heap (every block up to 16 MB, then a sample of 512),
#     which reads every row version an old snapshot keeps.  Now they are
#     counted by the walk of commit_order from the position floor that the
#     fetch uses (fetch.c DdlnStatusWalk; a fresh session starts from the
#     floor the database's worker published).  Here: the blocks one
#     `SELECT * FROM ddl_notify.subscriber_status` reads of event,
#     commit_order and their indexes (pg_stat_get_xact_blocks_fetched) stay
#     about the same when 3,000 more delivered transactions' rows are kept by
#     a held snapshot; the heap scan read every heap block (this test fails
#     with it).
# G7 (what it shows)  With subscriber "a" failing (its gate closed) and "b"
#     delivering, the view's pending, oldest_pending_id and oldest_pending_at
#     for each are what ddl_notify.is_pending() says of the queue, counted
#     (pending_estimated false).
#
# Mutations this test catches (test/mutations/, test/tools/mutate.sh):
# - status_walk_from_zero.patch: the walk starts at position 0, not at the
#   floor: it steps over every commit_order entry the old snapshot keeps.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('status_old_snapshot');
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'a');
DdlNotifyTest::setup_subscriber($node, $db, 'b');
$node->safe_psql($db, "CREATE TABLE public.t ()");
is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'the first DDL is delivered');

# an old snapshot, held to the end
my $holder = $node->background_psql($db);
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM ddl_notify.subscriber');

# G11: 1,000 then 3,000 more delivered transactions' rows kept (dead)
DdlNotifyTest::dead_rows_blocks($node, $db,
	"SELECT sum(pending) FROM ddl_notify.subscriber_status",
	'0', 'nothing pending', 'one reading');

# "a" fails, "b" delivers: 5 transactions of 2 events each
$node->safe_psql($db, "INSERT INTO public.gate VALUES ('a', false)");
my $before = $node->safe_psql($db, "SELECT count(*) FROM public.log_b");
for my $i (1 .. 5)
{
	$node->safe_psql($db,
		"COMMENT ON TABLE public.t IS 'x$i'; COMMENT ON TABLE public.t IS 'y$i'");
}
ok( $node->poll_query_until($db,
		"SELECT count(*) = $before + 10 FROM public.log_b"),
	'"b" handled the 10 events');

my $expected = q{
SELECT s.name, count(e.id), min(e.id), min(e.occurred_at), false
FROM ddl_notify.subscriber s
LEFT JOIN ddl_notify.event e
  ON ddl_notify.is_pending(e.processed, e.xid, s.slot, s.start_snapshot, s.start_xid)
GROUP BY s.name ORDER BY s.name};
my $shown = q{
SELECT name, pending, oldest_pending_id, oldest_pending_at, pending_estimated
FROM ddl_notify.subscriber_status ORDER BY name};
my $want = $node->safe_psql($db, "BEGIN ISOLATION LEVEL REPEATABLE READ; $expected; COMMIT");
like($want, qr/^a\|10\|/, '"a" has the 10 events pending');
like($want, qr/\nb\|0\|\|\|f$/, '"b" has none');
is($node->safe_psql($db,
		"BEGIN ISOLATION LEVEL REPEATABLE READ; $shown; $expected; COMMIT"),
	"$want\n$want", 'the view counts what is_pending() says, oldest included');

$holder->query_safe('COMMIT');
$holder->quit;

$node->stop;
done_testing();
