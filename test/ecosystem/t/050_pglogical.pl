
# Copyright (c) 2026, the ddl_notify authors

# 050_pglogical.pl: pglogical 2 between two clusters, provider and
# subscriber, ddl_notify preloaded and installed on both, a recording
# subscriber on both, replication set "default" = every table of public
# (replication_set_add_all_tables, as users set it up), DDL replicated with
# pglogical.replicate_ddl_command() run by role ddl_admin.
#
# G2, G10: replicate_ddl_command's DDL is recorded and delivered once on the
#      provider (role_name ddl_admin, who ran it) and once on the subscriber,
#      where pglogical's apply worker runs it from its queue (role_name the
#      role the apply worker runs the queued command as: ddl_admin, the
#      queue's role); ddl_notify's event triggers are ENABLE ALWAYS, so the
#      apply worker's session_replication_role = replica does not hide it.
#      Catches: event triggers left ENABLE (origin only): nothing recorded
#      on the subscriber.
# G0: replication keeps working: the initial copy, rows after the replicated
#      DDL, into the new table.
# G0, G5: ddl_notify's own tables are in no replication set, and each side
#      keeps its own events: DDL run on one side only is delivered on that
#      side only, and the subscriber's delivery state is its own.  Catches:
#      ddl_notify's tables joining a replication set of "all tables".

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('pglogical');

my $conf = q{
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
max_worker_processes = 16
track_commit_timestamp = on
ddl_notify.wal_messages = on
};
# Recent minor releases load only the output plugins listed here (the
# default is "pgoutput, test_decoding"); older ones have no such setting.
$conf .= "output_plugin_libraries = 'pgoutput, test_decoding, pglogical_output'\n"
  if `postgres --describe-config 2>/dev/null` =~ /^output_plugin_libraries\t/m;
my $prov = EcoTest::node('provider', preload => 'pglogical', conf => $conf, allows_streaming => 1);
my $subs = EcoTest::node('subscriber', preload => 'pglogical', conf => $conf, allows_streaming => 1);

sub dsn
{
	my ($node) = @_;
	return 'host=' . $node->host . ' port=' . $node->port . ' dbname=app';
}

for my $n ($prov, $subs)
{
	$n->safe_psql('postgres', 'CREATE DATABASE app');
	$n->safe_psql(
		'app', q{
CREATE EXTENSION pglogical;
CREATE EXTENSION ddl_notify;
CREATE ROLE ddl_admin SUPERUSER LOGIN;
CREATE TABLE public.items (id int PRIMARY KEY, v text);
});
	EcoTest::recorder($n, 'app', 'all');
}
$prov->safe_psql('app', q{INSERT INTO public.items SELECT g, 'v' || g FROM generate_series(1, 100) g});
$prov->safe_psql(
	'app', qq{
SELECT pglogical.create_node(node_name := 'provider', dsn := '@{[ dsn($prov) ]}');
SELECT pglogical.replication_set_add_all_tables('default', ARRAY['public']);
});
$subs->safe_psql(
	'app', qq{
SELECT pglogical.create_node(node_name := 'subscriber', dsn := '@{[ dsn($subs) ]}');
SELECT pglogical.create_subscription(subscription_name := 'sub1', provider_dsn := '@{[ dsn($prov) ]}');
});
$subs->safe_psql('app', q{SELECT pglogical.wait_for_subscription_sync_complete('sub1')});
is($subs->safe_psql('app', 'SELECT count(*) FROM public.items'), '100',
	'pglogical: the initial copy arrived');
is( $prov->safe_psql(
		'app', q{SELECT count(*) FROM pglogical.tables WHERE nspname = 'ddl_notify' AND set_name IS NOT NULL}),
	'0',
	"ddl_notify's tables are in no replication set (add_all_tables of public)");

# A probe slot shows that the provider writes ddl_notify's WAL messages.
$prov->safe_psql('app', q{SELECT pg_create_logical_replication_slot('probe', 'test_decoding')});

# DDL replicated through pglogical's queue, by ddl_admin.
$prov->safe_psql(
	'app', q{
SET ROLE ddl_admin;
SELECT pglogical.replicate_ddl_command(
	'CREATE TABLE public.extra (id int PRIMARY KEY, v text); ALTER TABLE public.items ADD COLUMN note text;',
	'{default}');
SELECT pglogical.replication_set_add_table('default', 'public.extra');
INSERT INTO public.extra SELECT g, 'e' || g FROM generate_series(1, 10) g;
UPDATE public.items SET note = 'n' WHERE id <= 5;
});
# DDL on one side only.
$prov->safe_psql('app', 'CREATE TABLE public.provider_only (id int)');
$subs->safe_psql('app', 'CREATE TABLE public.subscriber_only (id int)');

# Replication caught up: the provider's slot confirmed its current position.
my $lsn = $prov->safe_psql('app', 'SELECT pg_current_wal_lsn()');
ok( $prov->poll_query_until(
		'app', qq{SELECT count(*) = 1 FROM pg_replication_slots
				  WHERE slot_type = 'logical' AND slot_name <> 'probe' AND confirmed_flush_lsn >= '$lsn'}),
	'the subscriber caught up');
is( $subs->safe_psql(
		'app', q{SELECT (SELECT count(*) FROM public.extra) || ' ' || (SELECT count(*) FROM public.items WHERE note = 'n')}),
	'10 5',
	'replication keeps working: rows of the new table and the new column arrived');

ok( $prov->safe_psql(
		'app', q{SELECT count(*) FROM pg_logical_slot_get_changes('probe', NULL, NULL)
				 WHERE data LIKE 'message: transactional: 1 prefix: ddl_notify,%public.extra%'}) > 0,
	'the provider wrote ddl_notify WAL messages meanwhile (wal_messages on)');
$prov->safe_psql('app', q{SELECT pg_drop_replication_slot('probe')});
EcoTest::settled($prov, 'app', 'provider');
EcoTest::settled($subs, 'app', 'subscriber');
my $where = q{object_identity IN ('public.extra', 'public.items', 'public.provider_only', 'public.subscriber_only')
	AND command_tag <> 'CREATE TRIGGER'};
is( EcoTest::rows($prov, 'app', 'all', $where),
	"CREATE TABLE|table|public.extra|ddl_admin\nALTER TABLE|table|public.items|ddl_admin\nCREATE TABLE|table|public.provider_only|postgres",
	'provider: replicate_ddl_command\'s DDL delivered once, as ddl_admin; its own DDL too');
my $sub_role = $subs->safe_psql('app', q{SELECT role_name FROM rec.log_all WHERE object_identity = 'public.extra'});
# The subscriber's own DDL and the apply worker's run concurrently: no order.
is( join("\n", sort split /\n/, EcoTest::rows($subs, 'app', 'all', $where)),
	"ALTER TABLE|table|public.items|$sub_role\nCREATE TABLE|table|public.extra|$sub_role\nCREATE TABLE|table|public.subscriber_only|postgres",
	"subscriber: the queued DDL delivered once, as run by the apply worker ($sub_role); its own DDL too, nothing of the provider's own");
is($sub_role, 'ddl_admin', 'the apply worker ran the queued DDL as the role that queued it');
is( $subs->safe_psql(
		'app', q{SELECT count(*) FROM ddl_notify.event}),
	'0', 'subscriber: nothing left undelivered');
is( $subs->safe_psql('app', q{SELECT string_agg(name, ' ') FROM ddl_notify.subscriber}),
	'all', 'subscriber: its own subscriber table');

$subs->stop;
$prov->stop;
done_testing();
