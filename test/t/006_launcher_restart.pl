
# Copyright (c) 2026, the ddl_notify authors

# 006_launcher_restart.pl: the launcher itself exits and is restarted.
#
# G9: the launcher is a background worker like any other: an ERROR in it, or
#     pg_terminate_backend()/SIGTERM by an operator, makes it exit and the
#     postmaster starts it again.  After that, delivery must go on as before:
#     each database with the extension keeps one worker, no worker slot is
#     lost (with ddl_notify.max_workers = 2, a new database still gets the
#     second slot), delivery_status() names a live worker, and a worker that
#     exits later is replaced.
#
# (At the time of writing this fails: the new launcher does not know the
# workers of the old one, starts a second worker in "app", and never frees
# the old worker's slot; see the report of the worker tests.)

use strict;
use warnings FATAL => 'all';

use List::Util qw(min);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

# A worker starts within a second or two; a lost slot must not cost the
# whole default timeout.
my $short = min(30, DdlNotifyTest::wait_secs());

my $node =
  DdlNotifyTest::new_node('launcher', conf => "ddl_notify.max_workers = 2\n");

$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
DdlNotifyTest::setup_subscriber($node, 'app', 's', unique => 1);
my $worker = DdlNotifyTest::wait_worker($node, 'app');
isnt($worker, '', 'G9: app has its worker');
my @app = DdlNotifyTest::create_tables($node, 'app', 'before', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'app'), 't', 'G9: app delivers');

my $launcher = DdlNotifyTest::launcher_pid($node);
kill 'TERM', $launcher;
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify launcher' AND pid <> $launcher"
	),
	'G9: the postmaster restarts the launcher after it exited');

# A new database after the launcher restart: the second slot must be free.
$node->safe_psql('postgres', 'CREATE DATABASE app2');
DdlNotifyTest::setup_db($node, 'app2');
DdlNotifyTest::setup_subscriber($node, 'app2', 's', unique => 1);
my @app2 = DdlNotifyTest::create_tables($node, 'app2', 'new', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'app2', $short),
	't',
	'G9: after a launcher restart a new database gets delivery (no worker slot lost)'
);
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) <= 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' AND datname = 'app'"
	),
	't',
	'G9: after a launcher restart app still has at most one worker');

push @app, DdlNotifyTest::create_tables($node, 'app', 'during', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G9: app delivers after the launcher restart');

# The worker that ran before the launcher restart exits: it is replaced,
# and the status names the live worker, not a leftover slot.
kill 'TERM', $worker;
my $new = DdlNotifyTest::wait_worker($node, 'app', $worker);
isnt($new, '', 'G9: the old worker is replaced after it exits');
is($node->safe_psql('app', 'SELECT ddl_notify.delivery_status()'),
	"automatic: worker pid $new",
	'G9: delivery_status() names the live worker');
push @app, DdlNotifyTest::create_tables($node, 'app', 'after', 1, 2);
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G9: app delivers with its new worker');
DdlNotifyTest::check_exactly_once($node, 'app', 's', \@app,
	'G9 across the launcher restart');
DdlNotifyTest::check_exactly_once($node, 'app2', 's', \@app2,
	'G9 database made after the launcher restart');

$node->stop;
done_testing();
