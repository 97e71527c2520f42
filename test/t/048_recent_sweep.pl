
# Copyright (c) 2026, the ddl_notify authors

# 048_recent_sweep.pl: the worker's sweep of rows nobody needs walks the
# queue from the position floor; it scans the whole queue at most once a
# minute.
#
# G11 (cost), G4  Issue 38: the sweep used to scan the whole queue (event's
#     heap for the rows nobody needs, all of event_xid for transactions
#     without a position) after every round with nothing to deliver and at
#     least once a second while delivering, so behind an old snapshot, which
#     keeps every delivered row version, each second cost more (66% of the
#     worker's CPU after two minutes at 1,000 events/s,
#     test/bench/snapshot_hold.sh).  Now the worker's sweep at those times
#     is the recent one (deliver.c DdlnSweepRecent, fetch.c DdlnSweepWalk):
#     commit_order from the floor, each transaction's events by xid, the
#     rows found deleted by ctid once tested again under their row locks;
#     the full scans run at most once a minute (worker.c).
#     Here: an event subscriber "b" never handled (its handler fails)
#     becomes garbage when "b" unsubscribes while a session holds the
#     event's row lock (unsubscribe()'s own purge skips locked rows), with
#     a REPEATABLE READ snapshot held meanwhile.  The worker, busy with more
#     DDL (or the round unsubscribe() wakes it for), must delete it well
#     before its next full sweep is due, and its
#     statements (auto_explain, nested statements) must show the recent
#     sweep's delete and no full scan of the queue after the first round.
#     An event still pending for "a" (its handler closed by the gate) is
#     never deleted by the sweep (G4).
#     Catches: the worker sweeping with DdlnPurge() every time (the code
#     before: the full-scan statement shows up in the worker's log); a
#     recent sweep that finds nothing (the garbage event stays past the
#     30 s this test waits, well short of the minute to the full sweep).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('recent_sweep',
	conf => "shared_preload_libraries = 'ddl_notify,auto_explain'\n"
	  . "auto_explain.log_min_duration = 0\n"
	  . "auto_explain.log_nested_statements = on\n");
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'a');
DdlNotifyTest::setup_subscriber($node, $db, 'b');
$node->safe_psql($db, "CREATE TABLE public.t ()");
is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'the first DDL is delivered');
my $worker = DdlNotifyTest::wait_worker($node, $db);
ok($worker ne '', "the database's worker runs");
my $offset = -s $node->logfile;

# an old snapshot, held to the end
my $holder = $node->background_psql($db);
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM ddl_notify.subscriber');

# "b" fails on every event, so its bit stays clear: the event is pending
# for "b" only once "a" has handled it
$node->safe_psql($db, "INSERT INTO public.gate VALUES ('b', false)");
$node->safe_psql($db, "COMMENT ON TABLE public.t IS 'garbage'");
my $garbage = $node->safe_psql($db,
	"SELECT id FROM ddl_notify.event WHERE object_identity = 'public.t' ORDER BY id DESC LIMIT 1");
ok($garbage =~ /^\d+$/, 'the event is in the queue');
ok( $node->poll_query_until(
		$db, "SELECT count(*) = 1 FROM public.log_a WHERE event_id = $garbage"),
	'"a" handled it');

# unsubscribe "b" while the event's row is locked: its purge skips it
my $locker = $node->background_psql($db);
$locker->query_safe('BEGIN');
$locker->query_safe("SELECT 1 FROM ddl_notify.event WHERE id = $garbage FOR UPDATE");
$node->safe_psql($db, "SELECT ddl_notify.unsubscribe('b')");
$locker->query_safe('ROLLBACK');
$locker->quit;
# (the wake-up after unsubscribe() may have swept it already: not tested)

# one event pending for "a": the gate closes it
$node->safe_psql($db, "INSERT INTO public.gate VALUES ('a', false)");
$node->safe_psql($db, "COMMENT ON TABLE public.t IS 'pending'");
my $pending = $node->safe_psql($db,
	"SELECT max(id) FROM ddl_notify.event WHERE object_identity = 'public.t'");
ok($pending > $garbage, 'a pending event is in the queue');

# DDL keeps the worker busy until the garbage is gone, for at most 30 s
# (the worker's full sweep is due a minute after its first)
my $deadline = time() + 30;
my $gone = 0;
while (time() < $deadline)
{
	$node->safe_psql($db, "CREATE TABLE public.u (); DROP TABLE public.u");
	$gone = $node->safe_psql($db,
		"SELECT count(*) = 0 FROM ddl_notify.event WHERE id = $garbage") eq 't';
	last if $gone;
}
ok($gone, 'the worker swept the event nobody needs within 30 s, while busy');
is($node->safe_psql($db, "SELECT count(*) FROM ddl_notify.event WHERE id = $pending"),
	'1', 'G4: the event pending for "a" is still there');
$node->safe_psql($db, "UPDATE public.gate SET open = true WHERE sub = 'a'");
ok( $node->poll_query_until(
		$db, "SELECT count(*) = 1 FROM public.log_a WHERE event_id = $pending"),
	'G4: and it is delivered once the gate opens');
$holder->query_safe('COMMIT');
$holder->quit;
is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'everything is delivered');

# the worker's statements since the first round
my $log = slurp_file($node->logfile, $offset);
my @worker_lines = grep { /\[$worker\]/ } split /\n(?=\S)/, $log;
my $worker_log = join("\n", @worker_lines);
like($worker_log, qr/WHERE e2\.ctid OPERATOR\(pg_catalog\.=\) ANY \(\$1\)/,
	"the worker's recent sweep deleted by ctid");
unlike($worker_log, qr/EXCEPT SELECT o\.xid FROM ddl_notify\.commit_order/,
	'G11: the worker did not scan the whole queue after its first round');
is( $node->safe_psql($db, 'SELECT count(*) FROM ddl_notify.event'),
	'0', 'the queue is empty at the end');

$node->stop;
done_testing();
