
# Copyright (c) 2026, the ddl_notify authors

# 040_pg_repack.pl: pg_repack rebuilding a table online (the pg_repack
# client, table and index rebuilt into new files, swapped in at the end).
#
# G0: the repack completes with ddl_notify installed and a subscriber
#     recording, while rows are inserted; the table keeps its rows and those
#     inserts, its relfilenode changes.
#     Catches: ddl_notify's event trigger failing on pg_repack's scratch
#     objects (repack.log_OID, repack.table_OID, its trigger), which would
#     make pg_repack give up.
# G2: what ddl_notify records of it, pinned: pg_repack's own DDL (CREATE
#     TABLE repack.log_OID / repack.table_OID, the z_repack_trigger on the
#     table, the new index, their drops) is recorded and delivered once, with
#     role_name the repacking role; the swap itself (repack.repack_swap(),
#     a direct catalog update of pg_class.relfilenode) fires no event
#     trigger, so no event names public.orders as rewritten.  A subscriber
#     that caches by relfilenode learns of the repack from the last event
#     naming the table, DROP TRIGGER "repack_trigger on TABLE", committed
#     after the swap (a handler then already sees the new relfilenode);
#     docs/compatibility.md says so.  Catches: a change in what is recorded
#     (this test then needs updating, and the docs with it).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('pg_repack');

my $node = EcoTest::node('repack');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql(
	'app', q{
CREATE EXTENSION pg_repack;
CREATE EXTENSION ddl_notify;
CREATE TABLE public.orders (id int PRIMARY KEY, v text);
CREATE INDEX orders_v ON public.orders (v);
INSERT INTO public.orders SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
DELETE FROM public.orders WHERE id % 2 = 0;
});
EcoTest::recorder($node, 'app', 'all');
# A cache-like subscriber: on the DROP of pg_repack's trigger on a table,
# it looks at the table's file as a cache refresh would.
$node->safe_psql(
	'app', q{
CREATE TABLE public.cache_seen (filenode oid);
CREATE FUNCTION public.cache_refresh(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.cache_seen
	SELECT pg_relation_filenode('public.orders')
	WHERE e.command_tag = 'DROP TRIGGER' AND e.object_identity = 'repack_trigger on public.orders'
$$;
SELECT ddl_notify.subscribe('cache', 'public.cache_refresh(ddl_notify.event)');
});
my $oid = $node->safe_psql('app', q{SELECT 'public.orders'::regclass::oid});
my $before = $node->safe_psql('app', q{SELECT pg_relation_filenode('public.orders')});

# Online: rows inserted, one transaction each, for as long as pg_repack runs.
my ($stdout, $stderr) = ('', '');
my $h = IPC::Run::start(
	[
		'pg_repack', '-h', $node->host, '-p', $node->port,
		'-d', 'app', '-t', 'public.orders'
	],
	'<', \undef, '>', \$stdout, '2>', \$stderr);
my $during = 0;
while ($h->pumpable)
{
	$node->safe_psql('app', 'INSERT INTO public.orders VALUES (' . (100000 + $during) . ", 'during')");
	$during++;
	$h->pump_nb;
}
$h->finish;
is($h->result(0), 0, 'pg_repack -t public.orders completed') or diag $stderr;
note "inserted during the repack: $during";
is( $node->safe_psql(
		'app',
		q{SELECT count(*) || ' ' || sum(id) FILTER (WHERE v <> 'during') || ' ' || count(*) FILTER (WHERE v = 'during') FROM public.orders}),
	"@{[ 10000 + $during ]} 100000000 $during",
	'the table keeps its rows, and those written while it was repacked');
isnt($node->safe_psql('app', q{SELECT pg_relation_filenode('public.orders')}),
	$before, 'the table has a new relfilenode');

EcoTest::settled($node, 'app', 'after the repack');
my $got = EcoTest::rows($node, 'app', 'all');
$got =~ s/_$oid\b/_OID/g;
$got =~ s/index_\d+/index_N/g;
note "recorded:\n$got";
like($got, qr/^CREATE TABLE\|table\|repack\.log_OID\|postgres$/m,
	'recorded: CREATE TABLE repack.log_OID');
like($got, qr/^CREATE TRIGGER\|trigger\|repack_trigger on public\.orders\|postgres$/m,
	'recorded: the trigger pg_repack puts on the table');
like($got, qr/^CREATE TABLE( AS)?\|table\|repack\.table_OID\|postgres$/m,
	'recorded: CREATE TABLE repack.table_OID, the new copy');
like($got, qr/^DROP TABLE\|table\|repack\.table_OID\|postgres$/m,
	'recorded: the DROP of the copy (which then holds the old file)');
is( join("\n", grep { /public\.orders/ } split /\n/, $got),
	"CREATE TRIGGER|trigger|repack_trigger on public.orders|postgres\n"
	  . "ALTER TABLE|table|public.orders|postgres\n"
	  . "DROP TRIGGER|trigger|repack_trigger on public.orders|postgres",
	'the events naming public.orders: its repack_trigger created, enabled, dropped; the swap itself fires none');
is( $node->safe_psql('app', q{SELECT count(*) FROM rec.log_all WHERE trigger_event = 'table_rewrite'}),
	'0', 'no table_rewrite event (pg_repack swaps files in the catalog)');
is( $node->safe_psql(
		'app', qq{SELECT string_agg(filenode::text, ' ') FROM public.cache_seen}),
	$node->safe_psql('app', q{SELECT pg_relation_filenode('public.orders')}),
	'a handler acting on DROP TRIGGER repack_trigger on public.orders already sees the new relfilenode');
is($node->safe_psql('app', 'SELECT count(*) - count(DISTINCT event_id) FROM rec.log_all'),
	'0', 'no event delivered twice');

$node->stop;
done_testing();
