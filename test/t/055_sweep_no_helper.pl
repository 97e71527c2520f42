
# Copyright (c) 2026, the ddl_notify authors

# 055_sweep_no_helper.pl: a long sweep of rows nobody needs brings no
# second worker.
#
# G14, G11 (cost)  Issue 38: the launcher starts a helper worker for a
#     database whose workers have all been in one round for 50 ms (500 ms in
#     a worker's first round), to serve the other subscribers of a slow one.
#     The full sweep at a round's end (once a minute; whole-queue scans,
#     which read every row version an old snapshot keeps) counted as round
#     time: behind a snapshot held for minutes it lasted 200 ms and more, a
#     helper came, and the workers' CPU per delivery doubled for the rest of
#     the run (test/bench/snapshot_hold.sh).  Now the engine says when a
#     round's deliveries are over (ddln_round_sweep_hook); the worker's slot
#     says "sweeping" and the launcher sends no help for it.
#     Here: a prepared transaction holds ddl_notify.event in SHARE mode
#     across a restart, so the first round of the database's new worker
#     (a full sweep) waits in the sweep's DELETE for as long as the test
#     likes, with ddl_notify.lock_timeout raised and 2 workers allowed per
#     database.  While it has waited four times the first-round help time,
#     worker_pool() shows that one worker "sweeping" and pg_stat_activity
#     its sweep; no second worker.  Once the lock goes, the sweep ends and a
#     new DDL is delivered exactly once.
#     Catches: the launcher counting a sweeping worker as stuck (mutation
#     pool_sweep_counts_as_round; the code before did the same: a second
#     worker 500 ms into the sweep, in worker_pool() the moment the launcher
#     registers it); a worker that never says it sweeps (no "sweeping").
# G11 (cost)  Issue 38: the full sweep came once a minute however long it
#     took, and behind a snapshot held long enough (about 1 ms per MB of
#     queue heap) it would take most of the worker's time.  Now the next
#     one waits 100 times the last one's duration when that is longer than
#     a minute (at most an hour).  Here the held sweep lasted over 2 s: the
#     worker's DEBUG1 line must put the next one 100 times that later.
#     Catches: the next full sweep a minute later whatever the last one
#     took (mutation worker_full_sweep_not_stretched; the code before).
# G14, G11 (cost)  Issue 38: the commits that came during a long sweep are
#     delivered in the rounds after it, and the first of those lasted more
#     than 50 ms: a helper came (make bench-snapshot, 2026-12-05: a second
#     worker from 570 s of the hold, and the workers' CPU per delivery 1.6-
#     2.2x for the rest of the run).  Now a worker gets no helper for as
#     long again as its last sweep took, from that sweep's end.  Here, right
#     after the held sweep (over 3 s), a DDL whose handler blocks on an
#     advisory lock: once its round has lasted five times the help time,
#     still one worker (checked only while the server's clock is within the
#     sweep's duration of its end, from the log line's time); after that a
#     helper comes, the rule for slow rounds again.
#     Catches: no wait after a sweep (mutation
#     worker_help_after_sweep_ignored; the code before: a second worker
#     50 ms into the round); a wait that never ends (no helper).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('sweep_no_helper',
	conf => "ddl_notify.max_workers = 2\n"
	  . "ddl_notify.max_workers_per_database = 2\n"
	  . "ddl_notify.lock_timeout = '10min'\n"
	  . "max_prepared_transactions = 2\n"
	  . "log_min_messages = debug1\n");
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'a', unique => 1, park => 1);
my $key = DdlNotifyTest::LOCK_KEY;
my @first = DdlNotifyTest::create_tables($node, $db, 'first', 1, 1);
is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'the first DDL is delivered');

# the queue locked against every write, by a transaction that outlives a restart
$node->safe_psql($db,
	"BEGIN; LOCK TABLE ddl_notify.event IN SHARE MODE; PREPARE TRANSACTION 'hold'");
my $offset = -s $node->logfile;
$node->restart;

my $pool = "FROM ddl_notify.worker_pool() WHERE database = '$db'";
ok( $node->poll_query_until(
		$db,
		"SELECT count(*) = 1 FROM pg_stat_activity a JOIN ddl_notify.worker_pool() p USING (pid) "
		  . "WHERE p.database = '$db' AND p.state = 'sweeping' "
		  . "AND a.wait_event_type = 'Lock' "
		  . "AND a.query = 'ddl_notify worker: sweep of rows nobody needs'"),
	'G14: the new worker waits in its first round\'s sweep, and says so');
ok( $node->poll_query_until(
		$db,
		"SELECT bool_and(state = 'sweeping' AND now() - round_started > interval '3 s') $pool"),
	'G14: ... for six times the first-round help time');
# the help time counts from the round's start: a round whose deliveries
# alone (nothing to deliver, cold caches) took most of it may get a helper
# by the rule for slow rounds, which this test does not judge
my $sweep_after_ms = $node->safe_psql($db,
	"SELECT round(extract(epoch FROM a.query_start - p.round_started) * 1000) "
	  . "FROM pg_stat_activity a JOIN ddl_notify.worker_pool() p USING (pid) "
	  . "WHERE p.database = '$db' ORDER BY p.round_started LIMIT 1");
note("the sweep began $sweep_after_ms ms into the first round");
SKIP:
{
	skip "the first round's deliveries took $sweep_after_ms ms (help after 500)", 1
	  if $sweep_after_ms =~ /^\d+$/ && $sweep_after_ms >= 400;
	is($node->safe_psql($db, "SELECT count(*) $pool"),
		'1', 'G14: no second worker for a sweep, however long');
}

# the handler of the next DDL will block on this lock
my $locker = $node->background_psql($db);
$locker->query_safe("SELECT pg_advisory_lock($key)");

$node->safe_psql($db, "COMMIT PREPARED 'hold'");
ok( $node->wait_for_log(
		qr/the full sweep took \d+ ms; the next one in \d+ s/, $offset),
	'the held sweep ends');
my ($ended_at, $took_ms, $next_s) = slurp_file($node->logfile, $offset)
  =~ /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+) .*the full sweep took (\d+) ms; the next one in (\d+) s/m;
note("the held full sweep took $took_ms ms, ended at $ended_at; the next one in $next_s s");
cmp_ok($took_ms, '>=', 3000, 'the full sweep was held over 3 s');
is($next_s, int($took_ms * 100 / 1000),
	'G11: the next full sweep waits 100 times the last one\'s duration');

# a round right after the sweep, stuck in a handler: no helper for as long
# again as the sweep took, then one
my @backlog = DdlNotifyTest::create_tables($node, $db, 'backlog', 1, 1, park => 1);
ok( $node->poll_query_until(
		$db,
		"SELECT count(*) = 1 FROM pg_locks l JOIN ddl_notify.worker_pool() p USING (pid) "
		  . "WHERE p.database = '$db' AND l.locktype = 'advisory' AND l.objid = $key "
		  . "AND NOT l.granted AND now() - p.round_started > interval '250 ms'"),
	'G14: the round after the sweep waits in a handler, for five times the help time');
my ($workers, $in_window) = split /\|/,
  $node->safe_psql($db,
	"SELECT (SELECT count(*) $pool), "
	  . "clock_timestamp() < '$ended_at'::timestamptz + interval '$took_ms ms'");
SKIP:
{
	skip 'this machine took longer than the sweep to get here', 1
	  unless $in_window eq 't';
	is($workers, '1', 'G14: no helper while the commits of a long sweep are delivered');
}
ok($node->poll_query_until($db, "SELECT count(*) = 2 $pool"),
	'G14: a helper once that time has passed and the round still waits');
$locker->query_safe("SELECT pg_advisory_unlock($key)");
$locker->quit;
my @after = DdlNotifyTest::create_tables($node, $db, 'after', 1, 1);
is(DdlNotifyTest::wait_for_delivery($node, $db), 't', 'the sweep ends; a new DDL is delivered');
DdlNotifyTest::check_exactly_once($node, $db, 'a', [ @first, @backlog, @after ], 'G14 sweep');
ok( $node->poll_query_until($db, "SELECT bool_and(state = 'idle') $pool"),
	'G14: the worker is idle afterwards');

$node->stop;
done_testing();
