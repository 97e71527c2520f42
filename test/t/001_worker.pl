
# Copyright (c) 2026, the ddl_notify authors

# 001_worker.pl: the background worker delivers by itself.
#
# G9: after start, delivery runs in every database that has the extension,
#     with no manual CALL ddl_notify.deliver() and no per-database setting:
#     a "ddl_notify launcher" and one "ddl_notify worker" per database show
#     in pg_stat_activity, wait_for_delivery() returns true and the handler's
#     log has each event exactly once, written by the worker.
# G9: wait_for_delivery() returns false at its timeout while a subscriber's
#     handler always fails; the other subscriber is still served.
# G9: SIGHUP reloads the settings in the running worker (the new
#     ddl_notify.retry_max_delay shows in next_retry_at) without a restart;
#     SIGTERM makes the worker exit cleanly (no crash restart: the launcher
#     keeps its pid) and the launcher starts a new worker that delivers.
# G9: two databases at once both get delivery; a failing subscriber in one
#     does not stop the other.
# G9: DROP EXTENSION makes the database's worker exit; CREATE EXTENSION
#     brings delivery back by itself.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('worker');

ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify launcher'"
	),
	'G9: the launcher runs (backend_type "ddl_notify launcher")');
my $launcher = DdlNotifyTest::launcher_pid($node);

# --- automatic delivery ----------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
DdlNotifyTest::setup_subscriber($node, 'app', 'good', unique => 1);

my $worker = DdlNotifyTest::wait_worker($node, 'app');
isnt($worker, '',
	'G9: a "ddl_notify worker" runs in the database that has the extension');
is( $node->safe_psql('app', 'SELECT ddl_notify.delivery_status()'),
	"automatic: worker pid $worker",
	'G9: delivery_status() names the worker');
is( $node->safe_psql('app',
		"SELECT mode || ' ' || automatic || ' ' || worker_pids::text || ' ' || (detail = ddl_notify.delivery_status()) FROM ddl_notify.delivery_state()"),
	"delivering true {$worker} true",
	'delivery_state() gives the same as columns, for scripts');

my @auto = DdlNotifyTest::create_tables($node, 'app', 'auto', 1, 3);
$node->safe_psql('app',
	'ALTER TABLE public.auto_1 ADD COLUMN x int; DROP TABLE public.auto_2;');
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G9: wait_for_delivery() returns true with no manual deliver() call');
DdlNotifyTest::check_exactly_once($node, 'app', 'good', \@auto,
	'G9 automatic delivery');
is( $node->safe_psql(
		'app', q{
SELECT string_agg(DISTINCT command_tag, ',' ORDER BY command_tag)
FROM public.log_good WHERE object_identity LIKE 'public.auto%'}),
	'ALTER TABLE,CREATE TABLE,DROP TABLE',
	'G9: the log has the CREATE, ALTER and DROP events');
is( $node->safe_psql(
		'app',
		"SELECT count(*) FROM public.log_good WHERE backend_type IS DISTINCT FROM 'ddl_notify worker'"
	),
	'0',
	'G9: every handler call ran in the ddl_notify worker');
is($node->safe_psql('app', 'SELECT count(*) FROM ddl_notify.event'),
	'0', 'G9: the event table drained');

# --- a subscriber that always fails --------------------------------------

DdlNotifyTest::setup_subscriber($node, 'app', 'bad');
$node->safe_psql('app', "INSERT INTO public.gate VALUES ('bad', false)");
my @fail = DdlNotifyTest::create_tables($node, 'app', 'fail', 1, 1);
my $t0 = time;
is(DdlNotifyTest::wait_for_delivery($node, 'app', 2),
	'f', 'G9: wait_for_delivery() returns false while a handler always fails');
cmp_ok(time - $t0, '>=', 1.9, 'G9: ... and only at its timeout');
ok( $node->poll_query_until(
		'app',
		"SELECT count(*) = 1 FROM public.log_good WHERE object_identity = 'public.fail_1' AND command_tag = 'CREATE TABLE'"
	),
	'G9: the other subscriber still got the event');
is( $node->safe_psql(
		'app',
		"SELECT pending > 0 AND attempts > 0 AND last_error LIKE '%subscriber bad is closed%' "
		  . "FROM ddl_notify.subscriber_status WHERE name = 'bad'"),
	't',
	'G9: the failing subscriber shows pending events, attempts and its error');

# --- SIGHUP: the running worker takes new settings --------------------------

ok( $node->poll_query_until(
		'app',
		"SELECT next_retry_at - last_error_at < interval '10 s' FROM ddl_notify.subscriber_status WHERE name = 'bad'"
	),
	'G9: retries come at ddl_notify.retry_max_delay (200ms) before the reload');
$worker = DdlNotifyTest::worker_pid($node, 'app');
$node->safe_psql(
	'postgres', q{
ALTER SYSTEM SET ddl_notify.retry_initial_delay = '1h';
ALTER SYSTEM SET ddl_notify.retry_max_delay = '1h';
ALTER SYSTEM SET ddl_notify.poll_interval = '2s';
SELECT pg_reload_conf();
});
ok( $node->poll_query_until(
		'app',
		"SELECT next_retry_at - last_error_at > interval '30 min' FROM ddl_notify.subscriber_status WHERE name = 'bad'"
	),
	'G9: after SIGHUP the worker retries with the reloaded retry delay (1h)');
is(DdlNotifyTest::worker_pid($node, 'app'),
	$worker, 'G9: the worker survived the reload (same pid)');
is(DdlNotifyTest::launcher_pid($node),
	$launcher, 'G9: the launcher survived the reload (same pid)');
$node->safe_psql(
	'postgres', q{
ALTER SYSTEM RESET ddl_notify.retry_initial_delay;
ALTER SYSTEM RESET ddl_notify.retry_max_delay;
ALTER SYSTEM RESET ddl_notify.poll_interval;
SELECT pg_reload_conf();
});
$node->safe_psql('app', "SELECT ddl_notify.unsubscribe('bad')");
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G9: delivery is complete once the failing subscriber is gone');

# --- SIGTERM: clean exit, the launcher starts a new worker -------------------

my $log_offset = -s $node->logfile;
kill 'TERM', $worker;
my $new_worker = DdlNotifyTest::wait_worker($node, 'app', $worker);
isnt($new_worker, '',
	'G9: after SIGTERM of the worker the launcher starts a new one');
is(DdlNotifyTest::launcher_pid($node),
	$launcher, 'G9: SIGTERM of the worker caused no crash restart (launcher pid unchanged)');
ok( !$node->log_contains(
		'terminating any other active server processes|was terminated by signal',
		$log_offset),
	'G9: the worker exited without a crash (server log)');
my @term = DdlNotifyTest::create_tables($node, 'app', 'term', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G9: the new worker delivers');
DdlNotifyTest::check_exactly_once($node, 'app', 'good', [ @auto, @fail, @term ],
	'G9 after SIGTERM');

# --- two databases: a failing subscriber in one does not stop the other ----

$node->safe_psql('postgres', 'CREATE DATABASE other');
DdlNotifyTest::setup_db($node, 'other');
DdlNotifyTest::setup_subscriber($node, 'other', 'o1', unique => 1);
isnt(DdlNotifyTest::wait_worker($node, 'other'),
	'', 'G9: the second database gets its own worker');
DdlNotifyTest::setup_subscriber($node, 'app', 'bad2');
$node->safe_psql('app', "INSERT INTO public.gate VALUES ('bad2', false)");

my @two_app   = DdlNotifyTest::create_tables($node, 'app',   'two', 1, 2);
my @two_other = DdlNotifyTest::create_tables($node, 'other', 'two', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'other'),
	't', 'G9: database "other" gets delivery while "app" has a failing subscriber');
DdlNotifyTest::check_exactly_once($node, 'other', 'o1', \@two_other,
	'G9 two databases');
ok( $node->poll_query_until(
		'app',
		"SELECT count(*) = 2 FROM public.log_good WHERE object_identity LIKE 'public.two_%' AND command_tag = 'CREATE TABLE'"
	),
	'G9: database "app" delivers to its healthy subscriber at the same time');
is(DdlNotifyTest::wait_for_delivery($node, 'app', 1),
	'f', 'G9: ... while its failing subscriber keeps it from completing');
$node->safe_psql('app', "SELECT ddl_notify.unsubscribe('bad2')");
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G9: "app" completes once the failing subscriber is gone');

# --- DROP EXTENSION / CREATE EXTENSION while the worker runs -----------------

$node->safe_psql('other', 'DROP EXTENSION ddl_notify CASCADE');
ok(DdlNotifyTest::wait_no_worker($node, 'other'),
	'G9: after DROP EXTENSION the database\'s worker exits');
isnt(DdlNotifyTest::worker_pid($node, 'app'),
	'', 'G9: the worker of the other database keeps running');

DdlNotifyTest::setup_db($node, 'other');
DdlNotifyTest::setup_subscriber($node, 'other', 'o1', unique => 1);
isnt(DdlNotifyTest::wait_worker($node, 'other'),
	'', 'G9: after CREATE EXTENSION a worker starts by itself');
my @again = DdlNotifyTest::create_tables($node, 'other', 'again', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'other'),
	't', 'G9: delivery resumes after CREATE EXTENSION');
DdlNotifyTest::check_exactly_once($node, 'other', 'o1', \@again,
	'G9 after CREATE EXTENSION');

is(DdlNotifyTest::launcher_pid($node),
	$launcher, 'G9: no crash restart happened during the test');

$node->stop;
done_testing();
