
# Copyright (c) 2026, the ddl_notify authors

# 070_postgis.pl: PostGIS, an extension of a few thousand objects, installed,
# used, updated and dropped in a database with ddl_notify and a recording
# subscriber (the cost side by side with and without ddl_notify is a bench
# figure: test/bench/postgis.sh, not a timed test).
#
# G2: CREATE EXTENSION postgis, ALTER EXTENSION postgis UPDATE (the path
#     3.3.2 -> 3.3.2next -> 3.3.2 that PostGIS ships to rerun its upgrade
#     script), a table with a geometry column, and DROP EXTENSION postgis
#     CASCADE are each captured exactly once and delivered: the delivered
#     events equal, command by command, what reference PL/pgSQL event
#     triggers saw (thousands of rows), the extension's member commands
#     flagged in_extension.  Catches: events lost or doubled inside a long
#     extension script (a batch, a memory context or a counter reset mid
#     script), in_extension wrong.
# G0: PostGIS works with ddl_notify present (a distance, a geometry column
#     registered in geometry_columns), and after the update and the drop
#     nothing of it is left.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('postgis');

my $node = EcoTest::node('postgis');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION ddl_notify');
EcoTest::reference($node, 'app');
EcoTest::recorder($node, 'app', 'all');
$node->safe_psql('app', 'TRUNCATE rec.ref');

$node->safe_psql('app', 'CREATE EXTENSION postgis');
is( $node->safe_psql(
		'app', q{SELECT ST_Distance(ST_MakePoint(0, 0), ST_MakePoint(3, 4))}),
	'5', 'PostGIS works');
$node->safe_psql('app',
	q{CREATE TABLE public.places (id int PRIMARY KEY, geom geometry(Point, 4326))});
is( $node->safe_psql(
		'app', q{SELECT f_table_name || ':' || type || ':' || srid FROM geometry_columns}),
	'places:POINT:4326', 'the geometry column is registered');
EcoTest::settled($node, 'app', 'create');
my $n = EcoTest::compare($node, 'app', 'all', 'CREATE EXTENSION postgis');
ok($n > 1000, "the reference saw $n commands");
is( $node->safe_psql(
		'app', q{SELECT string_agg(command_tag || ':' || object_identity, ' ' ORDER BY n)
			FROM rec.log_all WHERE NOT in_extension}),
	'CREATE EXTENSION:postgis CREATE TABLE:public.places CREATE INDEX:public.places_pkey',
	'the members of the extension are in_extension, CREATE EXTENSION and the table are not');

# The update path PostGIS ships for rerunning its upgrade script.
$node->safe_psql('app', 'TRUNCATE rec.ref, rec.log_all');
$node->safe_psql('app', q{ALTER EXTENSION postgis UPDATE TO '3.3.2next'; ALTER EXTENSION postgis UPDATE});
is($node->safe_psql('app', q{SELECT extversion FROM pg_extension WHERE extname = 'postgis'}),
	'3.3.2', 'ALTER EXTENSION postgis UPDATE there and back');
is( $node->safe_psql(
		'app', q{SELECT ST_Distance(ST_MakePoint(0, 0), ST_MakePoint(3, 4))}),
	'5', 'PostGIS works after the update');
EcoTest::settled($node, 'app', 'update');
$n = EcoTest::compare($node, 'app', 'all', 'ALTER EXTENSION postgis UPDATE');
ok($n > 1000, "the reference saw $n commands");
is( $node->safe_psql(
		'app', q{SELECT count(*) FROM rec.log_all WHERE command_tag = 'ALTER EXTENSION' AND NOT in_extension}),
	'2', 'two ALTER EXTENSION events (there and back)');

$node->safe_psql('app', 'TRUNCATE rec.ref, rec.log_all');
$node->safe_psql('app', 'DROP EXTENSION postgis CASCADE');
is($node->safe_psql('app', q{SELECT count(*) FROM pg_type WHERE typname = 'geometry'}),
	'0', 'DROP EXTENSION postgis removed it');
EcoTest::settled($node, 'app', 'drop');
$n = EcoTest::compare($node, 'app', 'all', 'DROP EXTENSION postgis CASCADE');
ok($n > 500, "the reference saw $n dropped objects");
is( $node->safe_psql(
		'app', q{SELECT count(*) FROM rec.log_all WHERE object_identity IN ('postgis', 'public.places.geom')}),
	'2', 'the extension and the cascaded geometry column are among them');

$node->stop;
done_testing();
