
# Copyright (c) 2026, the ddl_notify authors

# 080_dump_restore.pl: pg_dump -Fc / pg_restore of one database holding
# ddl_notify with two subscribers and every other extension of this suite in
# use (pgaudit, pg_cron with a job, pg_partman with a partition set,
# pg_repack, pglogical with its node, pgl_ddl_deploy deployed, PgQ with a
# queue, PostGIS with a geometry table), into a second cluster configured
# alike (pg_cron only installs in its cron.database_name, so the database
# keeps its name, as in a move to a new server).
#
# G13: the restore succeeds (pg_restore exits 0) and brings back both
#      subscribers with their handlers and owners, and the other extensions'
#      state (the cron job, the partman config, the queue, the geometry).
# G13, G6, G3: nothing is delivered twice: after the restore the recorders'
#      logs hold exactly the dumped rows plus the events of transactions that
#      committed after the subscribers' rows were restored (pg_restore's
#      post-data section, constraints and indexes, and its last pass, the
#      ACLs; nothing of its CREATE statements, which run before the data),
#      each once; DDL run after the restore by a session and by pg_partman's
#      maintenance is delivered once to each.  Catches: a restored
#      subscriber that replays the restore's own DDL (thousands of PostGIS
#      and partman objects) or receives an event twice (the recorders' UNIQUE
#      event_id makes a repeat fail).
# G10, G13: subscriber b belongs to app_owner, who may use the handler's
#      schema only after the ACL pass: restored before that, b waits
#      unconfirmed until resume() confirms it, then gets each event once
#      (docs/compatibility.md).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

my @exts = qw(pgaudit pg_cron pg_partman pg_repack pglogical pgl_ddl_deploy pgq postgis);
EcoTest::need_extensions(@exts);

my $conf = qq{cron.database_name = 'app'\nwal_level = logical\n};  # pgaudit.log 'none': PostGIS refuses to install under pgaudit.log = 'ddl'
my $preload = 'pgaudit,pg_cron,pg_partman_bgw,pglogical';
my $src = EcoTest::node('dumpsrc', preload => $preload, conf => $conf);
my $dst = EcoTest::node('dumpdst', preload => $preload, conf => $conf);
$_->safe_psql('postgres', 'CREATE ROLE app_owner LOGIN') for ($src, $dst);

$src->safe_psql('postgres', 'CREATE DATABASE app');
$src->safe_psql(
	'app', q{
CREATE EXTENSION pgaudit;
CREATE EXTENSION pg_cron;
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE EXTENSION pg_repack;
CREATE EXTENSION pglogical;
CREATE EXTENSION pgl_ddl_deploy;
CREATE EXTENSION pgq;
CREATE EXTENSION postgis;
CREATE EXTENSION ddl_notify;
});
EcoTest::recorder($src, 'app', 'a');
EcoTest::recorder($src, 'app', 'b');
$src->safe_psql(
	'app', q{
GRANT USAGE ON SCHEMA ddl_notify TO app_owner;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean) TO app_owner;
GRANT INSERT ON rec.log_b TO app_owner;
GRANT USAGE ON SEQUENCE rec.log_b_n_seq TO app_owner;
SELECT ddl_notify.unsubscribe('b');
SET ROLE app_owner;
SELECT ddl_notify.subscribe('b', 'rec.h_b(ddl_notify.event)');
RESET ROLE;
SELECT cron.schedule('nightly', '0 3 * * *', 'VACUUM');
CREATE TABLE public.metrics (id bigint NOT NULL, v text) PARTITION BY RANGE (id);
SELECT partman.create_parent('public.metrics', 'id', 'native', '10', p_premake := 2);
SELECT pglogical.create_node(node_name := 'n1', dsn := 'dbname=app');
INSERT INTO pgl_ddl_deploy.set_configs (set_name, include_schema_regex, lock_safe_deployment, allow_multi_statements)
VALUES ('default', '^public$', true, true);
SELECT pgl_ddl_deploy.deploy('default');
SELECT pgq.create_queue('q1');
CREATE TABLE public.places (id int PRIMARY KEY, geom geometry(Point, 4326));
INSERT INTO public.places VALUES (1, ST_SetSRID(ST_MakePoint(1, 2), 4326));
});
EcoTest::settled($src, 'app', 'source');
my %dumped = map { $_ => $src->safe_psql('app', "SELECT count(*) FROM rec.log_$_") } qw(a b);
ok($dumped{a} > 10 && $dumped{b} > 10, "both subscribers got the source's DDL ($dumped{a} and $dumped{b} events)");

my $file = $PostgreSQL::Test::Utils::tmp_check . '/app.dump';
$src->command_ok([ 'pg_dump', '-Fc', '-d', $src->connstr('app'), '-f', $file ], 'pg_dump -Fc');
$dst->safe_psql('postgres', 'CREATE DATABASE app');
my ($out, $err) = ('', '');
my $rc = $dst->run_log([ 'pg_restore', '-d', $dst->connstr('app'), $file ]);
ok($rc, 'pg_restore into the other cluster exits 0');

is( $dst->safe_psql('app', q{SELECT string_agg(name || ':' || handler::text || ':' || owner_name, ' ' ORDER BY name) FROM ddl_notify.subscriber}),
	'a:rec.h_a(ddl_notify.event):postgres b:rec.h_b(ddl_notify.event):app_owner',
	'both subscribers restored, with handler and owner');
is( $dst->safe_psql(
		'app', q{SELECT (SELECT count(*) FROM cron.job WHERE jobname = 'nightly') || ' '
			|| (SELECT count(*) FROM partman.part_config) || ' '
			|| (SELECT count(*) FROM pgq.queue WHERE queue_name = 'q1') || ' '
			|| (SELECT ST_AsText(geom) FROM public.places)}),
	'1 1 1 POINT(1 2)',
	"the other extensions' state came back (cron job, partman config, PgQ queue, geometry)");

# b runs as app_owner, who may use schema rec only once the restore's last
# pass (ACLs) ran.  When its row was restored its handler failed the checks
# for its owner: b waits, unconfirmed, until its owner or a superuser
# confirms it with resume() (docs/security.md), then gets what waited.
# (A build without that trust rule instead retries the permission error
# until the ACL pass; either way nothing is lost or doubled.)
my $state = $dst->safe_psql('app', q{SELECT state || ': ' || coalesce(last_error, '') FROM ddl_notify.subscriber_status WHERE name = 'b'});
like($state, qr/^(unconfirmed: .*permission denied for schema rec|active: |failing: permission denied for schema rec|active: permission denied for schema rec).*/,
	"b after the restore: $state");
$dst->safe_psql('app', q{SELECT ddl_notify.resume('b')}) if $state =~ /^unconfirmed/;
EcoTest::settled($dst, 'app', 'after the restore', past_errors => 1);
my %after;
for my $s (qw(a b))
{
	is($dst->safe_psql('app', "SELECT count(*) FROM rec.log_$s WHERE n <= $dumped{$s}"),
		$dumped{$s}, "$s: the dumped log rows came back");
	$after{$s} = $dst->safe_psql('app',
		"SELECT coalesce(string_agg(command_tag || ' ' || coalesce(object_identity, ''), E'\\n' ORDER BY n), '') FROM rec.log_$s WHERE n > $dumped{$s}");
	note "$s after the restore:\n$after{$s}";
	is( join(' ', grep { !/^(GRANT|REVOKE|ALTER TABLE|CREATE INDEX|CREATE TRIGGER) / } split /\n/, $after{$s}),
		'', "$s: of the restore, only what runs after the data (constraints, indexes, ACLs) was delivered");
	is($dst->safe_psql('app', "SELECT count(*) - count(DISTINCT event_id) FROM rec.log_$s WHERE n > $dumped{$s}"),
		'0', "$s: no event of the restore delivered twice");
}
is($after{a}, $after{b}, 'both subscribers got the same');

# DDL after the restore: a session's and pg_partman's maintenance.
$dst->safe_psql(
	'app', q{
CREATE TABLE public.after_restore (id int);
INSERT INTO public.metrics SELECT g, 'x' FROM generate_series(1, 25) g;
SELECT partman.run_maintenance('public.metrics');
});
EcoTest::settled($dst, 'app', 'after the DDL on the restored database', past_errors => 1);
for my $s (qw(a b))
{
	is( $dst->safe_psql(
			'app', qq{SELECT string_agg(object_identity || ':' || c, ' ' ORDER BY object_identity) FROM
					  (SELECT object_identity, count(*) AS c FROM rec.log_$s
					   WHERE command_tag = 'CREATE TABLE' AND object_identity IN ('public.after_restore', 'public.metrics_p30', 'public.metrics_p40')
					   GROUP BY 1) s}),
		'public.after_restore:1 public.metrics_p30:1 public.metrics_p40:1',
		"$s: the new DDL delivered once (a session's, pg_partman's new partitions)");
	is($dst->safe_psql('app', "SELECT count(*) - count(DISTINCT event_id) FROM rec.log_$s WHERE n > $dumped{$s}"),
		'0', "$s: no event delivered twice");
}

$src->stop;
$dst->stop;
done_testing();
