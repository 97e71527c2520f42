
# Copyright (c) 2026, the ddl_notify authors

# 061_cdc_consumers.pl: DDL in the WAL stream (G15) as CDC pipelines outside
# the server read it, next to a SQL subscriber served by the worker.
#
# - wal2json (Debian postgresql-MAJOR-wal2json), format-version 2, read by
#   pg_recvlogical into a file up to an end LSN, as a pipeline would.
# - test/cdc/ddl_stream.py, the example of docs/cdc.md: Python with Debian's
#   python3-psycopg2 (LogicalReplicationConnection) streaming pgoutput with
#   messages 'true'.
# Both must show INSERT, ALTER TABLE ADD COLUMN (its columns after the
# command), INSERT with the new column, in that order, across transactions
# and inside one, and nothing of a rolled-back transaction; and the events
# in the stream are exactly those the SQL subscriber handled (CDC and
# subscribers read the same events).  test/tools/deps.sh installs both
# packages (and checks for wal2json.so and "import psycopg2").
#
# deps.sh --check pointed at an installation without wal2json.so (a
# pg_config naming an empty --pkglibdir) must ask for
# postgresql-MAJOR-wal2json.
#
# Where there is no wal2json (Debian has none for 19: deps.sh then does not
# ask for it), the wal2json assertions skip ("skipped: no wal2json for PG
# NN") and the event ids compared with the SQL subscriber's are read from a
# test_decoding slot instead; the pgoutput path runs on every version.
#
# Catches: the message made non-transactional (the rolled-back ALTER shows,
# out of place), the table's columns missing or its replica identity wrong,
# ddl_stream.py no longer handling pgoutput's 'M' messages, the wal2json
# check taken out of deps.sh.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $python = -x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3';

my $node = DdlNotifyTest::new_node('cdc',
	conf => "wal_level = logical\nmax_wal_senders = 4\nmax_replication_slots = 4\n");
my $pkglib = $node->config_data('--pkglibdir');
my $major = $node->pg_version->major;
my $have_w2j = -f "$pkglib/wal2json.so";
my $no_w2j = "no wal2json for PG $major";
SKIP:
{
	skip $no_w2j, 2 unless $have_w2j;
	ok(-f "$pkglib/wal2json.so", "wal2json is installed ($pkglib/wal2json.so)");
ok(system($python, '-c', 'import psycopg2') == 0,
	"$python can import psycopg2");

# deps.sh names the package that brings wal2json.so when it is missing
my $real = $node->config_data('--bindir') . '/pg_config';
my $fake = $node->basedir . '/fake';
mkdir $fake;
open my $pc, '>', "$fake/pg_config" or die $!;
print $pc qq{#!/bin/sh
for a in "\$@"; do
	if [ "\$a" = --pkglibdir ]; then echo '$fake'; exit 0; fi
done
exec '$real' "\$@"
};
close $pc;
chmod 0755, "$fake/pg_config";
my ($dout, $derr) = ('', '');
IPC::Run::run([ 'bash', 'test/tools/deps.sh', '--check' ],
	'<', \undef, '>', \$dout, '2>', \$derr,
	init => sub { $ENV{PG_CONFIG} = "$fake/pg_config" });
like($dout, qr/^deps\.sh: packages: .*\bpostgresql-$major-wal2json\b/m,
	"deps.sh --check asks for postgresql-$major-wal2json when wal2json.so is missing");
}

# PostgreSQL releases with output_plugin_libraries accept only the plugins
# it names.
if ($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'") eq '1')
{
	$node->safe_psql('postgres',
		'ALTER SYSTEM SET output_plugin_libraries = pgoutput, test_decoding, wal2json');
	$node->reload;
}

$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
DdlNotifyTest::setup_subscriber($node, 'app', 'sql', unique => 1);
$node->safe_psql(
	'app', q{
CREATE TABLE public.t (id int PRIMARY KEY, v text);
CREATE PUBLICATION cdc_pub FOR TABLE public.t;
SELECT pg_create_logical_replication_slot('py', 'pgoutput');
ALTER DATABASE app SET ddl_notify.wal_messages = on;
-- format version 1: what these consumers print is read from its "table"
-- key (version 2, the default, is replayed by test/t/044_replay.pl)
ALTER DATABASE app SET ddl_notify.wal_message_version = 1;
});
$node->safe_psql('app',
	$have_w2j
	? "SELECT pg_create_logical_replication_slot('w2j', 'wal2json')"
	: "SELECT pg_create_logical_replication_slot('td', 'test_decoding')");
# (the set-up's own DDL, recorded before the switch, delivered first)
DdlNotifyTest::wait_for_delivery($node, 'app');
my $before = $node->safe_psql('app', 'SELECT coalesce(max(event_id), 0) FROM public.log_sql');

$node->safe_psql('app', "INSERT INTO public.t VALUES (1, 'a')");
$node->safe_psql('app', 'ALTER TABLE public.t ADD COLUMN w int');
$node->safe_psql('app', "INSERT INTO public.t VALUES (2, 'b', 20)");
$node->safe_psql(
	'app', q{
BEGIN;
INSERT INTO public.t VALUES (3, 'c', 30);
ALTER TABLE public.t ADD COLUMN x text NOT NULL DEFAULT 'd';
INSERT INTO public.t VALUES (4, 'd', 40, 'x4');
COMMIT;
BEGIN;
INSERT INTO public.t VALUES (5, 'e', 50, 'x5');
ALTER TABLE public.t ADD COLUMN never int;
ROLLBACK;
});
my $end = $node->safe_psql('app', 'SELECT pg_current_wal_lsn()');

# --- wal2json through pg_recvlogical --------------------------------------

my ($out, $err) = ('', '');
my ($ok, @lines, @ids);
SKIP:
{
skip $no_w2j, 3 unless $have_w2j;
my $file = $node->basedir . '/wal2json.out';
$ok = IPC::Run::run(
	[
		'pg_recvlogical', '--dbname', $node->connstr('app'), '--slot', 'w2j',
		'--start', '--endpos', $end, '--no-loop', '-f', $file,
		'-o', 'format-version=2', '-o', 'add-tables=public.t'
	],
	'<', \undef, '>', \$out, '2>', \$err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
ok($ok, 'pg_recvlogical read the wal2json stream up to the end LSN')
  or diag $err;

open my $fh, '<', $file or die "$file: $!";
while (my $l = <$fh>)
{
	my $a = decode_json($l);
	if ($a->{action} eq 'B') { push @lines, 'BEGIN'; }
	elsif ($a->{action} eq 'C')
	{
		if (@lines && $lines[-1] eq 'BEGIN') { pop @lines; }
		else { push @lines, 'COMMIT'; }
	}
	elsif ($a->{action} eq 'I')
	{
		push @lines, join(' ', "INSERT $a->{schema}.$a->{table}",
			map { "$_->{name}=" . ($_->{value} // 'NULL') } @{ $a->{columns} });
	}
	elsif ($a->{action} eq 'M' && $a->{prefix} eq 'ddl_notify')
	{
		my $m = decode_json($a->{content});
		push @ids, $m->{id};
		push @lines,
		  ($a->{transactional} ? '' : 'NON-TRANSACTIONAL ')
		  . "DDL v$m->{v} $m->{command_tag} $m->{object_identity} ["
		  . join(', ', map { "$_->{name} $_->{type}" . ($_->{not_null} ? ' NOT NULL' : '') }
			  grep { !$_->{dropped} } @{ $m->{table}{columns} })
		  . "] identity $m->{table}{replica_identity} ("
		  . join(', ', @{ $m->{table}{identity_columns} }) . ')';
	}
	else { push @lines, "OTHER $l"; }
}
close $fh;
is( join("\n", @lines),
	join("\n",
		'BEGIN', 'INSERT public.t id=1 v=a', 'COMMIT',
		'BEGIN', 'DDL v1 ALTER TABLE public.t [id integer NOT NULL, v text, w integer] identity default (id)', 'COMMIT',
		'BEGIN', 'INSERT public.t id=2 v=b w=20', 'COMMIT',
		'BEGIN', 'INSERT public.t id=3 v=c w=30',
		'DDL v1 ALTER TABLE public.t [id integer NOT NULL, v text, w integer, x text NOT NULL] identity default (id)',
		'INSERT public.t id=4 v=d w=40 x=x4', 'COMMIT'),
	'G15 wal2json (format-version 2): rows and DDL in order, nothing rolled back');
}
# without wal2json, the ids of the events in the stream from test_decoding
unless ($have_w2j)
{
	foreach my $l (split /\n/, $node->safe_psql('app',
			"SELECT data FROM pg_logical_slot_get_changes('td', '$end', NULL)"))
	{
		push @ids, decode_json($1)->{id}
		  if $l =~ /^message: transactional: 1 prefix: ddl_notify, sz: \d+ content:(.*)$/;
	}
}

# --- the Python example, pgoutput -------------------------------------------

my $example = 'test/cdc/ddl_stream.py';
($out, $err) = ('', '');
$ok = IPC::Run::run(
	[
		$python, $example, '--dsn', $node->connstr('app'), '--slot', 'py',
		'--publication', 'cdc_pub', '--end-lsn', $end,
		'--timeout', $PostgreSQL::Test::Utils::timeout_default
	],
	'<', \undef, '>', \$out, '2>', \$err);
ok($ok, "$example ran to the end LSN") or diag $err;
is( $out, join("\n",
		'BEGIN', 'INSERT public.t id=1 v=\'a\'', 'COMMIT',
		'BEGIN', 'DDL ALTER TABLE public.t [id integer NOT NULL, v text, w integer] identity default (id)', 'COMMIT',
		'BEGIN', 'INSERT public.t id=2 v=\'b\' w=20', 'COMMIT',
		'BEGIN', 'INSERT public.t id=3 v=\'c\' w=30',
		'DDL ALTER TABLE public.t [id integer NOT NULL, v text, w integer, x text NOT NULL] identity default (id)',
		'INSERT public.t id=4 v=\'d\' w=40 x=\'x4\'', 'COMMIT')
	  . "\n",
	"G15 $example (psycopg2, pgoutput with messages): rows and DDL in order, nothing rolled back");
is( $node->safe_psql('app',
		"SELECT confirmed_flush_lsn >= '$end' FROM pg_replication_slots WHERE slot_name = 'py'"),
	't', "G15 $example confirmed what it printed: the slot moved on");

# --- the same events for SQL subscribers ------------------------------------

is(DdlNotifyTest::wait_for_delivery($node, 'app'), 't',
	'the worker delivered the same DDL to the SQL subscriber');
is( $node->safe_psql('app',
		"SELECT string_agg(event_id::text, ',' ORDER BY event_id) FROM public.log_sql WHERE event_id > $before"),
	join(',', @ids),
	'G15: the events in the WAL stream are the ones the subscriber handled');

$node->stop;
done_testing();
