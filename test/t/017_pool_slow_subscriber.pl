
# Copyright (c) 2026, the ddl_notify authors

# 017_pool_slow_subscriber.pl: a slow subscriber delays no other (issue 16).
#
# G14, G7: in one database, subscriber "a_slow" (the first one a round
#     visits) sleeps 5 s in its first handler call; "b_fast" does one
#     INSERT.  With ddl_notify.max_workers = 2, five DDL transactions: every
#     b_fast call happens before a_slow's first call has returned (call
#     times against the end of that call), each event exactly once, in
#     order (G5, G8).  Same with a subscriber blocked on a lock this test
#     holds: the fast one's five events are delivered while the blocked one
#     still waits for the lock, then both finish, exactly once, in order.
#     Caught: a pool that hands work out by database only (one worker per
#     database: b_fast waits behind a_slow, 5 s; behind the lock, for ever);
#     a launcher that does not start a helper for a database whose workers
#     are all stuck in one round.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $key  = DdlNotifyTest::LOCK_KEY;
my $node = DdlNotifyTest::new_node('slowsub',
	conf => "ddl_notify.max_workers = 2\nddl_notify.max_workers_per_database = 2\n");

# setup(DB, SLOW_BODY): subscriber "a_slow" with the given handler body
# (after its INSERT), then "b_fast"; both log with UNIQUE (event_id).
sub setup
{
	my ($db, $slow_body) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql(
		$db, qq{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.log_slow (event_id bigint UNIQUE, started timestamptz,
	ended timestamptz, seq serial);
CREATE TABLE public.log_fast (event_id bigint UNIQUE,
	at timestamptz NOT NULL DEFAULT clock_timestamp(), seq serial,
	pid int DEFAULT pg_backend_pid());
CREATE FUNCTION public.h_slow(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS \$f\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	$slow_body
	INSERT INTO public.log_slow (event_id, started, ended) VALUES (e.id, t0, clock_timestamp());
END
\$f\$;
CREATE FUNCTION public.h_fast(e ddl_notify.event) RETURNS void
LANGUAGE sql AS \$f\$ INSERT INTO public.log_fast (event_id) VALUES (e.id) \$f\$;
SELECT ddl_notify.subscribe('a_slow', 'public.h_slow(ddl_notify.event)');
SELECT ddl_notify.subscribe('b_fast', 'public.h_fast(ddl_notify.event)');
});
	return;
}

# check(DB, LABEL): both handled every CREATE TABLE event once, in order
sub check
{
	my ($db, $label) = @_;
	my $events = $node->safe_psql($db,
		"SELECT count(*) FROM public.log_fast");
	is($events, '5', "G14 $label: b_fast handled the 5 events");
	for my $t ('log_fast', 'log_slow')
	{
		is( $node->safe_psql(
				$db,
				"SELECT count(*) = 5 AND bool_and(ok) FROM (SELECT event_id > "
				  . "coalesce(lag(event_id) OVER (ORDER BY seq), 0) AS ok FROM public.$t) s"
			),
			't',
			"G5, G8 $label: $t has each event once, in order");
	}
	return;
}

# --- a handler that sleeps 5 s -------------------------------------------------

setup('sleepy',
	"IF NOT EXISTS (SELECT FROM public.log_slow) THEN PERFORM pg_sleep(5); END IF;");
$node->safe_psql('sleepy',
	join('', map { "CREATE TABLE public.t$_ (a int);\n" } 1 .. 5));
ok( $node->poll_query_until(
		'sleepy', 'SELECT count(*) = 5 FROM public.log_fast'),
	'G14: b_fast gets its 5 events while a_slow sleeps');
is(DdlNotifyTest::wait_for_delivery($node, 'sleepy'),
	't', 'G14: then a_slow finishes too');
is( $node->safe_psql(
		'sleepy', q{
SELECT max(f.at) < (SELECT s.ended FROM public.log_slow s ORDER BY s.seq LIMIT 1)
FROM public.log_fast f}),
	't',
	'G14: every b_fast call came before a_slow\'s first call returned');
check('sleepy', 'sleeping neighbour');

# --- a handler blocked on a lock -------------------------------------------------

setup('locked',
	"IF e.object_identity LIKE '%\\_park' THEN PERFORM pg_advisory_xact_lock_shared($key); END IF;"
);
my $locker = $node->background_psql('locked');
$locker->query_safe("SELECT pg_advisory_lock($key)");
$node->safe_psql('locked',
	"CREATE TABLE public.t1_park (a int);\n"
	  . join('', map { "CREATE TABLE public.t$_ (a int);\n" } 2 .. 5));
ok( $node->poll_query_until(
		'locked', 'SELECT count(*) = 5 FROM public.log_fast'),
	'G14: b_fast gets its 5 events while a_slow waits for a lock');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
		  . "WHERE a.backend_type = 'ddl_notify worker' AND a.datname = 'locked' "
		  . "AND l.locktype = 'advisory' AND l.objid = $key AND NOT l.granted"),
	'1',
	'G14: ... a_slow still waits for the lock, in its first call');
is($node->safe_psql('locked', 'SELECT count(*) FROM public.log_slow'),
	'0', 'G14: ... and has committed nothing');
cmp_ok(
	$node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker'"),
	'<=', 2, 'G14: never more than max_workers = 2 workers');
$locker->query_safe("SELECT pg_advisory_unlock($key)");
is(DdlNotifyTest::wait_for_delivery($node, 'locked'),
	't', 'G14: a_slow finishes once the lock is free');
check('locked', 'blocked neighbour');

$locker->quit;
$node->stop;
done_testing();
