
# Copyright (c) 2026, the ddl_notify authors

# 030_dump_restore.pl: pg_dump / pg_restore of a database with ddl_notify.
#
# G13: every format (plain through psql, custom, directory with --jobs 2 for
#      both pg_dump and pg_restore, tar) brings back every subscriber with
#      its id, name, handler, owner, filters, max_attempts, echo and
#      counters, and every dead letter.  Catches: the
#      pg_extension_config_dump() registrations removed (no subscriber, no
#      dead letter comes back).
# G13, G6: a restored subscriber receives exactly the DDL transactions that
#      commit after its row was restored: none of the restore's own CREATE
#      statements (they run before the data), the restore's GRANTs (its
#      last pass, after the data) and everything after the restore, each
#      once.  Events pending at dump time are not carried: the restored
#      subscriber has nothing pending, no failure state, and restored_at
#      says when it came back.  Catches: subscriber_restore() not re-taking
#      the subscription point (the old database's snapshot and xid make the
#      new database's events invisible or the restore's own DDL pending).
# G13: subscribe() after a restore gets a new id (the id sequence comes
#      back) and the restored slots are kept.
# G13: into another cluster that lacks the owner role: a clear error in
#      subscriber_status (42704) instead of a wrong role, and delivery once
#      the role exists; a handler that did not come back (its schema left
#      out of the dump): a clear error (42883), and delivery once it exists.
# G13: --schema-only gives the extension without subscribers; --schema-only
#      then --data-only gives them back; --exclude-schema=ddl_notify keeps
#      CREATE EXTENSION but no subscriber (as pg_cron's cron.job; restored
#      after CREATE EXTENSION, docs/operations.md), and so does
#      --exclude-table-data='ddl_notify.*'.
# G10: restored subscribers run as their owner.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('dump');
my $tmp  = $PostgreSQL::Test::Utils::tmp_check;

$node->safe_psql('postgres', 'CREATE DATABASE src');
DdlNotifyTest::setup_db($node, 'src');
DdlNotifyTest::lifecycle_handler($node, 'src', $_) for qw(all filt dead flaky);
$node->safe_psql(
	'src', q{
CREATE ROLE alice;
GRANT USAGE ON SCHEMA ddl_notify TO alice;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean) TO alice;
CREATE SCHEMA gone;
CREATE FUNCTION gone.lc_gone(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.lc_log (sub, event_id, command_tag, object_identity)
		  VALUES ('gone', e.id, e.command_tag, e.object_identity) $$;
INSERT INTO public.gate VALUES ('dead', false), ('flaky', false);
SET ROLE alice;
SELECT ddl_notify.subscribe('all', 'public.lc_all(ddl_notify.event)');
RESET ROLE;
SELECT ddl_notify.subscribe('filt', 'public.lc_filt(ddl_notify.event)',
	command_tags => '{CREATE TABLE}', object_types => '{table}', schemas => '{public}',
	max_attempts => 3, echo => true);
SELECT ddl_notify.subscribe('dead', 'public.lc_dead(ddl_notify.event)', max_attempts => 1,
	command_tags => '{CREATE TABLE}');
SELECT ddl_notify.subscribe('flaky', 'public.lc_flaky(ddl_notify.event)');
SELECT ddl_notify.subscribe('gone', 'gone.lc_gone(ddl_notify.event)');
});
DdlNotifyTest::create_tables($node, 'src', 'd', 1, 3);
$node->poll_query_until(
	'src', q{
SELECT (SELECT count(*) FROM ddl_notify.dead_letter) = 3
   AND (SELECT pending FROM ddl_notify.subscriber_status WHERE name = 'all') = 0
   AND (SELECT attempts > 0 AND pending = 3 FROM ddl_notify.subscriber_status WHERE name = 'flaky')
}) or die 'the source database did not settle';

my $subs_q = q{SELECT string_agg(concat_ws(':', id, name, slot, handler, owner_name,
	command_tags, object_types, schemas, max_attempts, echo, dead_letters),
	' ' ORDER BY name) FROM ddl_notify.subscriber};
my $dead_q = q{SELECT string_agg(concat_ws(':', id, subscriber, event_id,
	event->>'object_identity', attempts, sqlstate, error), ' ' ORDER BY id)
	FROM ddl_notify.dead_letter};
my $src_subs = $node->safe_psql('src', $subs_q);
my $src_dead = $node->safe_psql('src', $dead_q);
like($src_subs, qr/^\d+:all:.*:alice:/, 'the source has its subscribers');

my $conn = sub { $node->connstr($_[0]) };

# Restore the formats, each into a new database.
my %restore = (
	plain => sub {
		my $db = shift;
		command_ok([ 'pg_dump', '-d', $conn->('src'), '-f', "$tmp/src.sql" ],
			'pg_dump (plain)');
		command_ok(
			[
				'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
				'-d', $conn->($db), '-f', "$tmp/src.sql"
			],
			'psql restores the plain dump');
	},
	custom => sub {
		my $db = shift;
		command_ok([ 'pg_dump', '-d', $conn->('src'), '-Fc', '-f', "$tmp/src.dump" ],
			'pg_dump -Fc');
		command_ok([ 'pg_restore', '-d', $conn->($db), "$tmp/src.dump" ],
			'pg_restore of the custom dump');
	},
	directory_jobs => sub {
		my $db = shift;
		command_ok(
			[ 'pg_dump', '-d', $conn->('src'), '-Fd', '-j', '2', '-f', "$tmp/src.dir" ],
			'pg_dump -Fd --jobs 2');
		command_ok([ 'pg_restore', '-j', '2', '-d', $conn->($db), "$tmp/src.dir" ],
			'pg_restore --jobs 2 of the directory dump');
	},
	tar => sub {
		my $db = shift;
		command_ok([ 'pg_dump', '-d', $conn->('src'), '-Ft', '-f', "$tmp/src.tar" ],
			'pg_dump -Ft');
		command_ok([ 'pg_restore', '-d', $conn->($db), "$tmp/src.tar" ],
			'pg_restore of the tar dump');
	});

for my $format (sort keys %restore)
{
	my $db = "dst_$format";
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	# transaction ids are the cluster's: one that committed before the restore
	my $xid_before = $node->safe_psql('postgres', 'SELECT pg_current_xact_id()');
	$restore{$format}->($db);

	is($node->safe_psql($db, $subs_q), $src_subs,
		"G13 $format: every subscriber is back with its id, name, slot, handler, owner, filters, max_attempts, echo and dead-letter count"
	);
	is($node->safe_psql($db, $dead_q), $src_dead,
		"G13 $format: every dead letter is back");
	# The restore's statements after the data (constraints, GRANTs) may
	# already be pending or failing for the subscribers without filters
	# (flaky's gate is closed here too); nothing of the source database's
	# queue (CREATE TABLE d_*) or failures is.
	is( $node->safe_psql(
			$db, q{
SELECT string_agg(concat_ws(':', s.name, s.restored_at IS NOT NULL, s.handler_oid::regprocedure::text,
	(SELECT count(*) FROM ddl_notify.event e
	 WHERE ddl_notify.is_pending(e.processed, e.xid, s.slot, s.start_snapshot, s.start_xid)
	   AND e.command_tag = 'CREATE TABLE'),
	s.failing_event IS NULL OR EXISTS (SELECT 1 FROM ddl_notify.event e
									   WHERE e.id = s.failing_event AND e.command_tag <> 'CREATE TABLE')),
	' ' ORDER BY s.name)
FROM ddl_notify.subscriber s}),
		'all:t:lc_all(ddl_notify.event):0:t dead:t:lc_dead(ddl_notify.event):0:t '
		  . 'filt:t:lc_filt(ddl_notify.event):0:t flaky:t:lc_flaky(ddl_notify.event):0:t '
		  . 'gone:t:gone.lc_gone(ddl_notify.event):0:t',
		"G13 $format: restored subscribers: restored_at set, handlers resolved here, none of the events pending at dump time carried, no failure of the source database"
	);
	is( $node->safe_psql(
			$db,
			"SELECT count(*) FROM ddl_notify.subscriber WHERE restored_at IS NOT NULL AND restored_at < now() AND start_xid <> '0'"
		),
		'5',
		"G13 $format: subscriber_status and the table say when each subscriber was restored"
	);

	is( $node->safe_psql(
			$db,
			"SELECT count(*) FROM ddl_notify.subscriber WHERE pg_visible_in_snapshot('$xid_before', start_snapshot) AND start_xid > '$xid_before'"
		),
		'5',
		"G13/G6 $format: each restored subscriber's subscription point is the restore's: what committed before it is not pending"
	);

	# the flaky one is fixed here; dead still fails
	$node->safe_psql($db, "UPDATE public.gate SET open = true WHERE sub = 'flaky'");
	DdlNotifyTest::create_tables($node, $db, 'after', 1, 2);
	$node->poll_query_until(
		$db, q{
SELECT count(*) = 0 FROM ddl_notify.subscriber_status
WHERE pending > 0 AND name <> 'dead'}) or die "$format: no delivery";
	$node->poll_query_until($db,
		"SELECT count(*) = 5 FROM ddl_notify.dead_letter")
	  or die "$format: no dead letters";
	for my $sub (qw(all filt flaky gone))
	{
		is(DdlNotifyTest::lifecycle_log($node, $db, $sub, "db = '$db'"),
			'public.after_1 public.after_2',
			"G13/G6 $format: $sub received the tables created after the restore, once each, in order, and none the restore created"
		);
	}
	is( $node->safe_psql(
			$db,
			"SELECT string_agg(event->>'object_identity', ' ' ORDER BY id) FROM ddl_notify.dead_letter WHERE id > 3"
		),
		'public.after_1 public.after_2',
		"G13 $format: dead (max_attempts 1) dead-letters the new events after its old dead letters"
	);
	is( $node->safe_psql(
			$db,
			"SELECT count(*) > 0 FROM public.lc_log WHERE db = '$db' AND sub = 'all' AND command_tag = 'GRANT'"
		),
		't',
		"G13 $format: the restore's own GRANTs (run after the data) reach the restored subscriber without filters"
	);
	is( $node->safe_psql(
			$db,
			"SELECT count(*) FROM public.lc_log WHERE db = '$db' AND command_tag <> 'CREATE TABLE' AND sub = 'filt'"
		),
		'0',
		"G13 $format: the restored filters still apply");
	is( $node->safe_psql(
			$db,
			"SELECT count(*) - count(DISTINCT (sub, event_id)) FROM public.lc_log WHERE db = '$db'"
		),
		'0',
		"G13 $format: no event handled twice");
	is( $node->safe_psql(
			$db,
			"SELECT string_agg(DISTINCT as_user, ',') FROM public.lc_log WHERE db = '$db' AND sub = 'all'"
		),
		'alice',
		"G10/G13 $format: the restored subscriber of alice runs as alice");
	my $max_id = $node->safe_psql($db, 'SELECT max(id) FROM ddl_notify.subscriber');
	cmp_ok(
		$node->safe_psql(
			$db, "SELECT ddl_notify.subscribe('new', 'public.lc_all(ddl_notify.event)')"),
		'>', $max_id,
		"G13 $format: subscribe() after the restore gets a new id (the id sequence came back)"
	);
	# its failing subscribers would keep a worker of the pool busy
	$node->safe_psql('postgres', "DROP DATABASE $db");
}

# --- another cluster, without the owner role -------------------------------

my $other = DdlNotifyTest::new_node('other');
$other->safe_psql('postgres', 'CREATE DATABASE dst');
command_ok(
	[ 'pg_restore', '--no-owner', '--no-acl', '-d', $other->connstr('dst'), "$tmp/src.dump" ],
	'pg_restore into another cluster, without owners and grants');
like(
	$other->safe_psql(
		'dst',
		"SELECT concat_ws(':', owner, last_error_sqlstate, last_error) FROM ddl_notify.subscriber_status WHERE name = 'all'"
	),
	qr/^-:42704:role "alice" that owns (?:restored subscriber|subscriber "all") does not exist/,
	'G13 other cluster: a restored subscriber whose owner role is missing says so in subscriber_status'
);
DdlNotifyTest::create_tables($other, 'dst', 'o', 1, 1);
$other->poll_query_until('dst',
	"SELECT attempts > 0 FROM ddl_notify.subscriber_status WHERE name = 'all'")
  or die 'no attempt';
like(
	$other->safe_psql(
		'dst',
		"SELECT last_error_sqlstate || ' ' || last_error FROM ddl_notify.subscriber_status WHERE name = 'all'"
	),
	qr/^42704 role "alice" that owns subscriber "all" does not exist/,
	'G13 other cluster: delivery to it fails with a clear error, not as another role');
is( $other->safe_psql('dst',
		"SELECT count(*) FROM public.lc_log WHERE db = 'dst' AND sub = 'all'"),
	'0', 'G13 other cluster: nothing ran for the ownerless subscriber');
$other->safe_psql(
	'dst', q{
CREATE ROLE alice;
GRANT SELECT ON public.gate TO PUBLIC;
GRANT SELECT, INSERT ON public.lc_log TO PUBLIC;
GRANT USAGE ON SEQUENCE public.lc_log_n_seq TO PUBLIC;
});
$other->poll_query_until('dst',
	"SELECT count(*) = 1 FROM public.lc_log WHERE db = 'dst' AND sub = 'all' AND command_tag = 'CREATE TABLE'")
  or die 'no delivery once alice exists';
is( $other->safe_psql(
		'dst',
		"SELECT string_agg(object_identity || ':' || as_user, ' ') FROM public.lc_log WHERE db = 'dst' AND sub = 'all' AND command_tag = 'CREATE TABLE'"
	),
	'public.o_1:alice',
	'G13 other cluster: once the role exists, the subscriber gets what was pending, as alice'
);

# --- a handler that did not come back ---------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE dst_nogone');
command_ok(
	[
		'pg_dump', '-d', $conn->('src'), '--exclude-schema=gone',
		'-f', "$tmp/nogone.sql"
	],
	'pg_dump --exclude-schema=gone');
command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
		'-d', $conn->('dst_nogone'), '-f', "$tmp/nogone.sql"
	],
	'psql restores it');
like(
	$node->safe_psql(
		'dst_nogone',
		"SELECT concat_ws(':', handler, last_error_sqlstate, last_error) FROM ddl_notify.subscriber_status WHERE name = 'gone'"
	),
	qr/^-:42883:handler function gone\.lc_gone\(ddl_notify\.event\) of (?:restored subscriber|subscriber "gone") does not exist/,
	'G13: a restored subscriber whose handler did not come back says so in subscriber_status'
);
DdlNotifyTest::create_tables($node, 'dst_nogone', 'g', 1, 1);
$node->poll_query_until('dst_nogone',
	"SELECT attempts > 0 FROM ddl_notify.subscriber_status WHERE name = 'gone'")
  or die 'no attempt';
like(
	$node->safe_psql(
		'dst_nogone',
		"SELECT last_error_sqlstate || ' ' || last_error FROM ddl_notify.subscriber_status WHERE name = 'gone'"
	),
	qr/^42883 handler function gone\.lc_gone\(ddl_notify\.event\) of subscriber "gone" does not exist/,
	'G13: its delivery fails with a clear error (no crash), the others go on');
is(DdlNotifyTest::lifecycle_log($node, 'dst_nogone', 'all', "db = 'dst_nogone'"),
	'public.g_1', 'G13: the others got the new table');
$node->safe_psql(
	'dst_nogone', q{
CREATE SCHEMA gone;
CREATE FUNCTION gone.lc_gone(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.lc_log (sub, event_id, command_tag, object_identity)
		  VALUES ('gone', e.id, e.command_tag, e.object_identity) $$;
});
$node->poll_query_until('dst_nogone',
	"SELECT count(*) = 1 FROM public.lc_log WHERE db = 'dst_nogone' AND sub = 'gone' AND command_tag = 'CREATE TABLE'")
  or die 'no delivery once the handler exists';
is(DdlNotifyTest::lifecycle_log($node, 'dst_nogone', 'gone', "db = 'dst_nogone'"),
	'public.g_1', 'G13: once the function exists, the subscriber gets what was pending');
$node->safe_psql('postgres', 'DROP DATABASE dst_nogone');

# --- partial dumps -----------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE dst_split');
command_ok(
	[ 'pg_restore', '--schema-only', '-d', $conn->('dst_split'), "$tmp/src.dump" ],
	'pg_restore --schema-only');
is( $node->safe_psql(
		'dst_split',
		"SELECT (SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify') || ' '"
		  . " || (SELECT count(*) FROM ddl_notify.subscriber) || ' ' || (SELECT count(*) FROM ddl_notify.dead_letter)"
	),
	'0.2.0 0 0',
	'G13 --schema-only: the extension without subscribers or dead letters');
command_ok(
	[ 'pg_restore', '--data-only', '-d', $conn->('dst_split'), "$tmp/src.dump" ],
	'pg_restore --data-only into it');
is($node->safe_psql('dst_split', $subs_q), $src_subs,
	'G13 --schema-only then --data-only: the subscribers are back');
is($node->safe_psql('dst_split', $dead_q), $src_dead,
	'G13 --schema-only then --data-only: the dead letters are back');
DdlNotifyTest::create_tables($node, 'dst_split', 's', 1, 1);
$node->poll_query_until('dst_split',
	"SELECT count(*) = 1 FROM public.lc_log WHERE db = 'dst_split' AND sub = 'all' AND command_tag = 'CREATE TABLE'")
  or die 'no delivery after the split restore';
is(DdlNotifyTest::lifecycle_log($node, 'dst_split', 'all', "db = 'dst_split'"),
	'public.s_1', 'G13 --data-only: the restored subscriber gets the new DDL');

# --exclude-schema=ddl_notify: CREATE EXTENSION ... WITH SCHEMA ddl_notify is
# written, the schema is not (PostgreSQL creates the schema a control file
# names as an ordinary object): the restore needs the extension first (never
# a hand-made schema, which its owner could use to take the extension over);
# the dump's CREATE EXTENSION IF NOT EXISTS then does nothing.
# --exclude-table-data='ddl_notify.*' keeps the extension without its rows.
$node->safe_psql('postgres', 'CREATE DATABASE dst_noext');
command_ok(
	[
		'pg_dump', '-d', $conn->('src'), '--exclude-schema=ddl_notify',
		'-f', "$tmp/noext.sql"
	],
	'pg_dump --exclude-schema=ddl_notify');
$node->safe_psql('dst_noext', 'CREATE EXTENSION ddl_notify');
command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
		'-d', $conn->('dst_noext'), '-f', "$tmp/noext.sql"
	],
	'psql restores it into a database with the extension');
is( $node->safe_psql(
		'dst_noext',
		"SELECT (SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify') || ' '"
		  . " || (SELECT count(*) FROM ddl_notify.subscriber) || ' ' || (SELECT count(*) FROM ddl_notify.dead_letter)"
	),
	'0.2.0 0 0',
	'G13 --exclude-schema=ddl_notify: CREATE EXTENSION is kept, the subscribers and dead letters are not'
);
$node->safe_psql('postgres', 'CREATE DATABASE dst_nodata');
command_ok(
	[
		'pg_dump', '-d', $conn->('src'), '--exclude-table-data=ddl_notify.*',
		'-f', "$tmp/nodata.sql"
	],
	"pg_dump --exclude-table-data='ddl_notify.*'");
command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
		'-d', $conn->('dst_nodata'), '-f', "$tmp/nodata.sql"
	],
	'psql restores it');
is( $node->safe_psql(
		'dst_nodata',
		"SELECT (SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify') || ' '"
		  . " || (SELECT count(*) FROM ddl_notify.subscriber) || ' ' || (SELECT count(*) FROM ddl_notify.dead_letter)"
	),
	'0.2.0 0 0',
	"G13 --exclude-table-data='ddl_notify.*': the extension without subscribers or dead letters"
);

done_testing();
