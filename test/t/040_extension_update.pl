
# Copyright (c) 2026, the ddl_notify authors

# 040_extension_update.pl: ALTER EXTENSION ddl_notify UPDATE from every
# released version (0.1.0, the install script kept as released in sql/).
#
# G13: the library of this version works with the SQL objects of 0.1.0 until
#      the UPDATE (the test takes that side of "work or refuse clearly"):
#      subscribe() (also by a non-superuser), CALL deliver(), a failing
#      subscriber's recorded failure and its dead letters, all at 0.1.0.
#      Catches: the API or the engine using a 0.2.0 column without looking
#      (DdlnSubscriberHasNames).
# G13: after the UPDATE, the extension's objects are those of a fresh install
#      of the current version, compared generically: the list of member
#      objects (pg_depend), every member's definition as pg_dump
#      --binary-upgrade --schema-only prints it (normalised: OIDs, dropped
#      columns and other physical details left out; order ignored), and the
#      tables pg_dump keeps (extconfig).  Nothing is missing, nothing is left
#      over.  Catches: any statement of sql/ddl_notify.sql missing from (or
#      different in) sql/ddl_notify--0.1.0--0.2.0.sql, e.g. the
#      pg_extension_config_dump() calls or the subscriber_restore trigger.
# G13, G3, G5: the events pending at the UPDATE (for a healthy subscriber, a
#      failing one and a dead-lettering one) are delivered exactly once, in
#      order, after it; nothing delivered before is delivered again; the
#      dead letters of 0.1.0 are kept; the worker delivers on the updated
#      database after a restart.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $released = '0.1.0';

# Manual delivery first (no worker): the test decides what is pending.
my $node = DdlNotifyTest::new_node('update', conf => "ddl_notify.max_workers = 0\n");
my $current = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'ddl_notify'");

my $grants = q{
GRANT USAGE ON SCHEMA ddl_notify TO alice;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean) TO alice;
GRANT SELECT ON ddl_notify.subscriber_status TO alice;
};

$node->safe_psql('postgres', 'CREATE ROLE alice');
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', "CREATE EXTENSION ddl_notify VERSION '$released'");
is($node->safe_psql('old', "SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify'"),
	$released, "the database starts at $released");
DdlNotifyTest::lifecycle_handler($node, 'old', $_) for qw(good flaky dead);
$node->safe_psql('old', $grants);
$node->safe_psql(
	'old', q{
INSERT INTO public.gate VALUES ('flaky', false), ('dead', false);
SELECT ddl_notify.subscribe('flaky', 'public.lc_flaky(ddl_notify.event)');
SELECT ddl_notify.subscribe('dead', 'public.lc_dead(ddl_notify.event)', max_attempts => 1,
							command_tags => '{CREATE TABLE}');
});
is( $node->safe_psql(
		'old',
		"SET ROLE alice; SELECT ddl_notify.subscribe('good', 'public.lc_good(ddl_notify.event)') > 0"
	),
	't',
	"G13 at $released: subscribe() of this library works with the $released objects (as a non-superuser)"
);

DdlNotifyTest::create_tables($node, 'old', 'v', 1, 2);
$node->safe_psql('old', 'CALL ddl_notify.deliver()');
is( $node->safe_psql(
		'old',
		"SELECT string_agg(name || ':' || pending || ':' || attempts || ':' || dead_letters, ' ' ORDER BY name) FROM ddl_notify.subscriber_status"
	),
	'dead:0:0:2 flaky:2:1:0 good:0:0:0',
	"G13 at $released: CALL deliver() delivers, records the failure and writes dead letters"
);
is(DdlNotifyTest::lifecycle_log($node, 'old', 'good'),
	'public.v_1 public.v_2', "G13 at $released: good got v_1, v_2");

# pending at the UPDATE: v_3, v_4 for everyone, v_1, v_2 for flaky
DdlNotifyTest::create_tables($node, 'old', 'v', 3, 4);
my $dead_before = $node->safe_psql('old',
	"SELECT string_agg(id || ':' || subscriber || ':' || event_id || ':' || (event->>'object_identity'), ' ' ORDER BY id) FROM ddl_notify.dead_letter"
);

$node->safe_psql('old', 'ALTER EXTENSION ddl_notify UPDATE');
is($node->safe_psql('old', "SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify'"),
	$current, "ALTER EXTENSION ddl_notify UPDATE goes to $current");

# --- the objects: the same as a fresh install's ------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION ddl_notify');
$node->safe_psql('fresh', $grants);

my $members_q = q{
SELECT string_agg(pg_describe_object(classid, objid, objsubid), E'\n' ORDER BY 1)
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'ddl_notify')};
# "missing: ..." and "left over: ..." between two lists of items, '' if equal
sub set_difference
{
	my ($got, $want) = @_;
	my (%g, %w);
	$g{$_}++ for @$got;
	$w{$_}++ for @$want;
	my @missing = grep { ($w{$_} // 0) > ($g{$_} // 0) } sort keys %w;
	my @extra   = grep { ($g{$_} // 0) > ($w{$_} // 0) } sort keys %g;
	return join("\n",
		(map { "missing: $_" } @missing),
		(map { "left over: $_" } @extra));
}
is( set_difference(
		[ split /\n/, $node->safe_psql('old', $members_q) ],
		[ split /\n/, $node->safe_psql('fresh', $members_q) ]),
	'',
	'G13: the updated extension has the same member objects as a fresh install');

my $config_q = q{
SELECT string_agg(c::regclass::text || ' WHERE ' || coalesce(w, ''), E'\n' ORDER BY 1)
FROM pg_extension, unnest(extconfig, extcondition) AS u(c, w)
WHERE extname = 'ddl_notify'};
my $config = $node->safe_psql('fresh', $config_q);
is($node->safe_psql('old', $config_q), $config,
	'G13: the updated extension has pg_dump keep the same tables as a fresh install');
like($config, qr/ddl_notify\.subscriber WHERE/,
	'G13: pg_dump keeps ddl_notify.subscriber');

# Each member object as pg_dump defines it.  --binary-upgrade prints the
# extension's members one by one (a plain dump prints CREATE EXTENSION only);
# what only pg_upgrade needs (OIDs, dropped columns, frozen xids) and the
# sequences' positions are
# left out, and the objects are compared as a set.
sub extension_definitions
{
	my ($db) = @_;
	my ($out, $err);
	IPC::Run::run([ 'pg_dump', '--schema-only', '--binary-upgrade', '-d', $node->connstr($db) ],
		'>', \$out, '2>', \$err)
	  or die "pg_dump of $db failed: $err";
	# 19's --binary-upgrade also copies catalog rows (pg_shdepend) for
	# pg_upgrade, under a "-- Data for Name:" heading the split below does
	# not cut at: left out with the rest of what only pg_upgrade needs
	$out =~ s/^COPY pg_catalog\.\S+ .*? FROM stdin;\n.*?^\\\.\n//gms;
	my @keep;
	for my $block (split /\n(?=--\n-- Name: )/, $out)
	{
		my ($name, $type, $schema) =
		  $block =~ /^--\n-- Name: (.*?); Type: (.*?); Schema: (.*?);/
		  or next;
		next
		  unless $schema eq 'ddl_notify'
		  || $name =~ /^(?:(?:EXTENSION|SCHEMA) )?ddl_notify$/
		  || ($type eq 'EVENT TRIGGER' && $name =~ /^ddl_notify/);
		my @lines;
		for my $l (split /\n/, $block)
		{
			next if $l =~ /^--/ || $l =~ /^\s*$/;
			next if $l =~ /binary_upgrade_set_(?:next|missing_value)/;
			next if $l =~ /pg\.dropped/ || $l =~ /^\s*(?:SET|WHERE|AND) .*att/;
			next if $l =~ /^\\(?:un)?restrict / || $l =~ /^UPDATE pg_catalog\./;
			next if $l =~ /relfrozenxid|^WHERE oid = |pg_catalog\.setval\(/;
			$l =~ s/'\{[0-9,]*\}'/'{OIDS}'/
			  if $l =~ /binary_upgrade_create_empty_extension/;
			$l =~ s/,\s*$//;
			push @lines, $l;
		}
		push @keep, join("\n", @lines);
	}
	return @keep;
}
my @def_old   = extension_definitions('old');
my @def_fresh = extension_definitions('fresh');
ok((grep { /CREATE TABLE ddl_notify\.subscriber/ } @def_fresh),
	'the definitions include the extension\'s tables');
is(set_difference(\@def_old, \@def_fresh), '',
	'G13: every member object of the updated extension is defined as in a fresh install (pg_dump --binary-upgrade --schema-only, normalised)'
);

# --- nothing pending is lost -------------------------------------------------

is( $node->safe_psql(
		'old',
		"SELECT string_agg(concat_ws(':', name, handler, owner_name, handler_oid = to_regprocedure(handler)::oid), ' ' ORDER BY name) FROM ddl_notify.subscriber"
	),
	'dead:public.lc_dead(ddl_notify.event):postgres:t '
	  . 'flaky:public.lc_flaky(ddl_notify.event):postgres:t '
	  . 'good:public.lc_good(ddl_notify.event):alice:t',
	'G13: each subscriber names its handler (qualified signature) and owner after the update'
);
is( $node->safe_psql(
		'old',
		"SELECT string_agg(name || ':' || pending, ' ' ORDER BY name) FROM ddl_notify.subscriber_status"
	),
	'dead:2 flaky:4 good:2',
	'G13: the pending events are still pending after the update');
$node->safe_psql('old', "UPDATE public.gate SET open = true WHERE sub = 'flaky'");
$node->safe_psql('old', 'CALL ddl_notify.deliver()');
is(DdlNotifyTest::lifecycle_log($node, 'old', 'good'),
	'public.v_1 public.v_2 public.v_3 public.v_4',
	'G13: good got the pending v_3, v_4 after the update, each once, in order, and nothing again'
);
is(DdlNotifyTest::lifecycle_log($node, 'old', 'flaky'),
	'public.v_1 public.v_2 public.v_3 public.v_4',
	'G13: the failing subscriber got all four once, in order, once fixed');
is( $node->safe_psql(
		'old',
		"SELECT string_agg(id || ':' || subscriber || ':' || event_id || ':' || (event->>'object_identity'), ' ' ORDER BY id) FROM ddl_notify.dead_letter WHERE id <= 2"
	),
	$dead_before,
	"G13: the dead letters of $released are kept");
is( $node->safe_psql(
		'old',
		"SELECT string_agg(event->>'object_identity', ' ' ORDER BY id) FROM ddl_notify.dead_letter"
	),
	'public.v_1 public.v_2 public.v_3 public.v_4',
	'G13: the dead-lettering subscriber dead-lettered the pending events once each');
is( $node->safe_psql(
		'old', 'SELECT count(*) - count(DISTINCT (sub, event_id)) FROM public.lc_log'),
	'0', 'G13: no event handled twice');
is($node->safe_psql('old', 'SELECT count(*) FROM ddl_notify.event'),
	'0', 'G13: the queue drained');

# --- 0.1.0's other entry points, through the library's legacy names ---------
# (src/legacy.c): the drop and rewrite triggers, skip(), unsubscribe(),
# wait_for_delivery() and delivery_status() of a database at 0.1.0, then the
# UPDATE binds every C function to a ddl_notify_ symbol.

$node->safe_psql('postgres', 'CREATE DATABASE legacy');
$node->safe_psql('legacy', "CREATE EXTENSION ddl_notify VERSION '$released'");
DdlNotifyTest::lifecycle_handler($node, 'legacy', 'l');
$node->safe_psql('legacy', q{
SELECT ddl_notify.subscribe('l', 'public.lc_l(ddl_notify.event)');
CREATE TABLE public.w (a int);
ALTER TABLE public.w ALTER a TYPE bigint;
DROP TABLE public.w;
});
is( $node->safe_psql(
		'legacy',
		"SELECT string_agg(command_tag || '/' || object_type, ' ' ORDER BY id) FROM ddl_notify.event WHERE object_identity = 'public.w'"
	),
	'CREATE TABLE/table ALTER TABLE/table ALTER TABLE/table DROP TABLE/table',
	"G13 at $released: capture, the table rewrite and the drop are recorded through 0.1.0's symbols");
$node->safe_psql('legacy',
	"SELECT ddl_notify.skip('l', min(id)) FROM ddl_notify.event WHERE object_identity = 'public.w'");
is( $node->safe_psql(
		'legacy',
		"SELECT ddl_notify.delivery_status() <> '', ddl_notify.wait_for_delivery('0'), ddl_notify.unsubscribe('l')"
	),
	't|f|t',
	"G13 at $released: skip(), delivery_status(), wait_for_delivery() and unsubscribe() answer");
$node->safe_psql('legacy', 'ALTER EXTENSION ddl_notify UPDATE');
is( $node->safe_psql(
		'legacy', q{
SELECT string_agg(p.proname || '=' || p.prosrc, ' ' ORDER BY p.proname)
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid
	AND d.deptype = 'e'
	AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'ddl_notify')
WHERE p.prolang = (SELECT oid FROM pg_catalog.pg_language WHERE lanname = 'c')
  AND p.prosrc NOT LIKE 'ddl\_notify\_%'}),
	'',
	'G13: after the UPDATE no C function of the extension is bound to a 0.1.0 symbol');

# --- the worker on the updated database --------------------------------------

$node->append_conf('postgresql.conf', "ddl_notify.max_workers = 2\n");
$node->restart;
DdlNotifyTest::create_tables($node, 'old', 'v', 5, 5);
is(DdlNotifyTest::wait_for_delivery($node, 'old'),
	't', 'G13: the worker delivers on the updated database');
is(DdlNotifyTest::lifecycle_log($node, 'old', 'good'),
	'public.v_1 public.v_2 public.v_3 public.v_4 public.v_5',
	'G13: good got v_5 from the worker, once');

done_testing();
