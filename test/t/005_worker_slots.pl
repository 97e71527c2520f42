
# Copyright (c) 2026, the ddl_notify authors

# 005_worker_slots.pl: more databases than worker slots.
#
# G9, G14: with ddl_notify.max_workers = 1 and two databases that have the
#     extension, the second one waits while the only worker is busy inside a
#     handler in the first, and says so (delivery_status(), the status
#     view's "delivery" column, worker_pool(), "no free worker slot" in the
#     server log); its events stay pending, not lost.  Once the first
#     database's handler returns, its worker, idle with a database waiting,
#     gives the slot up at once (its idle timeout here is 10 minutes) and the
#     second database gets a worker by itself; its events are delivered
#     exactly once.  Then the first database, after a new DDL, gets the slot
#     back in turn.
# G9 (issue 14): the first database gets the only slot even though the
#     launcher is probing "postgres" and the new database with it when
#     CREATE EXTENSION commits: a probe that found no extension before that
#     commit must not leave the database without a worker.  Caught: a
#     launcher that lets a probe's "no extension" verdict win over the
#     CREATE EXTENSION that committed while the probe ran (the old
#     DDLN_DB_NO_EXTENSION state): db1 never got a worker, 1 run in 6.
#     Caught too: an idle worker that keeps its slot while another database
#     waits (db2 would wait for the idle timeout, 10 minutes).
# G14: fairness: while db1's worker has a backlog of 500 events (10 ms each,
#     one per batch), a DDL in db2 is delivered before that backlog is done:
#     db1's worker gives its slot up after its time slice (1 s) and db1
#     queues again behind db2.  Caught: a worker that keeps its slot while
#     it has work (db2 waits for the whole backlog).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $key = DdlNotifyTest::LOCK_KEY;
my $node =
  DdlNotifyTest::new_node('slots', conf => "ddl_notify.max_workers = 1\n");
my $log_offset = -s $node->logfile;

$node->safe_psql('postgres', 'CREATE DATABASE db1');
DdlNotifyTest::setup_db($node, 'db1');
DdlNotifyTest::setup_subscriber($node, 'db1', 's', unique => 1, park => 1);
my $w1 = DdlNotifyTest::wait_worker($node, 'db1');
isnt($w1, '', 'G9: the first database gets the only worker slot');
is($node->safe_psql('db1', 'SELECT ddl_notify.delivery_status()'),
	"automatic: worker pid $w1", 'G9: db1 says it is served by its worker');

# db1's worker parks inside a handler: it holds the only slot
my $locker = $node->background_psql('db1');
$locker->query_safe("SELECT pg_advisory_lock($key)");
my @db1 = DdlNotifyTest::create_tables($node, 'db1', 'busy', 1, 1, park => 1);
ok(DdlNotifyTest::wait_worker_blocked($node, 'db1'),
	'G14: db1\'s worker is busy inside a handler');

$node->safe_psql('postgres', 'CREATE DATABASE db2');
DdlNotifyTest::setup_db($node, 'db2');
DdlNotifyTest::setup_subscriber($node, 'db2', 's', unique => 1);
my @waiting = DdlNotifyTest::create_tables($node, 'db2', 'waiting', 1, 3);

ok( $node->poll_query_until(
		'db2',
		"SELECT ddl_notify.delivery_status() LIKE 'waiting for a worker slot since %'"),
	'G14: the second database says it waits for a worker slot, and since when');
like(
	$node->safe_psql('db2',
		"SELECT delivery FROM ddl_notify.subscriber_status WHERE name = 's'"),
	qr/^waiting for a worker slot/,
	'G14: ... in the status view too');
is( $node->safe_psql(
		'db2',
		"SELECT state || ':' || (since <= now()) || ':' || (pid IS NULL) "
		  . "FROM ddl_notify.worker_pool() WHERE database = 'db2'"),
	'queued:true:true',
	'G14: worker_pool() lists db2 as queued, with no pid');
is( $node->safe_psql(
		'db2',
		"SELECT state || ':' || pid FROM ddl_notify.worker_pool() WHERE database = 'db1'"),
	"delivering:$w1",
	'G14: worker_pool() lists db1\'s worker as delivering');
ok($node->wait_for_log(qr/no free worker slot/, $log_offset),
	'G14: the server log says "no free worker slot"');
is(DdlNotifyTest::worker_pid($node, 'db2'), '', 'G14: db2 has no worker');
is($node->safe_psql('db2',
		"SELECT pending FROM ddl_notify.subscriber_status WHERE name = 's'"),
	'3', 'G14: db2\'s events are pending, not lost');
is(DdlNotifyTest::worker_pid($node, 'db1'),
	$w1, 'G14: db1 keeps its worker meanwhile');

# the handler returns: db1's worker is idle, db2 waits: the slot changes hands
$locker->query_safe("SELECT pg_advisory_unlock($key)");
is(DdlNotifyTest::wait_for_delivery($node, 'db1'),
	't', 'G14: db1\'s parked event is delivered');
ok(DdlNotifyTest::wait_no_worker($node, 'db1'),
	'G14: db1\'s idle worker gives the slot up while db2 waits');
my $w2 = DdlNotifyTest::wait_worker($node, 'db2');
isnt($w2, '', 'G14: the freed slot goes to db2 by itself');
is(DdlNotifyTest::wait_for_delivery($node, 'db2'),
	't', 'G14: db2\'s waiting events are delivered');
DdlNotifyTest::check_exactly_once($node, 'db2', 's', \@waiting,
	'G14 after the slot was freed');
DdlNotifyTest::check_exactly_once($node, 'db1', 's', \@db1,
	'G14 the busy database');
is($node->safe_psql('db2', 'SELECT ddl_notify.delivery_status()'),
	"automatic: worker pid $w2", 'G14: db2 now says it is served by its worker');

# and the other way round: a DDL in db1 takes the slot from idle db2
my @back = DdlNotifyTest::create_tables($node, 'db1', 'back', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'db1'),
	't', 'G14: db1 gets the slot back from db2\'s idle worker');
DdlNotifyTest::check_exactly_once($node, 'db1', 's', [ @db1, @back ],
	'G14 the slot back');
is( $node->safe_psql(
		'db1',
		"SELECT count(DISTINCT pid) FILTER (WHERE pid = $w1) FROM public.log_s "
		  . "WHERE object_identity LIKE 'public.back_%'"),
	'0', 'G14: ... from a new worker (the first one left)');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) <= 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker'"),
	't', 'G14: never more than one worker');

# fairness: a worker with work left gives its slot up after its time slice
# when another database waits; the waiting one is served while the busy one
# still has a backlog (of 5 s at least: 500 handler calls of 10 ms)
$node->safe_psql(
	'postgres', q{
ALTER SYSTEM SET ddl_notify.batch_size = 1;
SELECT pg_reload_conf();
});
$node->safe_psql(
	'db1', q{
CREATE FUNCTION public.h_slow(e ddl_notify.event) RETURNS void
LANGUAGE sql AS 'SELECT pg_sleep(0.01)';
SELECT ddl_notify.subscribe('slow', 'public.h_slow(ddl_notify.event)');
});
DdlNotifyTest::create_tables($node, 'db1', 'backlog', 1, 500, txn => 1);
ok( $node->poll_query_until(
		'db1',
		"SELECT count(*) > 0 FROM ddl_notify.worker_pool() WHERE database = 'db1' AND state = 'delivering'"),
	'G14: db1\'s worker delivers its backlog');
my @fair = DdlNotifyTest::create_tables($node, 'db2', 'fair', 1, 1);
is(DdlNotifyTest::wait_for_delivery($node, 'db2'),
	't', 'G14: db2 is served while db1 has a backlog');
cmp_ok(
	$node->safe_psql('db1',
		"SELECT pending FROM ddl_notify.subscriber_status WHERE name = 'slow'"),
	'>', 0,
	'G14: ... before db1\'s backlog is done: its worker gave up its slot after a time slice');
is(DdlNotifyTest::wait_for_delivery($node, 'db1'),
	't', 'G14: db1 gets the slot back and finishes');
DdlNotifyTest::check_exactly_once($node, 'db2', 's', [ @waiting, @fair ],
	'G14 fairness');

$locker->quit;
$node->stop;
done_testing();
