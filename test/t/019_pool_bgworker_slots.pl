
# Copyright (c) 2026, the ddl_notify authors

# 019_pool_bgworker_slots.pl: the pool when the server has no background
# worker slot left (found unreached by test/tools/coverage.sh).
#
# G14, G9: a delivery worker is a dynamic background worker, so the pool
#     never takes more than the server's free slots (docs/operations.md, worker.c's
#     header): with max_worker_processes = 2 (the launcher and one more) and
#     the one worker busy inside a handler in db1, a commit in db2 finds a
#     free pool slot but no server slot.  db2 stays queued, the log says "no
#     free background worker slot", its events stay pending; once db1's
#     worker leaves, db2 gets a worker by itself (the launcher tries again)
#     and its events are delivered exactly once.
#     Caught (checked): a failed worker registration taken as a started
#     worker (worker.c, DdlnLauncherSchedule without its DDLN_NO_BGWORKER
#     branch): the launcher never knew db2 waited for a server slot (no such
#     log line; the test stops there).
# Synchronisation: the park lock (DdlNotifyTest), poll_query_until,
# wait_for_log, wait_for_delivery.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $key = DdlNotifyTest::LOCK_KEY;
# nothing else may take the second slot: no logical replication launcher,
# no parallel workers; a worker leaves as soon as a round finds nothing
my $node = DdlNotifyTest::new_node(
	'bgw',
	conf => q{
max_worker_processes = 2
max_logical_replication_workers = 0
max_parallel_workers = 0
ddl_notify.max_workers = 4
ddl_notify.worker_idle_timeout = 0
});
my $log_offset = -s $node->logfile;

$node->safe_psql('postgres', 'CREATE DATABASE db1');
DdlNotifyTest::setup_db($node, 'db1');
DdlNotifyTest::setup_subscriber($node, 'db1', 's', unique => 1, park => 1);
$node->safe_psql('postgres', 'CREATE DATABASE db2');
DdlNotifyTest::setup_db($node, 'db2');
DdlNotifyTest::setup_subscriber($node, 'db2', 's', unique => 1);
is(DdlNotifyTest::wait_for_delivery($node, 'db1'), 't', 'db1 is set up');
is(DdlNotifyTest::wait_for_delivery($node, 'db2'), 't', 'db2 is set up');

# db1's worker parks inside a handler: it holds the server's only free slot
my $locker = $node->background_psql('db1');
$locker->query_safe("SELECT pg_advisory_lock($key)");
my @db1 = DdlNotifyTest::create_tables($node, 'db1', 'busy', 1, 1, park => 1);
ok(DdlNotifyTest::wait_worker_blocked($node, 'db1'),
	'db1\'s worker is busy inside a handler');
my $w1 = DdlNotifyTest::worker_pid($node, 'db1');

my @waiting = DdlNotifyTest::create_tables($node, 'db2', 'waiting', 1, 3);
ok($node->wait_for_log(qr/no free background worker slot; delivery waits in 1 database/, $log_offset),
	'G14: the launcher finds no background worker slot for db2, and says so');
is(DdlNotifyTest::worker_pid($node, 'db2'), '', 'G14: db2 has no worker');
is($node->safe_psql('db2',
		"SELECT pending FROM ddl_notify.subscriber_status WHERE name = 's'"),
	'3', 'G9: db2\'s events are pending, not lost');
is(DdlNotifyTest::worker_pid($node, 'db1'),
	$w1, 'db1 keeps its worker meanwhile');

# the handler returns: db1's worker leaves, and the server slot goes to db2
$locker->query_safe("SELECT pg_advisory_unlock($key)");
$locker->quit;
is(DdlNotifyTest::wait_for_delivery($node, 'db1'),
	't', 'db1\'s parked event is delivered');
is(DdlNotifyTest::wait_for_delivery($node, 'db2'),
	't', 'G14: db2 gets a worker by itself once a server slot is free');
DdlNotifyTest::check_exactly_once($node, 'db2', 's', \@waiting,
	'G14 after a server slot was freed');
DdlNotifyTest::check_exactly_once($node, 'db1', 's', \@db1,
	'the busy database');

$node->stop;
done_testing();
