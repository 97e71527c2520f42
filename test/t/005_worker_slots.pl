
# Copyright (c) 2026, the ddl_notify authors

# 005_worker_slots.pl: more databases than worker slots.
#
# G9: with ddl_notify.max_workers = 1 and two databases that have the
#     extension, the second one waits and says so (delivery_status(), the
#     status view's "delivery" column, "no free worker slot" in the server
#     log); its events stay pending, not lost.  Once DROP EXTENSION in the
#     first database frees the slot, the second gets its worker by itself
#     and its events are delivered exactly once.  The first database, after
#     CREATE EXTENSION again, now waits in turn.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node =
  DdlNotifyTest::new_node('slots', conf => "ddl_notify.max_workers = 1\n");
my $log_offset = -s $node->logfile;

$node->safe_psql('postgres', 'CREATE DATABASE db1');
DdlNotifyTest::setup_db($node, 'db1');
DdlNotifyTest::setup_subscriber($node, 'db1', 's', unique => 1);
my $w1 = DdlNotifyTest::wait_worker($node, 'db1');
isnt($w1, '', 'G9: the first database gets the only worker slot');
is($node->safe_psql('db1', 'SELECT ddl_notify.delivery_status()'),
	"automatic: worker pid $w1", 'G9: db1 says it is served by its worker');

$node->safe_psql('postgres', 'CREATE DATABASE db2');
DdlNotifyTest::setup_db($node, 'db2');
DdlNotifyTest::setup_subscriber($node, 'db2', 's', unique => 1);
my @waiting = DdlNotifyTest::create_tables($node, 'db2', 'waiting', 1, 3);

ok( $node->poll_query_until(
		'db2',
		"SELECT ddl_notify.delivery_status() LIKE 'waiting for a worker slot%'"),
	'G9: the second database says it waits for a worker slot');
like(
	$node->safe_psql('db2',
		"SELECT delivery FROM ddl_notify.subscriber_status WHERE name = 's'"),
	qr/^waiting for a worker slot/,
	'G9: ... in the status view too');
ok($node->wait_for_log(qr/no free worker slot/, $log_offset),
	'G9: the server log says "no free worker slot"');
is(DdlNotifyTest::worker_pid($node, 'db2'), '', 'G9: db2 has no worker');
is($node->safe_psql('db2',
		"SELECT pending FROM ddl_notify.subscriber_status WHERE name = 's'"),
	'3', 'G9: db2\'s events are pending, not lost');
is(DdlNotifyTest::worker_pid($node, 'db1'),
	$w1, 'G9: db1 keeps its worker meanwhile');

# free the slot
$node->safe_psql('db1', 'DROP EXTENSION ddl_notify CASCADE');
ok(DdlNotifyTest::wait_no_worker($node, 'db1'),
	'G9: after DROP EXTENSION the worker of db1 exits');
my $w2 = DdlNotifyTest::wait_worker($node, 'db2');
isnt($w2, '', 'G9: the freed slot goes to db2 by itself');
is(DdlNotifyTest::wait_for_delivery($node, 'db2'),
	't', 'G9: db2\'s waiting events are delivered');
DdlNotifyTest::check_exactly_once($node, 'db2', 's', \@waiting,
	'G9 after the slot was freed');
is($node->safe_psql('db2', 'SELECT ddl_notify.delivery_status()'),
	"automatic: worker pid $w2", 'G9: db2 now says it is served by its worker');

# and the other way round
$node->safe_psql('db1', 'TRUNCATE public.log_s');
DdlNotifyTest::setup_db($node, 'db1');
DdlNotifyTest::setup_subscriber($node, 'db1', 's', unique => 1);
ok( $node->poll_query_until(
		'db1',
		"SELECT ddl_notify.delivery_status() LIKE 'waiting for a worker slot%'"),
	'G9: after CREATE EXTENSION again db1 waits for the slot db2 holds');
is(DdlNotifyTest::worker_pid($node, 'db2'),
	$w2, 'G9: db2 keeps its worker');

$node->stop;
done_testing();
