
# Copyright (c) 2026, the ddl_notify authors

# 030_pg_partman.pl: pg_partman's partition maintenance, native id-based
# partitioning (interval 10), run two ways: partman.run_maintenance() called
# by the tables' owner in database "app", and pg_partman's background worker
# (pg_partman_bgw, interval 1 s, role partman_user) in database "bgw".
# Maintenance creates partitions ahead of the data (premake) and, with a
# retention set, drops the old ones.
#
# G2: every partition pg_partman creates and every one its retention drops,
#     whether the maintenance ran in a session or in its background worker,
#     is recorded and delivered exactly once: the CREATE TABLE events are
#     exactly the partitions that appeared in pg_inherits, the DROP TABLE
#     events exactly those that left.  Catches: capture that misses DDL run
#     by a background worker (no client, no portal), or DDL run from
#     PL/pgSQL EXECUTE inside a function.
# G10: role_name is the role maintenance ran as (partman_user, the table
#     owner calling run_maintenance(), and pg_partman_bgw.role in the worker).
# G14: the database written by a background worker, which never had a
#     client session after the subscription, gets delivery without any call.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('pg_partman');

my $node = EcoTest::node('partman', preload => 'pg_partman_bgw');

# partman_user, as pg_partman's documentation sets up a non-superuser.
for my $db (qw(app bgw))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql('postgres', 'CREATE ROLE partman_user LOGIN') if $db eq 'app';
	$node->safe_psql(
		$db, q{
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE EXTENSION ddl_notify;
GRANT ALL ON SCHEMA partman TO partman_user;
GRANT ALL ON ALL TABLES IN SCHEMA partman TO partman_user;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA partman TO partman_user;
GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA partman TO partman_user;
GRANT CREATE ON SCHEMA public TO partman_user;
GRANT TEMPORARY ON DATABASE } . $db . q{ TO partman_user;
SET ROLE partman_user;
CREATE TABLE public.metrics (id bigint NOT NULL, v text) PARTITION BY RANGE (id);
SELECT partman.create_parent('public.metrics', 'id', 'native', '10', p_premake := 2);
});
	EcoTest::recorder($node, $db, 'all');
}

my $children = q{SELECT string_agg(c.relname, ' ' ORDER BY c.relname)
	FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'public.metrics'::regclass AND c.relname <> 'metrics_default'};
my %before = map { $_ => $node->safe_psql($_, $children) } qw(app bgw);
is($before{app}, 'metrics_p0 metrics_p10 metrics_p20', 'create_parent made p0..p20');

# Maintenance in a session: data up to 25 needs p30 and p40 (premake 2);
# a retention of 20 then drops what lies entirely below 45 - 20.
$node->safe_psql(
	'app', q{
SET ROLE partman_user;
INSERT INTO public.metrics SELECT g, 'x' FROM generate_series(1, 25) g;
SELECT partman.run_maintenance('public.metrics');
INSERT INTO public.metrics SELECT g, 'x' FROM generate_series(26, 45) g;
SELECT partman.run_maintenance('public.metrics');
UPDATE partman.part_config SET retention = '20', retention_keep_table = false
	WHERE parent_table = 'public.metrics';
SELECT partman.run_maintenance('public.metrics');
});
my $after = $node->safe_psql('app', $children);
isnt($after, $before{app}, "pg_partman's run_maintenance() changed the partitions ($after)");

# The events are exactly the partitions that came and went.
sub expect_events
{
	my ($db, $before, $after, $label) = @_;
	my %b = map { $_ => 1 } split / /, $before;
	my %a = map { $_ => 1 } split / /, $after;
	my @created = grep { !$b{$_} } sort keys %a;
	my @dropped = grep { !$a{$_} } sort keys %b;
	ok(@created && @dropped, "$label: partitions created (@created) and dropped (@dropped)");
	EcoTest::settled($node, $db, $label);
	is( $node->safe_psql(
			$db, q{
SELECT string_agg(split_part(object_identity, '.', 2), ' ' ORDER BY object_identity)
FROM rec.log_all WHERE command_tag = 'CREATE TABLE' AND object_identity LIKE 'public.metrics_p%'}),
		join(' ', @created),
		"$label: one CREATE TABLE delivered per partition created");
	is( $node->safe_psql(
			$db, q{
SELECT string_agg(split_part(object_identity, '.', 2), ' ' ORDER BY object_identity)
FROM rec.log_all WHERE command_tag = 'DROP TABLE' AND object_type = 'table'
  AND object_identity LIKE 'public.metrics_p%'}),
		join(' ', @dropped),
		"$label: one DROP TABLE delivered per partition dropped");
	is( $node->safe_psql(
			$db, q{SELECT string_agg(DISTINCT role_name, ' ') FROM rec.log_all}),
		'partman_user', "$label: every event's role_name is partman_user");
	return;
}
expect_events('app', $before{app}, $after, 'run_maintenance()');

# The background worker: only configured now, for database bgw.
$node->append_conf(
	'postgresql.conf', q{
pg_partman_bgw.dbname = 'bgw'
pg_partman_bgw.role = 'partman_user'
pg_partman_bgw.interval = 1
});
$node->restart;
# Rows go to the default partition unless theirs exists: give the worker
# time to make p30 and p40 before rows of 30..45 arrive.
$node->safe_psql('bgw', q{INSERT INTO public.metrics SELECT g, 'x' FROM generate_series(1, 25) g});
my $has = q{SELECT count(*) FILTER (WHERE c.relname = '%s') = 1 AND count(*) FILTER (WHERE c.relname = '%s') = 0
	FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'public.metrics'::regclass};
ok($node->poll_query_until('bgw', sprintf($has, 'metrics_p40', 'none')),
	'pg_partman_bgw made p30 and p40 ahead of the data');
$node->safe_psql(
	'bgw', q{
INSERT INTO public.metrics SELECT g, 'x' FROM generate_series(26, 45) g;
UPDATE partman.part_config SET retention = '20', retention_keep_table = false;
});
ok($node->poll_query_until('bgw', sprintf($has, 'metrics_p60', 'metrics_p10')),
	'pg_partman_bgw made p50 and p60, and its retention dropped p0 and p10');
$after = $node->safe_psql('bgw', $children);
expect_events('bgw', $before{bgw}, $after, 'pg_partman_bgw');

$node->stop;
done_testing();
