
# Copyright (c) 2026, the ddl_notify authors

# 016_pool_databases.pl: thirty databases, a pool of two workers (issue 16).
#
# G14: 30 databases with the extension and ddl_notify.max_workers = 2: a DDL
#      in each, one database at a time and then all at once: every event is
#      delivered exactly once, and no handler ever ran while more than two
#      ddl_notify workers were in pg_stat_activity (each handler call
#      records the count).  Idle workers are gone after
#      ddl_notify.worker_idle_timeout (1 s here) and worker_pool() is empty.
#      Caught: a launcher that starts a worker per database (count > 2), an
#      idle worker that never exits, a commit that does not queue its
#      database (delivery never comes).
# G7, G14: a failing subscriber in a database whose worker exited is
#      retried at its next_retry_at (a worker comes back by itself; the
#      call is not before that time).  Caught: a worker that exits without
#      leaving its retry time for the launcher (never retried).
# G11, G14: DROP DATABASE of a database queued for a worker (both workers
#      busy inside handlers elsewhere) succeeds at once, and the launcher
#      forgets the request (no worker fails to connect to it, no row in
#      worker_pool()).  Caught: a launcher that starts a worker for a
#      dropped database (FATAL "database ... does not exist" in the log).
# G9, G14: restart with events pending in all 30 databases (written while
#      ddl_notify.max_workers = 0): after a restart with a pool of two, all
#      are delivered, exactly once, with no DDL to wake them.  Caught: a
#      launcher that does not probe every database at start.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $n    = 30;
my $key  = DdlNotifyTest::LOCK_KEY;
my $node = DdlNotifyTest::new_node(
	'pool', conf => q{
ddl_notify.max_workers = 2
ddl_notify.worker_idle_timeout = '1s'
ddl_notify.max_workers_per_database = 2
});
my @dbs = map { "p$_" } 1 .. $n;

# One template with the extension and a subscriber whose handler records
# the number of ddl_notify workers at call time; the databases are copies.
$node->safe_psql('postgres', 'CREATE DATABASE tpl');
$node->safe_psql(
	'tpl', qq{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.gate (sub text PRIMARY KEY, open boolean NOT NULL);
CREATE TABLE public.log_s (
	event_id bigint NOT NULL,
	object_identity text,
	pid integer NOT NULL DEFAULT pg_backend_pid(),
	nworkers integer,
	at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE FUNCTION public.h_s(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS \$f\$
BEGIN
	IF NOT coalesce((SELECT g.open FROM public.gate g WHERE g.sub = 's'), true) THEN
		RAISE EXCEPTION 'subscriber s is closed (event %)', e.id;
	END IF;
	PERFORM pg_catalog.pg_stat_clear_snapshot();
	INSERT INTO public.log_s (event_id, object_identity, nworkers)
	VALUES (e.id, e.object_identity,
			(SELECT count(*) FROM pg_catalog.pg_stat_activity a
			 WHERE a.backend_type = 'ddl_notify worker'));
	IF e.object_identity LIKE '%\\_park' THEN
		PERFORM pg_advisory_xact_lock_shared($key);
	END IF;
END
\$f\$;
SELECT ddl_notify.subscribe('s', 'public.h_s(ddl_notify.event)');
});
$node->safe_psql('postgres', "CREATE DATABASE $_ TEMPLATE tpl") for @dbs;

# check_all(PREFIX, LABEL): each database handled its PREFIX_p<i> table once
sub check_all
{
	my ($prefix, $label) = @_;
	my @bad;
	for my $db (@dbs)
	{
		my $got = $node->safe_psql($db,
			"SELECT count(*) FROM public.log_s WHERE object_identity = 'public.${prefix}_$db'"
		);
		push @bad, "$db:$got" if $got ne '1';
	}
	is(join(' ', @bad), '', "G14 $label: every database handled its event exactly once");
	return;
}

# most workers seen by any handler call so far
sub max_workers_seen
{
	my $max = 0;
	for my $db (@dbs)
	{
		my $m = $node->safe_psql($db,
			'SELECT coalesce(max(nworkers), 0) FROM public.log_s');
		$max = $m if $m > $max;
	}
	return $max;
}

# --- one database at a time --------------------------------------------------

my @late;
my $secs = DdlNotifyTest::wait_secs();
for my $db (@dbs)
{
	push @late, $db
	  if $node->safe_psql($db,
		"CREATE TABLE public.one_$db (a int); SELECT ddl_notify.wait_for_delivery('$secs s')"
	  ) ne 't';
}
is(join(' ', @late), '', 'G14 one at a time: wait_for_delivery() is true in all 30');
check_all('one', 'one at a time');

# --- all at once ----------------------------------------------------------------

$node->safe_psql($_, "CREATE TABLE public.all_$_ (a int)") for @dbs;
@late = ();
for my $db (@dbs)
{
	push @late, $db
	  if DdlNotifyTest::wait_for_delivery($node, $db) ne 't';
}
is(join(' ', @late), '', 'G14 all at once: wait_for_delivery() is true in all 30');
check_all('all', 'all at once');
my $seen = max_workers_seen();
cmp_ok($seen, '<=', 2,
	'G14: no handler ever ran with more than 2 ddl_notify workers');
cmp_ok($seen, '>=', 1, 'G14: ... and the count is real');

ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker'"
	),
	'G14: idle workers exit after ddl_notify.worker_idle_timeout');
is($node->safe_psql('p1', 'SELECT count(*) FROM ddl_notify.worker_pool()'),
	'0', 'G14: worker_pool() is empty');
like($node->safe_psql('p1', 'SELECT ddl_notify.delivery_status()'),
	qr/^automatic: idle, no worker/, 'G14: delivery_status() says idle, no worker');

# --- a failing subscriber is retried at its time, without a worker waiting ---

$node->safe_psql(
	'postgres', q{
ALTER SYSTEM SET ddl_notify.retry_initial_delay = '4s';
ALTER SYSTEM SET ddl_notify.retry_max_delay = '4s';
SELECT pg_reload_conf();
});
$node->safe_psql('p1', "INSERT INTO public.gate VALUES ('s', false)");
$node->safe_psql('p1', 'CREATE TABLE public.retry_p1 (a int)');
ok( $node->poll_query_until(
		'p1',
		"SELECT attempts > 0 AND next_retry_at - last_error_at > interval '3 s' "
		  . "FROM ddl_notify.subscriber_status WHERE name = 's'"),
	'G7: the subscriber fails and waits for its retry (4 s)');
ok(DdlNotifyTest::wait_no_worker($node, 'p1'),
	'G14: the worker of p1 exits while the subscriber waits for its retry');
my $retry_at = $node->safe_psql('p1',
	"SELECT next_retry_at FROM ddl_notify.subscriber_status WHERE name = 's'");
is( $node->safe_psql(
		'p1',
		"SELECT count(*) FROM ddl_notify.worker_pool() WHERE database = 'p1' AND state = 'retry'"
	),
	'1',
	'G14: worker_pool() shows p1 waiting for its retry time');
like($node->safe_psql('p1', 'SELECT ddl_notify.delivery_status()'),
	qr/^automatic: idle, no worker; one comes back at/,
	'G14: delivery_status() says when a worker comes back');
$node->safe_psql('p1', "UPDATE public.gate SET open = true WHERE sub = 's'");
is(DdlNotifyTest::wait_for_delivery($node, 'p1'),
	't', 'G14: the failed event is delivered by a worker that came back by itself');
is( $node->safe_psql(
		'p1',
		"SELECT at >= '$retry_at'::timestamptz FROM public.log_s WHERE object_identity = 'public.retry_p1'"
	),
	't',
	'G7: ... not before its next_retry_at');
$node->safe_psql(
	'postgres', q{
ALTER SYSTEM RESET ddl_notify.retry_initial_delay;
ALTER SYSTEM RESET ddl_notify.retry_max_delay;
SELECT pg_reload_conf();
});

# --- DROP DATABASE while queued for a worker ---------------------------------

my $log_offset = -s $node->logfile;
# advisory locks are per database: one holder in each
my %locker = map { $_ => $node->background_psql($_) } ('p2', 'p3');
$locker{$_}->query_safe("SELECT pg_advisory_lock($key)") for ('p2', 'p3');
$node->safe_psql('p2', 'CREATE TABLE public.x_park (a int)');
$node->safe_psql('p3', 'CREATE TABLE public.y_park (a int)');
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(DISTINCT a.datname) = 2 FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
		  . "WHERE a.backend_type = 'ddl_notify worker' AND l.locktype = 'advisory' "
		  . "AND l.objid = $key AND NOT l.granted"),
	'G14: both workers are busy inside handlers (p2, p3)');
$node->safe_psql('postgres', 'CREATE DATABASE victim TEMPLATE tpl');
$node->safe_psql('victim', 'CREATE TABLE public.v (a int)');
ok( $node->poll_query_until(
		'victim',
		"SELECT ddl_notify.delivery_status() LIKE 'waiting for a worker slot since %'"),
	'G14: the new database is queued for a worker');
my ($ret, $out, $err) =
  $node->psql('postgres', 'DROP DATABASE victim', timeout => 60);
is($ret, 0, 'G11: DROP DATABASE of a queued database succeeds at once');
$locker{$_}->query_safe("SELECT pg_advisory_unlock($key)") for ('p2', 'p3');
is(DdlNotifyTest::wait_for_delivery($node, $_), 't', "G14: $_ delivers its parked event")
  for ('p2', 'p3');
ok( $node->poll_query_until(
		'p1',
		"SELECT count(*) = 0 FROM ddl_notify.worker_pool() WHERE database IS NULL"),
	'G14: worker_pool() forgets the dropped database');
ok( !$node->log_contains(qr/FATAL: .*database .*does not exist/, $log_offset),
	'G14: no worker tried to connect to the dropped database');
$locker{$_}->quit for ('p2', 'p3');

# --- restart with 30 databases pending ----------------------------------------

$node->append_conf('postgresql.conf', "ddl_notify.max_workers = 0\n");
$node->restart;
$node->safe_psql($_, "CREATE TABLE public.restart_$_ (a int)") for @dbs;
is( $node->safe_psql('p30',
		"SELECT pending FROM ddl_notify.subscriber_status WHERE name = 's'"),
	'1', 'G9: with no workers the events stay pending');
$node->append_conf('postgresql.conf', "ddl_notify.max_workers = 2\n");
$node->restart;
@late = ();
for my $db (@dbs)
{
	push @late, $db
	  if DdlNotifyTest::wait_for_delivery($node, $db) ne 't';
}
is(join(' ', @late), '',
	'G9, G14: after a restart all 30 databases are served by the pool of two');
check_all('restart', 'after restart');
cmp_ok(max_workers_seen(), '<=', 2,
	'G14: still never more than 2 ddl_notify workers');

$node->stop;
done_testing();
