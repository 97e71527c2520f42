
# Copyright (c) 2026, the ddl_notify authors

# 056_sweep_pieces.pl: the worker's full sweep is done in pieces of a
# bounded number of heap blocks, over several rounds.
#
# G11, G14 (cost, pool)  Issue 38 part 2: the worker's full sweep (once a
#     minute: whole-queue scans, which read every row version an old
#     snapshot keeps, about 1 ms per MB of heap) ran in one go at a round's
#     end, and events committed meanwhile waited for its end.  Now a cycle
#     walks commit_order's heap, then event's, DDLN_SWEEP_PIECE_BLOCKS (256)
#     blocks a piece, one piece a round (deliver.c DdlnSweepPiece).
#     Here: a queue heap of more than two pieces, with garbage (events of an
#     unsubscribed subscriber, their positions gone, so that only the full
#     sweep finds them) in every part of it.  The DEBUG1 lines of the cycle
#     show more than one piece of event's heap and the cycle's end; no
#     garbage is left.
#     Catches: a cycle that ends after its first piece (mutation
#     sweep_cycle_ends_after_first_piece: garbage past the first piece
#     stays, one piece in the log).
# G4  The heal in pieces: an event whose transaction has no commit
#     position (its commit_order row deleted by hand) is given one by the
#     cycle and delivered exactly once; a transaction prepared when the
#     cycle began and committed between its phase A (commit_order, its row
#     not yet visible) and phase B (event, its event visible then) is never
#     given a second position.  The worker is held between the phases
#     deterministically: a session holds event IN SHARE MODE, which no
#     lock of phase A conflicts with and phase B's first DELETE waits for;
#     the worker's first round after a restart is held (a prepared LOCK of
#     subscriber) until that session has it.
#     Catches: the heal judging a transaction not older than phase A's
#     horizon and trusting phase A's set without looking again (mutation
#     sweep_heal_young_xid: two commit_order rows for the prepared one);
#     a cycle that heals nothing (the event stays undelivered).
# G14 (pool)  Deliveries go on between the pieces: the prepared DDL,
#     committed while the worker is held at the first piece of event's heap
#     (COMMIT PREPARED takes no lock on it), is handled by subscriber "c"
#     (not locked) before the DEBUG1 line of the cycle's end: the log's
#     time against the handler's clock_timestamp().
#     Catches: a worker that runs the whole cycle in one round, or waits
#     between pieces for something other than a round (the handler's time
#     would be after the cycle's end).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('sweep_pieces',
	conf => "autovacuum = off\n"
	  . "log_min_messages = debug1\n"
	  . "ddl_notify.lock_timeout = '10min'\n"
	  . "max_prepared_transactions = 4\n");
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'a', unique => 1);
DdlNotifyTest::setup_subscriber($node, $db, 'b');
DdlNotifyTest::setup_subscriber($node, $db, 'c', unique => 1);
$node->safe_psql($db,
	"ALTER TABLE public.log_c ADD COLUMN at timestamptz NOT NULL DEFAULT clock_timestamp()");
$node->safe_psql($db,
	"INSERT INTO public.gate VALUES ('b', false); CREATE TABLE public.t (id int)");

# events pending for "b" only, all over a heap of more than two pieces
my $n = 12000;
DdlNotifyTest::comment_transactions($node, $db, $n);
ok( $node->poll_query_until(
		$db,
		"SELECT (SELECT count(*) FROM public.log_a WHERE command_tag = 'COMMENT') = $n "
		  . "AND (SELECT count(*) FROM public.log_c WHERE command_tag = 'COMMENT') = $n"),
	"\"a\" and \"c\" handled the $n comments");
my $blocks = $node->safe_psql($db, "SELECT pg_relation_size('ddl_notify.event') / 8192");
note("event's heap: $blocks blocks");
cmp_ok($blocks, '>', 2 * 256, 'the queue heap is more than two pieces');

# a piece's scans are TID range scans, whatever the plan is made for
for my $rel ('event', 'commit_order')
{
	like(
		$node->safe_psql(
			$db, qq{SET plan_cache_mode = force_generic_plan;
PREPARE p(tid, tid) AS SELECT x.xid FROM ddl_notify.$rel x
  WHERE x.ctid OPERATOR(pg_catalog.>=) \$1 AND x.ctid OPERATOR(pg_catalog.<) \$2;
EXPLAIN (COSTS OFF) EXECUTE p('(0,0)', '(256,0)')}),
		qr/Tid Range Scan on $rel/,
		"G11: a piece of the heap of $rel is read by a TID range scan");
}

# "b" goes while a session locks its events (unsubscribe() skips them), a
# DDL for "a" waits (its subscriber locked), then every position goes
my $locker = $node->background_psql($db);
$locker->query_safe(
	"BEGIN; SELECT count(*) FROM (SELECT 1 FROM ddl_notify.event FOR UPDATE) s; "
	  . "SELECT 1 FROM ddl_notify.subscriber WHERE name IN ('a', 'c') FOR UPDATE");
$node->safe_psql($db, "SELECT ddl_notify.unsubscribe('b')");
my @healme = DdlNotifyTest::create_tables($node, $db, 'healme', 1, 1);
$node->safe_psql($db, "DELETE FROM ddl_notify.commit_order");
$locker->query_safe("COMMIT");
$locker->quit;
my $garbage = "FROM ddl_notify.event WHERE command_tag = 'COMMENT'";
my ($first, $last) = split /\|/, $node->safe_psql($db,
	"SELECT min((ctid::text::point)[0]), max((ctid::text::point)[0]) $garbage");
note("garbage from block $first to block $last");
cmp_ok($last, '>=', 2 * 256, 'garbage past the second piece');

# a DDL prepared before the cycle; a hold that keeps the worker's first
# round from beginning until the test is ready
$node->safe_psql($db,
	"BEGIN; CREATE TABLE public.prep_1 (id int); PREPARE TRANSACTION 'ddl'");
$node->safe_psql($db,
	"BEGIN; LOCK TABLE ddl_notify.subscriber IN ACCESS EXCLUSIVE MODE; "
	  . "PREPARE TRANSACTION 'hold'");
# an immediate stop: a worker stopped fast would first write its counts
# into the subscriber rows, which the hold keeps it from
my $log_offset = -s $node->logfile;
$node->stop('immediate');
$node->start;

my $sharer = $node->background_psql($db);
$sharer->query_safe("BEGIN; LOCK TABLE ddl_notify.event IN SHARE MODE");
$node->safe_psql($db, "COMMIT PREPARED 'hold'");
ok( $node->poll_query_until(
		$db,
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' "
		  . "AND wait_event_type = 'Lock' "
		  . "AND query LIKE 'ddl_notify worker: sweep of rows nobody needs: ddl_notify.event blocks 0-255 of %'"),
	'G11: the worker\'s cycle is at phase B\'s first piece, and says so');
# the prepared DDL commits between the phases; "a" locked, so that its
# positions can be seen before its delivery deletes them
$node->safe_psql($db, "COMMIT PREPARED 'ddl'");
$locker = $node->background_psql($db);
$locker->query_safe("BEGIN; SELECT 1 FROM ddl_notify.subscriber WHERE name = 'a' FOR UPDATE");
$sharer->query_safe("COMMIT");
$sharer->quit;
ok($node->wait_for_log(qr/full sweep cycle over/, $log_offset), 'the cycle ends');

my $log = slurp_file($node->logfile, $log_offset);
my $pieces = () = $log =~ /full sweep piece: ddl_notify\.event blocks/g;
cmp_ok($pieces, '>=', 3, "G11: the cycle read event's heap in pieces ($pieces)");
# "c" (not locked) got the prepared DDL, committed while the worker was held
# at event's first piece, in the round after that piece, pieces before the end
my ($over_at) = $log =~ /^(\S+ \S+ \S+) [^\n]*?DEBUG:  ddl_notify: full sweep cycle over/m;
is( $node->safe_psql(
		$db,
		"SELECT date_trunc('milliseconds', at) <= '$over_at'::timestamptz "
		  . "FROM public.log_c WHERE object_identity = 'public.prep_1'"),
	't',
	'G14: a DDL committed during the cycle is delivered before the cycle ends');
# what a piece and the round before the next one cost here (the log's times)
my @at;
while ($log =~ /^\S+ (\d+):(\d+):([\d.]+) \S+ [^\n]*?DEBUG:  ddl_notify: full sweep (piece: \S+ blocks \S+|cycle over)/mg)
{
	push @at, [ ($1 * 3600 + $2 * 60 + $3) * 1000, $4 ];
}
note(sprintf("%s: %.1f ms to the next", $at[$_][1], $at[$_ + 1][0] - $at[$_][0]))
  for 0 .. $#at - 1;
is($node->safe_psql($db, "SELECT count(*) $garbage"), '0',
	'G11: no garbage left anywhere in the heap');
is( $node->safe_psql(
		$db,
		"SELECT count(*) FROM (SELECT o.xid FROM ddl_notify.commit_order o "
		  . "GROUP BY o.xid HAVING count(*) > 1) d"),
	'0', 'G4: no transaction has two commit positions');
is( $node->safe_psql(
		$db,
		"SELECT count(*) FROM ddl_notify.event e WHERE NOT EXISTS "
		  . "(SELECT 1 FROM ddl_notify.commit_order o WHERE o.xid = e.xid)"),
	'0', 'G4: every event\'s transaction has a position (healed)');
$locker->query_safe("COMMIT");
$locker->quit;

is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'both DDL are delivered');
DdlNotifyTest::check_exactly_once($node, $db, 'a', [ @healme, 'public.prep_1' ], 'G4 heal');
DdlNotifyTest::check_exactly_once($node, $db, 'c', [ @healme, 'public.prep_1' ], 'G4 heal');

$node->stop;
done_testing();
