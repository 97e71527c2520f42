
# Copyright (c) 2026, the ddl_notify authors

# 012_counters_restart.pl: the subscriber counters survive a worker leaving
# and a restart; pending never under-reports after a crash.
#
# G9: delivered, last_event_id and last_delivered_at are in the subscriber's
#     row once the database's worker has given its slot back, so a clean
#     restart (or a crash) after the pool went idle loses none of them.
#     pending and oldest_pending_id after a crash count every event not
#     handled (they are read from the queue, never from memory).
#
# How: workers leave after 1 s idle.  Eight DDL are delivered; once the
# worker has gone, the row itself (not subscriber_status, which adds what
# shared memory holds) must say 8; after `restart` (fast) subscriber_status
# must too.  Then the subscriber is closed (its handler fails), three DDL
# wait, the server crashes (immediate stop) and pending must be 3.
#
# Last, with workers that stay, five more are delivered and the server is
# restarted (fast) while the worker waits between rounds: subscriber_status
# must count every event the handler logged.
#
# Catches: the worker leaving without moving the counts
# (test/mutations/progress_not_flushed.patch): the row says 0, and after the
# restart subscriber_status does too (the issue's report: 8 deliveries,
# 35 s idle, a clean restart, and delivered read 0); a worker that ends at
# SIGTERM between rounds without moving them
# (test/mutations/progress_not_flushed_at_shutdown.patch): the last five
# are missing after the restart.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node(
	'counters',
	conf => qq{
ddl_notify.worker_idle_timeout = '1s'
restart_after_crash = on
});

$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
DdlNotifyTest::setup_subscriber($node, 'app', 'plain');

my @ids = DdlNotifyTest::create_tables($node, 'app', 'c', 1, 8);
ok( $node->poll_query_until(
		'app', "SELECT count(*) = 8 FROM public.log_plain WHERE command_tag = 'CREATE TABLE'"),
	'eight CREATE TABLE delivered');
my $last = $node->safe_psql('app', 'SELECT max(event_id) FROM public.log_plain');
ok(DdlNotifyTest::wait_no_worker($node, 'app'), 'the worker gave its slot back');

is( $node->safe_psql(
		'app',
		"SELECT delivered, last_event_id, last_delivered_at IS NOT NULL "
		  . "FROM ddl_notify.subscriber WHERE name = 'plain'"),
	"8|$last|t",
	'G9: the subscriber row has the counts once the worker left');

$node->restart;
is( $node->safe_psql(
		'app',
		"SELECT delivered, last_event_id, last_delivered_at IS NOT NULL "
		  . "FROM ddl_notify.subscriber_status WHERE name = 'plain'"),
	"8|$last|t",
	'G9: a clean restart after the worker left loses no count');

# pending after a crash: three events the closed subscriber cannot take
$node->safe_psql('app',
	"INSERT INTO public.gate VALUES ('plain', false) ON CONFLICT (sub) DO UPDATE SET open = false"
);
DdlNotifyTest::create_tables($node, 'app', 'w', 1, 3);
ok( $node->poll_query_until(
		'app',
		"SELECT attempts > 0 FROM ddl_notify.subscriber_status WHERE name = 'plain'"),
	'the closed subscriber has failed on the first of them');
$node->stop('immediate');
$node->start;
is( $node->safe_psql(
		'app',
		"SELECT pending, oldest_pending_id = (SELECT min(id) FROM ddl_notify.event) "
		  . "FROM ddl_notify.subscriber_status WHERE name = 'plain'"),
	'3|t',
	'G9: after a crash pending counts every event not handled');
is( $node->safe_psql(
		'app',
		"SELECT delivered FROM ddl_notify.subscriber_status WHERE name = 'plain'"),
	'8',
	'G9: the crash lost no count moved before it');

$node->safe_psql('app', "UPDATE public.gate SET open = true WHERE sub = 'plain'");
is(DdlNotifyTest::wait_for_delivery($node, 'app'), 't', 'the three are delivered once reopened');

# a clean shutdown while a worker still serves the database
$node->safe_psql('postgres',
	"ALTER SYSTEM SET ddl_notify.worker_idle_timeout = '10min'; SELECT pg_reload_conf()");
DdlNotifyTest::create_tables($node, 'app', 's', 1, 5);
is(DdlNotifyTest::wait_for_delivery($node, 'app'), 't', 'five more delivered');
ok( $node->poll_query_until(
		'app',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' "
		  . "AND datname = 'app' AND query = 'ddl_notify worker: idle'"),
	'the worker waits between rounds, still serving the database');
my $handled = $node->safe_psql('app', 'SELECT count(*) FROM public.log_plain');
note('the row before the shutdown: '
	  . $node->safe_psql('app', "SELECT delivered FROM ddl_notify.subscriber WHERE name = 'plain'")
	  . " delivered, $handled handled");
$node->restart;
is( $node->safe_psql(
		'app',
		"SELECT delivered, last_event_id = (SELECT max(event_id) FROM public.log_plain) "
		  . "FROM ddl_notify.subscriber_status WHERE name = 'plain'"),
	"$handled|t",
	'G9: a clean shutdown while a worker served the database loses no count');

$node->stop;
done_testing();
