
# Copyright (c) 2026, the ddl_notify authors

# 011_prepared_wakeup.pl: COMMIT PREPARED gets a deliverer as a commit does.
#
# G4, G9, G14: the events of a transaction committed with COMMIT PREPARED
# after its database's worker gave its slot back are delivered without any
# later DDL, as promptly as a plain commit's: committed from another session
# (PostgreSQL refuses it from a session of another database: checked too),
# and after a crash restart between PREPARE and COMMIT PREPARED.  ROLLBACK PREPARED
# delivers nothing.
#
# How: workers leave after 1 s idle (worker_idle_timeout) and the poll
# interval is an hour, so nothing but the wake-up of COMMIT PREPARED can
# bring a worker back within the wait; each case waits until the database
# has no worker before it commits.  Deliveries are waited for in the
# handler's log (poll_query_until), never with wait_for_delivery(), which
# asks for a worker by itself.  The launcher also looks every 10 s: right
# after COMMIT PREPARED returns, in the same session, the pool must already
# show app queued or served, which only the commit itself can have done.
#
# Catches: no check of the prepared transactions at COMMIT PREPARED
# (test/mutations/prepared_no_check.patch); the preparing backend not
# keeping its xid (prepared_not_kept.patch: the first two cases); a worker
# not learning of its database's prepared transactions when it starts
# (prepared_not_listed.patch: the crash case).  Before the fix the first
# case waited until the next DDL commit in the database.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node(
	'prepared',
	conf => qq{
max_prepared_transactions = 10
ddl_notify.worker_idle_timeout = '1s'
ddl_notify.poll_interval = '1h'
restart_after_crash = on
});

$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
DdlNotifyTest::setup_subscriber($node, 'app', 'plain');

sub delivered
{
	my ($table) = @_;
	return $node->poll_query_until('app',
		"SELECT count(*) = 1 FROM public.log_plain "
		  . "WHERE command_tag = 'CREATE TABLE' AND object_identity = 'public.$table'"
	);
}

sub prepare_table
{
	my ($table, $gid) = @_;
	$node->safe_psql('app',
		"BEGIN; CREATE TABLE public.$table (id int PRIMARY KEY); PREPARE TRANSACTION '$gid'"
	);
	return;
}

# Some DDL after the PREPARE is delivered, then the worker leaves.
# COMMIT PREPARED in app, and in the same session right after it: the
# commit itself queued app (or woke its worker), nobody's poll did.
sub commit_prepared
{
	my ($gid) = @_;
	return $node->safe_psql('app',
		"COMMIT PREPARED '$gid'; "
		  . "SELECT count(*) > 0 FROM ddl_notify.worker_pool() WHERE database = 'app'");
}

sub deliver_and_idle_out
{
	my ($table) = @_;
	$node->safe_psql('app', "CREATE TABLE public.$table (a int)");
	ok(delivered($table), "$table (after the PREPARE) is delivered");
	ok(DdlNotifyTest::wait_no_worker($node, 'app'),
		"$table: the worker of app gave its slot back");
	return;
}

# 1. COMMIT PREPARED in the same database, after the worker left.
prepare_table('p1', 'g1');
deliver_and_idle_out('t1');
is(commit_prepared('g1'), 't', 'G14: COMMIT PREPARED queued app at once');
ok(delivered('p1'), 'G4/G14: COMMIT PREPARED in app gets a deliverer');

# 2. PostgreSQL refuses COMMIT PREPARED from another database; committed
# from another session of app (not the one that prepared it), after that
# refusal, it gets a deliverer.
prepare_table('p2', 'g2');
deliver_and_idle_out('t2');
my ($ret, $out, $err) =
  $node->psql('postgres', "COMMIT PREPARED 'g2'");
like($err, qr/belongs to another database/,
	'COMMIT PREPARED from another database is refused by PostgreSQL');
is(commit_prepared('g2'), 't', 'G14: COMMIT PREPARED queued app at once');
ok(delivered('p2'),
	'G4/G14: COMMIT PREPARED after a refused attempt elsewhere gets a deliverer');

# 3. ROLLBACK PREPARED delivers nothing: a later DDL is delivered, p3 never.
prepare_table('p3', 'g3');
deliver_and_idle_out('t3');
$node->safe_psql('app', "ROLLBACK PREPARED 'g3'");
$node->safe_psql('app', 'CREATE TABLE public.t3_after (a int)');
ok(delivered('t3_after'), 'a DDL after ROLLBACK PREPARED is delivered');
is( $node->safe_psql(
		'app',
		"SELECT count(*) FROM public.log_plain WHERE object_identity = 'public.p3'"),
	'0',
	'G3: ROLLBACK PREPARED delivers nothing');

# 4. A crash restart between PREPARE and COMMIT PREPARED: the prepared
# transaction is recovered, the pool's memory of it is not.
prepare_table('p4', 'g4');
deliver_and_idle_out('t4');
# the worker that probes app after the restart stays until told to leave,
# so that the test sees it come and go
$node->safe_psql('postgres',
	"ALTER SYSTEM SET ddl_notify.worker_idle_timeout = '1h'");
$node->stop('immediate');
$node->start;
is( $node->safe_psql(
		'postgres', "SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'g4'"),
	'1',
	'g4 was recovered');
isnt(DdlNotifyTest::wait_worker($node, 'app'),
	'', 'the launcher probes app after the restart');
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET ddl_notify.worker_idle_timeout');
$node->reload;
ok(DdlNotifyTest::wait_no_worker($node, 'app'),
	'the probe worker gave its slot back');
is(commit_prepared('g4'), 't',
	'G14: COMMIT PREPARED after the restart queued app at once');
ok(delivered('p4'),
	'G9/G14: COMMIT PREPARED after a crash restart gets a deliverer');

# Everything once, nothing pending.
DdlNotifyTest::check_exactly_once($node, 'app', 'plain',
	[ map { "public.$_" } qw(p1 t1 p2 t2 t3 t3_after p4 t4) ], 'G4');
is($node->safe_psql('app', 'SELECT count(*) FROM ddl_notify.event'),
	'0', 'the queue drained');

$node->stop;
done_testing();
