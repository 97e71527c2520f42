
# Copyright (c) 2026, the ddl_notify authors

# 060_pgl_ddl_deploy.pl: pgl_ddl_deploy (automatic DDL replication over
# pglogical) deployed for schema public on a pglogical provider that also has
# ddl_notify: two sets of event triggers, its (made by deploy()) and
# ddl_notify's, on the same commands.  The subscriber side of pglogical is
# 050_pglogical.pl's: pgl_ddl_deploy queues through the same pglogical queue.
#
# G2, G0: each DDL on public runs once, without error; pgl_ddl_deploy still
#      queues it for replication (pglogical.queue, pgl_ddl_deploy.events),
#      and ddl_notify records and delivers it exactly once, with the author's
#      role; pgl_ddl_deploy's own bookkeeping (rows in its tables and
#      pglogical's queue, a table added to the replication set) is no event,
#      and a DDL outside the deployed schema is recorded but not queued.
#      Catches: ddl_notify capturing a command twice when another event
#      trigger runs SQL in the same command, or failing on it.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('pglogical', 'pgl_ddl_deploy');

my $node = EcoTest::node('ddldeploy', preload => 'pglogical',
	conf => "wal_level = logical\nmax_replication_slots = 4\nmax_wal_senders = 4\n");
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql(
	'app', q{
CREATE EXTENSION pglogical;
CREATE EXTENSION pgl_ddl_deploy;
CREATE EXTENSION ddl_notify;
CREATE ROLE ddl_admin SUPERUSER LOGIN;
});
$node->safe_psql('app',
	"SELECT pglogical.create_node(node_name := 'provider', dsn := 'host="
	  . $node->host . ' port=' . $node->port . " dbname=app')");
$node->safe_psql(
	'app', q{
INSERT INTO pgl_ddl_deploy.set_configs (set_name, include_schema_regex, lock_safe_deployment, allow_multi_statements)
VALUES ('default', '^public$', true, true);
SELECT pgl_ddl_deploy.deploy('default');
});
is( $node->safe_psql(
		'app', q{SELECT count(*) > 0 FROM pg_event_trigger e JOIN pg_proc p ON p.oid = e.evtfoid
		  WHERE p.pronamespace = 'pgl_ddl_deploy'::regnamespace AND e.evtenabled <> 'D'}),
	't', "pgl_ddl_deploy's event triggers are deployed and enabled");
EcoTest::recorder($node, 'app', 'all');

my $q0 = $node->safe_psql('app', 'SELECT count(*) FROM pglogical.queue');
$node->safe_psql(
	'app', q{
SET ROLE ddl_admin;
CREATE TABLE public.t1 (id int PRIMARY KEY, v text);
ALTER TABLE public.t1 ADD COLUMN w int;
CREATE INDEX t1_v ON public.t1 (v);
CREATE SCHEMA other;
CREATE TABLE other.t2 (id int);
DROP TABLE public.t1 CASCADE;  -- its membership of the replication set
});
EcoTest::settled($node, 'app', 'after the DDL');

is( $node->safe_psql(
		'app', q{SELECT count(*) FROM pglogical.queue} ) - $q0,
	3,
	'pgl_ddl_deploy queued CREATE TABLE, ALTER TABLE, DROP TABLE on public for replication (not CREATE INDEX, which its default create_tags leave out, nor those on schema other)');
like(
	$node->safe_psql('app', q{SELECT string_agg(ddl_sql_raw, ' ' ORDER BY id) FROM pgl_ddl_deploy.events}),
	qr/^CREATE TABLE public\.t1 .*; ALTER TABLE public\.t1 ADD COLUMN w int; DROP TABLE public\.t1 CASCADE;$/s,
	'pgl_ddl_deploy logged them in its events table');
is( EcoTest::rows(
		$node, 'app', 'all',
		q{object_identity IN ('public.t1', 'public.t1_v', 'other', 'other.t2') AND object_type IN ('table', 'index', 'schema')}),
	join("\n",
		'CREATE TABLE|table|public.t1|ddl_admin',
		'ALTER TABLE|table|public.t1|ddl_admin',
		'CREATE INDEX|index|public.t1_v|ddl_admin',
		'CREATE SCHEMA|schema|other|ddl_admin',
		'CREATE TABLE|table|other.t2|ddl_admin',
		'DROP TABLE|table|public.t1|ddl_admin',
		'DROP TABLE|index|public.t1_v|ddl_admin'),
	'ddl_notify delivered each command once, as ddl_admin');
is($node->safe_psql('app', 'SELECT count(*) - count(DISTINCT event_id) FROM rec.log_all'),
	'0', 'no event delivered twice');
is( $node->safe_psql(
		'app',
		q{SELECT count(*) FROM rec.log_all WHERE object_identity LIKE 'pglogical.%' OR object_identity LIKE 'pgl_ddl_deploy.%'}),
	'0',
	"nothing of pgl_ddl_deploy's or pglogical's bookkeeping is an event");

$node->stop;
done_testing();
