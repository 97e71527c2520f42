
# Copyright (c) 2026, the ddl_notify authors

# 041_drop_create.pl: DROP EXTENSION ddl_notify then CREATE EXTENSION in the
# same database leaves a working extension.
#
# G13, G9: after DROP and CREATE in separate transactions of one session, in
#      one transaction, and under a session that recorded DDL before (its
#      cached relation OIDs, DdlnGetRelids, belong to the dropped tables),
#      every later DDL is recorded into the new tables and delivered by a
#      worker exactly once.  Catches: the relation OID cache not forgotten on
#      invalidation (the session would write into the dropped relations'
#      OIDs: "could not open relation", or lose the event).
# G6:  a subscriber made in the transaction that re-created the extension
#      gets nothing of that transaction and everything after it.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('dropcreate');
$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');

# The handler takes ddl_notify.event, so DROP EXTENSION ... CASCADE drops it.
my $handler_sql = q{
CREATE OR REPLACE FUNCTION public.lc_a(e ddl_notify.event) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO public.lc_log (sub, event_id, command_tag, object_identity)
	VALUES ('a', e.id, e.command_tag, e.object_identity) $$;
SELECT ddl_notify.subscribe('a', 'public.lc_a(ddl_notify.event)', command_tags => '{CREATE TABLE}');
};
DdlNotifyTest::lifecycle_handler($node, 'app', 'a');
$node->safe_psql('app', $handler_sql);

# A session that records DDL before and after another session re-creates
# the extension.
my $bg = $node->background_psql('app', on_error_stop => 0);
sub bg_run
{
	my ($sql) = @_;
	my ($out, $ret) = $bg->query($sql);
	return $ret == 0 ? 'ok' : "failed: $bg->{stderr}";
}
is(bg_run('CREATE TABLE public.b_1 ();'), 'ok', 'a long-lived session records DDL');
is(DdlNotifyTest::wait_for_delivery($node, 'app'), 't', 'before: delivered');
is(DdlNotifyTest::lifecycle_log($node, 'app', 'a'),
	'public.b_1', 'before: a got b_1 from the long-lived session');

# --- separate transactions, one session ---------------------------------------

$node->safe_psql(
	'app', qq{
CREATE TABLE public.s_1 ();
DROP EXTENSION ddl_notify CASCADE;
CREATE EXTENSION ddl_notify;
$handler_sql
CREATE TABLE public.s_2 ();
});
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G13: DROP then CREATE EXTENSION in one session: delivery works');
like(DdlNotifyTest::lifecycle_log($node, 'app', 'a', "object_identity = 'public.s_2'"),
	qr/^public\.s_2$/,
	'G13: the session that dropped and re-created the extension records into the new tables, delivered once'
);
my $w = DdlNotifyTest::wait_worker($node, 'app');
isnt($w, '', 'G9/G13: a worker runs for the re-created extension');

# the long-lived session cached the dropped tables' OIDs
is(bg_run('CREATE TABLE public.b_2 ();'), 'ok',
	'G13: the long-lived session records DDL after the re-creation without an error');
is(DdlNotifyTest::wait_for_delivery($node, 'app'), 't', 'G13: delivered');
is(DdlNotifyTest::lifecycle_log($node, 'app', 'a', "object_identity = 'public.b_2'"),
	'public.b_2',
	'G13: the long-lived session\'s DDL reached the new subscriber once (its OID cache was refreshed)'
);

# --- one transaction ----------------------------------------------------------

$node->safe_psql(
	'app', qq{
BEGIN;
DROP EXTENSION ddl_notify CASCADE;
CREATE EXTENSION ddl_notify;
$handler_sql
CREATE TABLE public.t_0 ();
COMMIT;
});
is( $node->safe_psql(
		'app', q{
BEGIN;
DROP EXTENSION ddl_notify CASCADE;
CREATE EXTENSION ddl_notify;
CREATE TABLE public.t_x ();
SELECT count(*) FROM ddl_notify.event WHERE object_identity = 'public.t_x';
ROLLBACK;
}),
	'1',
	'G13: in the transaction that re-created the extension, DDL is recorded into the new table'
);
DdlNotifyTest::create_tables($node, 'app', 't', 1, 2);
is(bg_run('CREATE TABLE public.b_3 ();'), 'ok',
	'G13: and after the re-creation in one transaction');
is(DdlNotifyTest::wait_for_delivery($node, 'app'),
	't', 'G13: DROP and CREATE EXTENSION in one transaction: delivery works');
is( $node->safe_psql(
		'app',
		"SELECT string_agg(object_identity, ' ' ORDER BY n) FROM public.lc_log WHERE object_identity ~ '^public\\.(t_|b_3)'"
	),
	'public.t_1 public.t_2 public.b_3',
	'G13/G6: the subscriber made in that transaction got what came after it (t_1, t_2, b_3), not t_0 of its own transaction, each once'
);
is( $node->safe_psql(
		'app',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' AND datname = 'app'"
	),
	'1',
	'G9/G13: one worker serves the database');

$bg->quit;
done_testing();
