
# Copyright (c) 2026, the ddl_notify authors

# 020_pg_cron.pl: DDL run by pg_cron jobs, with ddl_notify in the cron
# database (cron.database_name) and in another database that a job targets
# with cron.schedule_in_database.  pg_cron runs each job through a libpq
# connection as the job's user (the default, cron.use_background_workers =
# off); the schedule is '* * * * *' (pg_cron before 1.5 has no seconds), so
# this test waits up to a minute, on cron.job_run_details, never a sleep.
#
# G2, G10: the DDL of a job scheduled by an ordinary role (cron.schedule) and
#      of one scheduled for that role in another database
#      (cron.schedule_in_database ... username) is recorded with role_name =
#      the job's user and delivered exactly once; the jobs succeed (pg_cron
#      still does its job).  Catches: role_name taken from the session user
#      or the launcher, a capture error failing the job.
# G6: the CREATE EXTENSION pg_cron that came before the subscription is not
#      delivered; the job bookkeeping (INSERT/UPDATE of cron.job and
#      cron.job_run_details) is DML, and no event.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('pg_cron');

# pg_cron connects to cron.host, here the node's socket directory (the
# node listens on no TCP address).
my $node = EcoTest::node('cron', preload => 'pg_cron',
	conf => "cron.database_name = 'app'\n");
$node->append_conf('postgresql.conf', "cron.host = '" . $node->host . "'\n");
$node->restart;

$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql(
	'app', q{
CREATE EXTENSION pg_cron;
CREATE EXTENSION ddl_notify;
CREATE ROLE cron_user LOGIN;
GRANT USAGE ON SCHEMA cron TO cron_user;
GRANT CREATE ON SCHEMA public TO cron_user;
});
$node->safe_psql(
	'other', q{
CREATE EXTENSION ddl_notify;
GRANT CREATE ON SCHEMA public TO cron_user;
});
EcoTest::recorder($node, $_, 'all') for qw(app other);

$node->safe_psql(
	'app', q{
SET ROLE cron_user;
SELECT cron.schedule('mk', '* * * * *',
	$$CREATE TABLE IF NOT EXISTS public.from_cron (id int);
	  CREATE INDEX IF NOT EXISTS from_cron_id ON public.from_cron (id)$$);
RESET ROLE;
SELECT cron.schedule_in_database('mk_other', '* * * * *',
	'CREATE TABLE IF NOT EXISTS public.from_cron_other (id int)', 'other', 'cron_user');
});

# Both jobs ran once (up to a minute: the next minute boundary).
ok( $node->poll_query_until(
		'app', q{
SELECT count(DISTINCT jobid) = 2 FROM cron.job_run_details WHERE status IN ('succeeded', 'failed')}),
	'both jobs ran');
is( $node->safe_psql(
		'app',
		q{SELECT string_agg(DISTINCT j.jobname || ':' || d.status || ':' || d.username, ' ')
		  FROM cron.job_run_details d JOIN cron.job j USING (jobid)}),
	'mk:succeeded:cron_user mk_other:succeeded:cron_user',
	'pg_cron: both jobs succeeded as cron_user');
$node->safe_psql('app', q{SELECT cron.unschedule(jobid) FROM cron.job});

EcoTest::settled($node, $_, $_) for qw(app other);
is( EcoTest::rows($node, 'app', 'all', "object_identity LIKE 'public.from_cron%'"),
	"CREATE TABLE|table|public.from_cron|cron_user\nCREATE INDEX|index|public.from_cron_id|cron_user",
	'app: the job\'s DDL delivered once each, role_name cron_user');
is( EcoTest::rows($node, 'other', 'all', "object_identity LIKE 'public.from_cron%'"),
	"CREATE TABLE|table|public.from_cron_other|cron_user",
	'other (schedule_in_database): the job\'s DDL delivered once, role_name cron_user');
is($node->safe_psql('app', q{SELECT count(*) FROM rec.log_all WHERE command_tag = 'CREATE EXTENSION' OR object_identity LIKE 'cron.%'}),
	'0', 'nothing of pg_cron itself delivered (installed before the subscription; its bookkeeping is DML)');

$node->stop;
done_testing();
