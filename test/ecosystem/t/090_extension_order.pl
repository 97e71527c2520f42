
# Copyright (c) 2026, the ddl_notify authors

# 090_extension_order.pl: CREATE / ALTER / DROP EXTENSION of the other
# extensions with ddl_notify installed before them, and after them, in one
# database (pg_cron installs only in cron.database_name), all preloaded.
#
# Phase 1, ddl_notify first: CREATE EXTENSION of each other extension, at an
#   older version where Debian ships an update path (pg_cron 1.0, pglogical
#   2.2.0, pgl_ddl_deploy 2.0), then ALTER EXTENSION ... UPDATE.
# Phase 2, ddl_notify last: DROP EXTENSION ddl_notify CASCADE with all of
#   them present, then CREATE EXTENSION ddl_notify VERSION '0.1.0' and ALTER
#   EXTENSION ddl_notify UPDATE beside them, a new subscriber, then DROP
#   EXTENSION of each other extension.
#
# G2: in both phases the delivered events are, command by command, what
#     reference PL/pgSQL event triggers saw (each CREATE/ALTER/DROP EXTENSION
#     and each command of the extensions' scripts exactly once, members
#     flagged in_extension).  Catches: events of extension scripts lost or
#     doubled, a script's SET search_path or its own event triggers
#     (pgl_ddl_deploy, pglogical) disturbing capture.
# G0: each extension's CREATE, UPDATE and DROP succeed beside ddl_notify, and
#     ddl_notify's install, update and drop succeed beside them, leaving
#     them working (a pg_cron job, a pgq queue, a PostGIS call after the
#     DROP of ddl_notify).
# G13: ALTER EXTENSION ddl_notify UPDATE from 0.1.0 beside the others.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

# In dependency order (pgl_ddl_deploy needs pglogical); VERSION to start at.
my @exts = (
	[ 'pg_cron',        '1.0' ],
	[ 'pglogical',      '2.2.0' ],
	[ 'pgl_ddl_deploy', '2.0' ],
	[ 'pg_partman',     undef ],
	[ 'pg_repack',      undef ],
	[ 'pgq',            undef ],
	[ 'pgaudit',        undef ],
	[ 'postgis',        undef ]);
EcoTest::need_extensions(map { $_->[0] } @exts);

my $node = EcoTest::node('order', preload => 'pgaudit,pg_cron,pglogical',
	conf => "cron.database_name = 'app'\n");
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION ddl_notify');
EcoTest::reference($node, 'app');
EcoTest::recorder($node, 'app', 'first');
$node->safe_psql('app', 'TRUNCATE rec.ref');

# Phase 1: ddl_notify first.
for my $e (@exts)
{
	my ($name, $old) = @$e;
	my $schema = $name eq 'pg_partman' ? 'SCHEMA partman' : '';
	$node->safe_psql('app', 'CREATE SCHEMA partman') if $name eq 'pg_partman';
	$node->safe_psql('app',
		"CREATE EXTENSION $name $schema" . (defined $old ? " VERSION '$old'" : ''));
	$node->safe_psql('app', "ALTER EXTENSION $name UPDATE");
}
is( $node->safe_psql(
		'app', q{SELECT string_agg(extname || ':' || (extversion = v.default_version)::text, ' ' ORDER BY extname)
			FROM pg_extension x JOIN pg_available_extensions v ON v.name = x.extname WHERE extname <> 'plpgsql'}),
	join(' ', map { "$_:true" } sort('ddl_notify', map { $_->[0] } @exts)),
	'phase 1: every extension created and updated to its default version beside ddl_notify');
EcoTest::settled($node, 'app', 'phase 1');
EcoTest::compare($node, 'app', 'first', 'phase 1 (ddl_notify first)');
# (ALTER EXTENSION UPDATE at the current version does nothing, and no event
# trigger fires; an update script may itself ALTER EXTENSION ADD/DROP.)
is( $node->safe_psql(
		'app', q{SELECT string_agg(object_identity || ':' || c || ':' || a, ' ' ORDER BY object_identity)
			FROM (SELECT object_identity, count(*) FILTER (WHERE command_tag = 'CREATE EXTENSION') AS c,
						 count(*) FILTER (WHERE command_tag = 'ALTER EXTENSION') > 0 AS a
				  FROM rec.log_first WHERE object_type = 'extension' GROUP BY 1) s}),
	join(' ', map { "$_->[0]:1:" . (defined $_->[1] ? 'true' : 'false') } sort { $a->[0] cmp $b->[0] } @exts),
	'phase 1: each CREATE EXTENSION delivered once, ALTER EXTENSION UPDATE for those with an update path');

# Phase 2: ddl_notify dropped beside them and installed after them.
$node->safe_psql('app', 'DROP EXTENSION ddl_notify CASCADE');
is( $node->safe_psql(
		'app', q{SELECT (SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'ddl_notify%') || ' '
			|| (SELECT count(*) FROM pg_class WHERE relnamespace = 'ddl_notify'::regnamespace) || ' '
			|| ST_Distance(ST_MakePoint(0, 0), ST_MakePoint(3, 4)) || ' '
			|| pgq.create_queue('q_after_drop')}),
	'0 0 5 1',
	'phase 2: DROP EXTENSION ddl_notify left nothing of it, PostGIS and PgQ work');
$node->safe_psql('app', q{CREATE EXTENSION ddl_notify VERSION '0.1.0'; ALTER EXTENSION ddl_notify UPDATE});
is($node->safe_psql('app', q{SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify'}),
	$node->safe_psql('app', q{SELECT default_version FROM pg_available_extensions WHERE name = 'ddl_notify'}),
	'phase 2: ddl_notify installed at 0.1.0 and updated beside the others');
EcoTest::recorder($node, 'app', 'last');
$node->safe_psql('app', 'TRUNCATE rec.ref');
$node->safe_psql('app', q{SELECT cron.schedule('j', '0 3 * * *', 'VACUUM')});
is($node->safe_psql('app', q{SELECT count(*) FROM cron.job}), '1', 'pg_cron works');
for my $e (reverse @exts)
{
	$node->safe_psql('app', "DROP EXTENSION $e->[0] CASCADE");
}
EcoTest::settled($node, 'app', 'phase 2');
EcoTest::compare($node, 'app', 'last', 'phase 2 (ddl_notify last)');
is( $node->safe_psql(
		'app', q{SELECT string_agg(object_identity, ' ' ORDER BY object_identity)
			FROM rec.log_last WHERE command_tag = 'DROP EXTENSION' AND object_type = 'extension'}),
	join(' ', sort map { $_->[0] } @exts),
	'phase 2: each DROP EXTENSION delivered once');

$node->stop;
done_testing();
