
# Copyright (c) 2026, the ddl_notify authors

# 051_delivered_count_moves.pl: subscriber_status.delivered never goes back
# when the counts kept in shared memory move into the subscriber's row.
#
# G7 (status)  progress.c keeps a subscriber's delivered counts in shared
#     memory and moves them into its row now and then (every 30 s, or with
#     a batch that writes the row anyway: the reset after a failure).  The
#     view adds the row, as its snapshot sees it, and shared memory, as it is
#     when read.  Two ways the sum went down (issue 38: "the sum of
#     delivered read lower than 30 s earlier", with two workers in one
#     database):
#     - a deliverer that took the row's lock after a move committed but
#       before its mover took the counts out of shared memory moved them
#       again (the row counted them twice), then both took them out: the
#       view read too high, then lower.  Now the mover notes its move, with
#       its transaction, before COMMIT (DdlnProgressMoving), and the next
#       holder of the row's lock settles a committed one first
#       (DdlnProgressSettle); no count moves twice.  (Two workers racing
#       for a microsecond window: not made to happen here.)
#     - a reader whose snapshot is older than a move's commit read the row
#       without the move and shared memory without it too.  Now the view
#       puts the last move back for such a reader, and leaves it out for one
#       that sees it in the row before the mover took it out
#       (DdlnProgressAsSeen).  Here: a REPEATABLE READ reader reads
#       delivered, a failure and its reset make the engine move the counts
#       into the row, and the reader's second reading is not lower.
#     Catches: progress_move_not_seen.patch (the view adds shared memory
#     as it is: the second reading is lower).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('delivered_count_moves');
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'a');
$node->safe_psql($db, "CREATE TABLE public.t ()");
for my $i (1 .. 5)
{
	$node->safe_psql($db, "COMMENT ON TABLE public.t IS 'c$i'");
}
is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'delivered');
my $in_row = $node->safe_psql($db,
	"SELECT delivered FROM ddl_notify.subscriber WHERE name = 'a'");
my $before = $node->safe_psql($db,
	"SELECT delivered FROM ddl_notify.subscriber_status WHERE name = 'a'");
cmp_ok($before, '>', $in_row, 'counts are in shared memory, not yet in the row');

# a reader with an old snapshot
my $reader = $node->background_psql($db);
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is( $reader->query_safe(
		"SELECT delivered FROM ddl_notify.subscriber_status WHERE name = 'a'"),
	$before, 'the reader reads the same count');

# a failure, then its reset: that batch moves the counts into the row
$node->safe_psql($db, "INSERT INTO public.gate VALUES ('a', false)");
$node->safe_psql($db, "COMMENT ON TABLE public.t IS 'fails once'");
ok( $node->poll_query_until($db,
		"SELECT attempts > 0 FROM ddl_notify.subscriber_status WHERE name = 'a'"),
	'"a" failed');
$node->safe_psql($db, "UPDATE public.gate SET open = true WHERE sub = 'a'");
ok( $node->poll_query_until($db,
		"SELECT delivered > $before AND attempts = 0 FROM ddl_notify.subscriber_status WHERE name = 'a'"),
	'"a" handled it after all');
cmp_ok(
	$node->safe_psql($db,
		"SELECT delivered FROM ddl_notify.subscriber WHERE name = 'a'"),
	'>', $before, 'the counts moved into the row');

cmp_ok(
	$reader->query_safe(
		"SELECT delivered FROM ddl_notify.subscriber_status WHERE name = 'a'"),
	'>=', $before,
	'the old snapshot\'s reader does not read a lower count after the move');
$reader->query_safe('COMMIT');
is( $reader->query_safe(
		"SELECT delivered FROM ddl_notify.subscriber_status WHERE name = 'a'"),
	$before + 1, 'a new snapshot reads each delivery once');
$reader->quit;

$node->stop;
done_testing();
