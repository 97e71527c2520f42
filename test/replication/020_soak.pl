
# Copyright (c) 2026, the ddl_notify authors

# 020_soak.pl: DDL replication (G16) under a seeded random workload with
# faults, checked at the end the way a user would: pg_dump --schema-only of
# both sides and every table's rows.
#
# Two clusters, publisher and subscriber, a FOR ALL TABLES publication
# marked with publish_ddl() and a subscription handed to apply_ddl().  The
# workload (seed in DDLN_SOAK_SEED, else the time; printed first; steps in
# DDLN_SOAK_STEPS, default 160) runs on the publisher only: CREATE TABLE
# (alone, or with its INSERTs in one transaction, or as CREATE TABLE AS),
# ADD / DROP / RENAME COLUMN, ALTER COLUMN TYPE, ADD / DROP CONSTRAINT,
# CREATE / DROP INDEX, RENAME TABLE, DROP TABLE, multi-statement
# transactions mixing DDL and rows, transactions rolled back after their DDL,
# and INSERT / UPDATE / DELETE of every live table between them.  Faults at
# a quarter, half and three quarters of the run: kill -9 of the
# subscription's apply worker, an immediate stop and start of the
# subscriber, then of the publisher.  Synchronised on conditions only
# (wait_for_catchup, poll_query_until).
#
# G16 asserted at the end: ddl_apply_status says applying with no error;
#     the subscriber applied exactly as many statements as the publisher
#     committed (rolled-back ones none); pg_dump --schema-only (without
#     publications, subscriptions and the extension's own schema, which are
#     each side's own) is equal; every table's rows are equal.
#     Catches: outbox rows applied out of stream order or lost at a crash
#     (a row arrives before its column: the subscription stops, or a column
#     is missing from the dump), a statement applied twice after a restart
#     (applied count, or the subscription stops on "already exists"), DDL
#     of a rolled-back transaction applied.
#     The comparison itself was checked once by hand: with one ADD COLUMN
#     left out of the subscriber, the dumps differ and the test fails.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../t";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $seed  = $ENV{DDLN_SOAK_SEED} // time();
my $steps = $ENV{DDLN_SOAK_STEPS} // 160;
note("seed $seed, $steps steps");
srand($seed);

my $conf = "wal_level = logical\nwal_retrieve_retry_interval = '200ms'\n"
  . "max_wal_senders = 10\nmax_replication_slots = 10\n"
  . "max_logical_replication_workers = 8\nmax_worker_processes = 24\n"
  . "restart_after_crash = on\n";
my $pub = DdlNotifyTest::new_node('soakpub', conf => $conf);
my $sub = DdlNotifyTest::new_node('soaksub', conf => $conf);
$_->safe_psql('postgres', 'CREATE EXTENSION ddl_notify') for ($pub, $sub);
$pub->safe_psql('postgres', q{
CREATE PUBLICATION pub FOR ALL TABLES;
SELECT ddl_notify.publish_ddl('pub');
});
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', qq{
CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION pub WITH (enabled = false);
SELECT ddl_notify.apply_ddl('sub');
ALTER SUBSCRIPTION sub ENABLE;
});
$sub->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')")
  or die 'initial synchronization did not finish';

# The model of the publisher's tables: name => { cols => [[name, type]...],
# indexes => [[name, col]...], checks => [[name, col]...] }.
my %tables;
my $serial    = 0;     # for new names
my $committed = 0;     # DDL statements (outbox rows) committed
my %count = map { $_ => 0 } qw(ddl rows rollback txn);

sub pick { return $_[ int(rand(@_)) ]; }
sub fresh { return $_[0] . (++$serial); }

sub value
{
	my ($type) = @_;
	return int(rand(1000)) if $type eq 'int' || $type eq 'bigint';
	return "'" . pick(qw(alpha beta gamma delta)) . int(rand(100)) . "'";
}

# INSERT of one row into table t (all its columns but id).
sub insert_sql
{
	my ($t) = @_;
	my @cols = @{ $tables{$t}{cols} };
	return "INSERT INTO public.$t DEFAULT VALUES" unless @cols;
	# a table made by CREATE TABLE AS has no default for its id
	my ($idcol, $idval) = $tables{$t}{ctas} ? ('id, ', "(SELECT coalesce(max(id), 0) + 1 FROM public.$t), ") : ('', '');
	return "INSERT INTO public.$t ($idcol" . join(', ', map { $_->[0] } @cols) . ") VALUES ($idval"
	  . join(', ', map { value($_->[1]) } @cols) . ')';
}

sub rows_sql
{
	my @live = sort keys %tables;
	return () unless @live;
	my $t = pick(@live);
	my @cols = @{ $tables{$t}{cols} };
	my $r = rand();
	$count{rows}++;
	return insert_sql($t) if $r < 0.6 || !@cols;
	if ($r < 0.85)
	{
		my $c = pick(@cols);
		return "UPDATE public.$t SET $c->[0] = " . value($c->[1]) . " WHERE id % 3 = " . int(rand(3));
	}
	return "DELETE FROM public.$t WHERE id = (SELECT min(id) FROM public.$t)";
}

# One DDL statement (its SQL, and what it does to the model once committed).
sub ddl
{
	my @live = sort keys %tables;
	my $r = rand();
	if (@live < 2 || ($r < 0.12 && @live < 7))
	{
		my $t = fresh('t');
		return ("CREATE TABLE public.$t (id serial PRIMARY KEY, a int, b text)",
			sub { $tables{$t} = { cols => [ [ 'a', 'int' ], [ 'b', 'text' ] ], indexes => [], checks => [] } });
	}
	my $t = pick(@live);
	my $m = $tables{$t};
	my @cols = @{ $m->{cols} };
	if ($r < 0.30)
	{
		my $c = fresh('c');
		my $type = pick('int', 'text');
		my $default = rand() < 0.3 ? ($type eq 'int' ? ' DEFAULT 7' : " DEFAULT 'd'") : '';
		return ("ALTER TABLE public.$t ADD COLUMN $c $type$default", sub { push @{ $m->{cols} }, [ $c, $type ] });
	}
	if ($r < 0.40 && @cols > 1)
	{
		my $c = pick(@cols)->[0];
		return ("ALTER TABLE public.$t DROP COLUMN $c", sub {
			$m->{cols} = [ grep { $_->[0] ne $c } @{ $m->{cols} } ];
			$m->{indexes} = [ grep { $_->[1] ne $c } @{ $m->{indexes} } ];
			$m->{checks} = [ grep { $_->[1] ne $c } @{ $m->{checks} } ];
		});
	}
	if ($r < 0.48 && @cols)
	{
		my $c = pick(@cols);
		my $new = fresh('r');
		my $old = $c->[0];
		return ("ALTER TABLE public.$t RENAME COLUMN $old TO $new", sub {
			$c->[0] = $new;
			$_->[1] eq $old and $_->[1] = $new for @{ $m->{indexes} }, @{ $m->{checks} };
		});
	}
	if ($r < 0.55)
	{
		my @ints = grep { $_->[1] eq 'int' } @cols;
		if (@ints)
		{
			my $c = pick(@ints);
			return ("ALTER TABLE public.$t ALTER COLUMN $c->[0] TYPE bigint", sub { $c->[1] = 'bigint' });
		}
	}
	if ($r < 0.65 && @cols)
	{
		my $c = pick(@cols)->[0];
		my $i = fresh('i');
		return ("CREATE INDEX $i ON public.$t ($c)", sub { push @{ $m->{indexes} }, [ $i, $c ] });
	}
	if ($r < 0.70 && @{ $m->{indexes} })
	{
		my $i = pick(@{ $m->{indexes} })->[0];
		return ("DROP INDEX public.$i", sub { $m->{indexes} = [ grep { $_->[0] ne $i } @{ $m->{indexes} } ] });
	}
	if ($r < 0.77 && @cols)
	{
		my $c = pick(@cols)->[0];
		my $k = fresh('k');
		return ("ALTER TABLE public.$t ADD CONSTRAINT $k CHECK ($c IS NOT NULL OR id > 0)",
			sub { push @{ $m->{checks} }, [ $k, $c ] });
	}
	if ($r < 0.81 && @{ $m->{checks} })
	{
		my $k = pick(@{ $m->{checks} })->[0];
		return ("ALTER TABLE public.$t DROP CONSTRAINT $k", sub { $m->{checks} = [ grep { $_->[0] ne $k } @{ $m->{checks} } ] });
	}
	if ($r < 0.87)
	{
		my $n = fresh('t');
		return ("ALTER TABLE public.$t RENAME TO $n", sub { $tables{$n} = delete $tables{$t} });
	}
	if ($r < 0.92 && @live > 2)
	{
		return ("DROP TABLE public.$t", sub { delete $tables{$t} });
	}
	my $n = fresh('t');
	return ("CREATE TABLE public.$n AS SELECT g AS id, g AS a, g::text AS b FROM generate_series(1, 4) g",
		sub { $tables{$n} = { cols => [ [ 'a', 'int' ], [ 'b', 'text' ] ], indexes => [], checks => [], ctas => 1 } });
}

# Run one step on the publisher: a DDL alone, a transaction of DDL and rows
# (committed or rolled back), or rows alone.
sub step
{
	my $r = rand();
	if ($r < 0.35)
	{
		my @sql = rows_sql();
		$pub->safe_psql('postgres', $sql[0]) if @sql;
		return;
	}
	my ($sql, $apply) = ddl();
	my $rows = 0;
	my @stmts = ($sql);
	# a table made by CREATE TABLE AS gets its primary key in the same transaction
	my $ctas = $sql =~ /^CREATE TABLE \S+ AS/;
	push @stmts, 'ALTER TABLE ' . ($sql =~ /^CREATE TABLE (\S+)/)[0] . ' ADD PRIMARY KEY (id)' if $ctas;
	if ($r < 0.55)
	{
		$pub->safe_psql('postgres', join(";\n", @stmts));
		$apply->();
	}
	elsif ($r < 0.62)
	{
		$pub->safe_psql('postgres', "BEGIN;\n" . join(";\n", @stmts) . ";\nROLLBACK");
		$count{rollback}++;
		return;
	}
	else
	{
		# the DDL, then rows that may use what it made, in one transaction
		$apply->();
		my @more = map { rows_sql() } 1 .. 1 + int(rand(3));
		$pub->safe_psql('postgres', "BEGIN;\n" . join(";\n", @stmts, @more) . ";\nCOMMIT");
		$count{txn}++;
	}
	$committed += $ctas ? 3 : 1;
	$count{ddl}++;
	return;
}

sub apply_worker_pid
{
	return $sub->safe_psql('postgres',
		"SELECT pid FROM pg_stat_subscription WHERE subname = 'sub' AND relid IS NULL AND pid IS NOT NULL");
}

my %faults = (
	int($steps / 4) => sub {
		$sub->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_stat_subscription WHERE subname = 'sub' AND relid IS NULL AND pid IS NOT NULL")
		  or die 'no apply worker';
		my $pid = apply_worker_pid();
		note("kill -9 of the apply worker $pid (the postmaster restarts the cluster)");
		kill 'KILL', $pid;
		$sub->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_stat_subscription WHERE subname = 'sub' AND relid IS NULL AND pid IS NOT NULL AND pid <> $pid")
		  or die 'the subscriber did not come back after the kill';
	},
	int($steps / 2) => sub {
		note('immediate stop of the subscriber');
		$sub->stop('immediate');
		$sub->start;
	},
	int(3 * $steps / 4) => sub {
		note('immediate stop of the publisher');
		$pub->stop('immediate');
		$pub->start;
	});

for my $i (1 .. $steps)
{
	$faults{$i}->() if $faults{$i};
	step();
}
note(sprintf('%d DDL steps (%d outbox rows), %d row steps, %d transactions with both, %d rolled back',
	$count{ddl}, $committed, $count{rows}, $count{txn}, $count{rollback}));

$pub->wait_for_catchup('sub');
is($sub->safe_psql('postgres', "SELECT state || ' ' || coalesce(last_error, '-') FROM ddl_notify.ddl_apply_status"),
	'applying -', 'applying, no error');
is($sub->safe_psql('postgres', 'SELECT applied FROM ddl_notify.ddl_apply_status'), $committed,
	'each committed statement applied once, rolled-back ones never');

# pg_dump of both, without what is each side's own
sub dump_schema
{
	my ($node) = @_;
	my ($stdout, $stderr);
	my $bindir = $node->config_data('--bindir');
	my $ok = IPC::Run::run([ "$bindir/pg_dump", '--schema-only', '--no-publications', '--no-subscriptions',
			'--exclude-schema=ddl_notify', '-d', $node->connstr('postgres') ],
		'>', \$stdout, '2>', \$stderr);
	die "pg_dump failed: $stderr" unless $ok;
	# \restrict and \unrestrict carry a random key per dump (newer pg_dump)
	return join("\n", grep { !/^\\(un)?restrict / } split /\n/, $stdout);
}
my ($dp, $ds) = (dump_schema($pub), dump_schema($sub));
ok($dp eq $ds, 'pg_dump --schema-only is equal on both sides')
  or diag("publisher:\n$dp\n\nsubscriber:\n$ds");

my $diff = 0;
for my $t (sort keys %tables)
{
	my $q = "SELECT * FROM public.$t ORDER BY id";
	my ($a, $b) = ($pub->safe_psql('postgres', $q), $sub->safe_psql('postgres', $q));
	next if $a eq $b;
	$diff++;
	diag("rows of $t differ:\npublisher:\n$a\nsubscriber:\n$b");
}
is($diff, 0, 'every table\'s rows are equal (' . scalar(keys %tables) . ' tables)');

$sub->stop;
$pub->stop;
done_testing();
