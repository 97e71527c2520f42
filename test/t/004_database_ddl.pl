
# Copyright (c) 2026, the ddl_notify authors

# 004_database_ddl.pl: the worker stays out of the way of database-level DDL.
#
# G11: DROP DATABASE (no FORCE), ALTER DATABASE ... RENAME and
#      CREATE DATABASE ... TEMPLATE of a database that has the extension and
#      a running worker (idle, or busy inside a handler) succeed at the first
#      attempt, as they would without ddl_notify: one statement, no retry.
# G9:  after RENAME, delivery in the renamed database resumes by itself; a
#      database created from a template that has the extension gets a worker
#      and delivery by itself; the template's own delivery resumes too.  No
#      crash restart happens along the way.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('dbddl');

# setup(DB): extension, one logging subscriber, some delivered events, a
# running worker.  Returns the identities of the tables it created.
sub setup
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	DdlNotifyTest::setup_db($node, $db);
	DdlNotifyTest::setup_subscriber($node, $db, 's', unique => 1);
	my @ids = DdlNotifyTest::create_tables($node, $db, 'pre', 1, 2);
	is(DdlNotifyTest::wait_for_delivery($node, $db),
		't', "G11 setup: $db delivers");
	isnt(DdlNotifyTest::wait_worker($node, $db),
		'', "G11 setup: $db has a running worker");
	return @ids;
}

# run_once(SQL, LABEL): one statement from "postgres"; it must succeed at
# once.
sub run_once
{
	my ($sql, $label) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $t0 = time;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);
	note sprintf('%s took %.3f s', $sql, time - $t0);
	is($ret, 0, "G11: $label succeeds at the first attempt");
	is($stderr, '', "G11: $label reports no error");
	return;
}

my $launcher = DdlNotifyTest::launcher_pid($node);
my $log_offset = -s $node->logfile;

# --- DROP DATABASE, worker idle ----------------------------------------------

setup('victim');
run_once('DROP DATABASE victim', 'DROP DATABASE with an idle worker');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_database WHERE datname = 'victim'"),
	'0', 'G11: the database is gone');

# --- DROP DATABASE, worker busy inside a handler -----------------------------

setup('victim2');
$node->safe_psql(
	'victim2', q{
CREATE ROLE ddln_busy;
CREATE FUNCTION public.h_busy(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	-- stays in the handler until role ddln_busy is dropped
	WHILE EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'ddln_busy') LOOP
		PERFORM pg_catalog.pg_sleep(0.01);
	END LOOP;
END
$$;
SELECT ddl_notify.subscribe('busy', 'public.h_busy(ddl_notify.event)');
CREATE TABLE public.keeps_it_busy (id int);
});
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' "
		  . "AND datname = 'victim2' AND query LIKE 'ddl_notify: delivering % to subscriber \"busy\"'"
	),
	'G11: the worker of victim2 is busy inside a handler');
run_once('DROP DATABASE victim2', 'DROP DATABASE with a worker busy in a handler');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_database WHERE datname = 'victim2'"),
	'0', 'G11: the database is gone');
$node->safe_psql('postgres', 'DROP ROLE ddln_busy');

# --- RENAME and TEMPLATE ------------------------------------------------------

my @ren  = setup('ren');
my @tmpl = setup('tmpl');

run_once('ALTER DATABASE ren RENAME TO ren2', 'ALTER DATABASE ... RENAME');
run_once('CREATE DATABASE copy TEMPLATE tmpl', 'CREATE DATABASE ... TEMPLATE');

push @ren, DdlNotifyTest::create_tables($node, 'ren2', 'post', 1, 2);
my @copy = (@tmpl, DdlNotifyTest::create_tables($node, 'copy', 'post', 1, 2));
push @tmpl, DdlNotifyTest::create_tables($node, 'tmpl', 'post', 1, 2);

is(DdlNotifyTest::wait_for_delivery($node, 'copy'),
	't', 'G9: the database made from the template gets delivery by itself');
isnt(DdlNotifyTest::worker_pid($node, 'copy'),
	'', 'G9: ... from its own worker');
DdlNotifyTest::check_exactly_once($node, 'copy', 's', \@copy, 'G9 copy');

is(DdlNotifyTest::wait_for_delivery($node, 'ren2'),
	't', 'G9: delivery in the renamed database resumes by itself');
isnt(DdlNotifyTest::worker_pid($node, 'ren2'),
	'', 'G9: ... from a worker connected to the new name');
DdlNotifyTest::check_exactly_once($node, 'ren2', 's', \@ren, 'G9 renamed');

is(DdlNotifyTest::wait_for_delivery($node, 'tmpl'),
	't', 'G9: delivery in the template database resumes by itself');
DdlNotifyTest::check_exactly_once($node, 'tmpl', 's', \@tmpl, 'G9 template');

is(DdlNotifyTest::launcher_pid($node),
	$launcher, 'G9: no crash restart (launcher pid unchanged)');
ok( !$node->log_contains(
		'terminating any other active server processes|was terminated by signal',
		$log_offset),
	'G9: no process crashed (server log)');

$node->stop;
done_testing();
