
# Copyright (c) 2026, the ddl_notify authors

# 044_replay.pl: a downstream copy kept by the WAL messages alone (G15, the
# relation images of G2's details).
#
# For each seed, a seeded random DDL run (test/t/ReplayGen.pm: a few
# hundred steps of CREATE/ALTER/RENAME/DROP of tables, their columns
# (identity columns with their sequence's options, serial columns; their
# STORAGE, COMPRESSION and statistics targets), constraints, indexes (their
# storage parameters, CLUSTER ON) and replica identity, CASCADE drops, schemas, some
# in transactions rolled back in part or whole) runs in database src_SEED,
# which has ddl_notify with wal_messages on and message version 2 (the
# default).  examples/ddl_replay.py, the consumer of docs/cdc.md, reads
# the messages from a pgoutput slot (messages 'true') and applies their
# typed payload (CREATE from "after", one ALTER per entry of "changes",
# DROP from the drop events; never the statement text) to database
# dst_SEED, which has no ddl_notify.  pg_dump --schema-only of both must
# then be the same, line for line (ddl_notify's own schema and extension
# left out of the source's, the consumer's progress table out of the
# copy's).  The consumer runs twice, stopping half way: the second run
# must go on from the LSN the first one recorded in the copy, applying
# nothing twice.
#
# The seed, the statement count and each step's SQL are printed (diag and
# the log); a failure names the seed.  Run others with
#   REPLAY_SEEDS=7,8 REPLAY_STATEMENTS=1000 ONLY=044 make test
#
# Catches: a change the images or the diff get wrong or leave out (a
# column attribute, a constraint or index, a rename matched by name, the
# replica identity, a cascaded drop without its event): the two dumps
# differ (test/mutations/changes_no_drop_not_null.patch: CAUGHT); changes
# repeated on a second row of the same command (the identity added twice:
# the consumer fails); a message that is not version 2 or not
# transactional (a rolled back statement replayed); v2 messages without
# their details.  The last assertions check that the run made every kind
# of change at least once (with the default 3 seeds of 300 steps).

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use ReplayGen;

my $python = -x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3';
my @seeds = split /,/, ($ENV{REPLAY_SEEDS} // '1,2,3');
my $statements = $ENV{REPLAY_STATEMENTS} // 300;
my $example = 'examples/ddl_replay.py';

my $node = PostgreSQL::Test::Cluster->new('replay');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf',
	"max_wal_senders = 4\nmax_replication_slots = 4\nfsync = off\n");
$node->start;

# dump(DB, EXCLUDE-SCHEMA): pg_dump --schema-only, without the schema
# given, the ddl_notify extension's entries, psql's \restrict lines (a
# random key each time, from 15.14 on) and the SET default_tablespace /
# default_table_access_method pg_dump says before the first table (in the
# source, one of ddl_notify's).
sub dump_schema
{
	my ($db, $exclude) = @_;
	my ($out, $err);
	IPC::Run::run(
		[
			'pg_dump', '--schema-only', '--no-publications',
			"--exclude-schema=$exclude", '-d', $node->connstr($db)
		],
		'>', \$out, '2>', \$err)
	  or die "pg_dump $db: $err";
	my @blocks = split /(?=^--\n-- Name: )/m, $out;
	@blocks = grep { !/^-- Name: (ddl_notify; Type: EXTENSION|EXTENSION ddl_notify; Type: COMMENT);/m } @blocks;
	my $text = join '', @blocks;
	$text =~ s/^\\(un)?restrict .*\n//mg;
	# said once before the first table: in the source, ddl_notify's
	$text =~ s/^SET default_(tablespace|table_access_method) = .*\n\n//mg;
	return $text;
}

# consume(SEED): the example consumer, up to the current end of the WAL;
# returns what it applied, by kind.
sub consume
{
	my ($seed) = @_;
	my $end = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			$python, $example,
			'--source', $node->connstr("src_$seed"),
			'--target', $node->connstr("dst_$seed"),
			'--slot', "replay_$seed", '--publication', 'replay_pub',
			'--end-lsn', $end, '--stats',
			'--timeout', $PostgreSQL::Test::Utils::timeout_default
		],
		'<', \undef, '>', \$out, '2>', \$err);
	ok($ok, "seed $seed: $example ran to $end") or diag $err;
	note $err;
	return $ok ? decode_json($out) : {};
}

my %applied;
for my $seed (@seeds)
{
	diag "044_replay: seed $seed, $statements steps (REPLAY_SEEDS=$seed REPLAY_STATEMENTS=$statements)";
	$node->safe_psql('postgres', "CREATE DATABASE src_$seed");
	$node->safe_psql('postgres', "CREATE DATABASE dst_$seed");
	# the foreign server of the foreign tables, on both sides before the
	# slot (the consumer applies no server)
	for my $db ("src_$seed", "dst_$seed")
	{
		$node->safe_psql($db,
			'CREATE FOREIGN DATA WRAPPER replay_fdw; CREATE SERVER replay_srv FOREIGN DATA WRAPPER replay_fdw');
	}
	$node->safe_psql(
		"src_$seed", qq{
SET client_min_messages = warning;
CREATE EXTENSION ddl_notify;
ALTER DATABASE src_$seed SET ddl_notify.wal_messages = on;
CREATE PUBLICATION replay_pub;
SELECT pg_create_logical_replication_slot('replay_$seed', 'pgoutput');
});
	is($node->safe_psql("src_$seed", "LOAD 'ddl_notify'; SHOW ddl_notify.wal_message_version"),
		'2', "seed $seed: messages are version 2 by default");

	my $gen = ReplayGen->new(seed => $seed);
	my $state_query = ReplayGen::state_query();
	my ($ok, $failed) = (0, 0);
	# each step is one psql: its SQL, then (reached only when the SQL ran
	# without an error: ON_ERROR_STOP) a marker line and the state for the
	# next step, which a separate psql reads only after a failed step
	my $marker = '044_replay: state after the step';
	my $state = $node->safe_psql("src_$seed", $state_query);
	for my $step (1 .. $statements)
	{
		my $sql = $gen->next_step(decode_json($state));
		note "step $step:\n$sql";
		my ($rc, $stdout, $stderr) =
		  $node->psql("src_$seed", "$sql\\echo '$marker'\n$state_query;\n");
		if ($rc == 0 && $stderr !~ /ERROR/ && $stdout =~ /^\Q$marker\E\n(.*)\z/ms)
		{
			$ok++;
			$state = $1;
		}
		else
		{
			$failed++;
			$state = $node->safe_psql("src_$seed", $state_query);
		}

		# half way: replay what there is so far (the second run must go on
		# from there)
		if ($step == int($statements / 2))
		{
			my $c = consume($seed);
			$applied{$_} += $c->{$_} for keys %$c;
		}
	}
	my $c = consume($seed);
	$applied{$_} += $c->{$_} for keys %$c;
	my $events = $node->safe_psql("src_$seed", 'SELECT count(*) FROM ddl_notify.event');
	diag "seed $seed: $ok steps ran, $failed failed; $events events; steps by kind: "
	  . join(', ', map { "$_ $gen->{stats}{$_}" } sort keys %{ $gen->{stats} });
	cmp_ok($ok, '>', $statements / 2, "seed $seed: most steps ran ($ok of $statements)");

	my $src = dump_schema("src_$seed", 'ddl_notify');
	my $dst = dump_schema("dst_$seed", 'ddl_replay');
	my $tables = () = $src =~ /^CREATE TABLE /mg;
	ok($tables > 0, "seed $seed: the source has tables at the end ($tables)");
	if (!ok($dst eq $src, "seed $seed: pg_dump --schema-only of the copy is the source's"))
	{
		my $dir = $PostgreSQL::Test::Utils::tmp_check;
		open my $fh, '>', "$dir/src_$seed.sql" or die $!;
		print $fh $src;
		close $fh;
		open $fh, '>', "$dir/dst_$seed.sql" or die $!;
		print $fh $dst;
		close $fh;
		my ($diff, $e);
		IPC::Run::run([ 'diff', '-u', "$dir/src_$seed.sql", "$dir/dst_$seed.sql" ], '>', \$diff, '2>', \$e);
		diag "seed $seed: the dumps differ:\n$diff";
	}
	is( $node->safe_psql("dst_$seed",
			"SELECT count(*) FROM ddl_replay.progress WHERE slot = 'replay_$seed'"),
		'1', "seed $seed: the copy recorded how far it applied");

	# the slot would hold the WAL back, and slots are few
	$node->safe_psql('postgres', "SELECT pg_drop_replication_slot('replay_$seed')");
	$node->safe_psql('postgres', "DROP DATABASE src_$seed");
	$node->safe_psql('postgres', "DROP DATABASE dst_$seed");
}

diag 'applied, all seeds: ' . join(', ', map { "$_ $applied{$_}" } sort keys %applied);

# the run exercised every kind of change a consumer must apply
for my $kind ('create table', 'drop table', 'drop table constraint',
	'add column', 'drop column', 'rename column', 'alter column type',
	'set not null', 'drop not null', 'set default', 'drop default',
	'add identity', 'set identity', 'drop identity', 'drop expression',
	'set collation', 'add constraint',
	'drop constraint', 'rename constraint', 'add index', 'drop index',
	'rename index', 'set replica identity', 'rename', 'set schema',
	'create view', 'create materialized view', 'create partitioned table', 'create partition',
	'create foreign table', 'set definition', 'drop view', 'drop materialized view',
	'drop foreign table', 'sequence', 'set storage', 'set statistics')
{
	ok(($applied{$kind} // 0) > 0, "the replay applied \"$kind\" (" . ($applied{$kind} // 0) . ')')
	  if @seeds >= 3 && $statements >= 300;
}

$node->stop;
done_testing();
