
# Copyright (c) 2026, the ddl_notify authors

# 021_soak_mixed.pl: DDL replication over PostgreSQL's built-in logical
# replication under a random workload with faults (G16).
#
# Two clusters, a publisher and a subscriber, both preloading ddl_notify.
# Schema "app" is made on both with two filled tables, then publication
# "pub" (FOR ALL TABLES; DDLN_REPL_PUBLICATION=schema for FOR TABLES IN
# SCHEMA app) gets ddl_notify.publish_ddl() and subscription "sub"
# ddl_notify.apply_ddl().  Then a seeded random workload (SoakGen.pm) runs
# on the publisher only: CREATE TABLE with serial, bigserial or identity
# primary keys, ADD/DROP/RENAME COLUMN, ALTER COLUMN TYPE, ADD/DROP
# CONSTRAINT (CHECK, UNIQUE), CREATE/DROP INDEX, RENAME TABLE, DROP TABLE,
# CREATE TABLE and INSERT in one transaction, DDL and rows of the changed
# table in one transaction (some rolled back), and rows (INSERT, UPDATE,
# DELETE) of every live table between the DDL steps.  At a quarter, half
# and three quarters of the run, with the stream not caught up: kill -9 of
# the subscription's apply worker (pid from pg_stat_subscription; the
# subscriber restarts after the crash), an immediate stop and start of the
# subscriber, then of the publisher.  Waits are on conditions only: the
# publisher's replay_lsn of "sub" (wait_for_catchup), pg_subscription_rel,
# ddl_notify.ddl_apply_status; never sleeps.
#
# At the end: ddl_apply_status says 'applying' with no error; pg_dump
# --schema-only of both sides (ddl_notify's schema left out) is the same;
# every table of app has the same rows on both sides (compared as text,
# ORDER BY every column).
#
# Catches (each would fail an assertion here): rows of a table created on
# the subscriber skipped for want of its pg_subscription_rel entry (the
# rows of every CREATE TABLE and INSERT transaction differ; a mutation
# that skips it in apply.c's DdlnApplyNewTable was CAUGHT: 12 tables'
# rows differ).  Meant to catch, not tried with a mutation: a DDL
# statement applied twice or not at all, at a crash or restart, or a
# rolled-back transaction's (the applied count, or a repeated
# ADD COLUMN stopping the subscription: the catch-up times out with
# ddl_apply_status shown); outbox rows applied out of stream order (a row
# of a column added in the same transaction arrives first: the apply
# worker fails, the catch-up times out); a divergence the after-image
# check lets through, or a DDL lost at a restart (the dumps differ).
# The publisher has a subscriber of its own (pub_audit), which must not
# become the subscriber's: test/mutations/replication_bookkeeping_replicated
# .patch (rows a logical replication worker writes into the extension's
# tables kept) CAUGHT here that way.
# Not caught here, by design: test/mutations/replication_no_dedupe.patch
# (one subscription: a committed apply transaction is never sent again,
# its origin progress commits with it; 070_ddl_replication's two
# subscriptions catch it).
#
# Environment:
#   DDLN_REPL_SEED=N        the workload's seed (default 1; printed first)
#   DDLN_REPL_STEPS=N       DDL steps (default 120)
#   DDLN_REPL_PUBLICATION=all|schema  FOR ALL TABLES (default) or FOR
#                           TABLES IN SCHEMA app
#   DDLN_REPL_MANUAL=1      harness check, without ddl_notify's replication:
#                           no publish_ddl/apply_ddl; the publication is FOR
#                           TABLES IN SCHEMA app; before each step with DDL
#                           the subscriber catches up, the step's DDL runs
#                           on the subscriber first, then the whole step on
#                           the publisher, and a step that made a table is
#                           followed by ALTER SUBSCRIPTION ... REFRESH
#                           PUBLICATION and the table's sync.  It proves the
#                           generator, the faults and the comparisons work
#                           on stock logical replication.
#   DDLN_REPL_BREAK=index|row  (with DDLN_REPL_MANUAL=1) break the copy on
#                           purpose to prove the comparisons fail: "index"
#                           leaves out the first CREATE INDEX on the
#                           subscriber (the dumps differ), "row" deletes one
#                           row on the subscriber before comparing (the
#                           rows differ).
#   Proven once (seed 1, 120 steps, PostgreSQL 15): DDLN_REPL_MANUAL=1
#   passes (8 of 8); with DDLN_REPL_BREAK=index the dump assertion fails,
#   its diff showing index i6_893 missing on the subscriber; with
#   DDLN_REPL_BREAK=row the rows assertions fail for the broken table
#   (27 rows against 26).
#
# Run it alone: DDLN_REPL_SEED=7 make test-replication; ONLY=021 for this
# file only.  020_soak.pl is the other soak, with a workload of
# its own (CREATE TABLE AS, Perl's rand).

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../t", $FindBin::RealBin;

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use SoakGen;

my $seed   = $ENV{DDLN_REPL_SEED}  // 1;
my $steps  = $ENV{DDLN_REPL_STEPS} // 120;
my $manual = $ENV{DDLN_REPL_MANUAL} // 0;
my $break  = $ENV{DDLN_REPL_BREAK} // '';
my $pubkind = $manual ? 'schema' : ($ENV{DDLN_REPL_PUBLICATION} // 'all');
diag "021_soak: seed $seed, $steps steps, publication $pubkind"
  . ($manual ? ', harness check (DDLN_REPL_MANUAL=1)' : '')
  . ($break ? ", broken on purpose: $break" : '')
  . " (DDLN_REPL_SEED=$seed DDLN_REPL_STEPS=$steps)";

my $pub = DdlNotifyTest::new_node(
	'publisher', conf => qq{
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
});
# restart_after_crash: the kill -9 of the apply worker is a crash of the
# subscriber, which must come back by itself; a short retry interval so the
# apply worker restarts promptly after each fault.
my $sub = DdlNotifyTest::new_node(
	'subscriber', conf => qq{
restart_after_crash = on
wal_retrieve_retry_interval = '100ms'
max_logical_replication_workers = 6
max_worker_processes = 16
});

# the schema, the same on both sides, and two filled tables
my $init = q{
CREATE EXTENSION ddl_notify;
CREATE SCHEMA app;
CREATE TABLE app.base (id serial PRIMARY KEY, a integer, b text DEFAULT 'x' NOT NULL);
CREATE TABLE app.base2 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, c date);
CREATE FUNCTION public.audit(e ddl_notify.event) RETURNS void LANGUAGE sql AS '';
};
$pub->safe_psql('postgres', $init);
$sub->safe_psql('postgres', $init);
$pub->safe_psql('postgres', q{
INSERT INTO app.base (a) SELECT g FROM generate_series(1, 50) g;
INSERT INTO app.base2 (c) SELECT DATE '2024-01-01' + g FROM generate_series(1, 20) g;
});
# a subscriber of the publisher's own, so that its bookkeeping (subscriber
# row, events, processed bits) has rows that FOR ALL TABLES would carry
$pub->safe_psql('postgres', q{SELECT ddl_notify.subscribe('pub_audit', 'public.audit(ddl_notify.event)')});
$pub->safe_psql('postgres',
	$pubkind eq 'all'
	? 'CREATE PUBLICATION pub FOR ALL TABLES'
	: 'CREATE PUBLICATION pub FOR TABLES IN SCHEMA app');
$pub->safe_psql('postgres', q{SELECT ddl_notify.publish_ddl('pub')}) unless $manual;
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION pub");
$sub->safe_psql('postgres', q{SELECT ddl_notify.apply_ddl('sub')}) unless $manual;
$sub->wait_for_subscription_sync($pub, 'sub');
pass('the subscription made its initial sync');

# status(): ddl_apply_status of sub as one line, for failure messages
sub status
{
	return 'none (harness check)' if $manual;
	my ($rc, $out, $err) = $sub->psql('postgres',
		q{SELECT row_to_json(s) FROM ddl_notify.ddl_apply_status s WHERE subscription = 'sub'});
	return $rc == 0 ? $out : "(could not read: $err)";
}

# catch_up(): the subscriber has applied everything the publisher wrote.
# Dies (with ddl_apply_status) when it does not within the TAP timeout.
sub catch_up
{
	my $ok = eval { $pub->wait_for_catchup('sub'); 1 };
	return if $ok;
	diag "catch-up failed: $@";
	diag 'ddl_apply_status: ' . status();
	diag 'pg_stat_subscription: '
	  . $sub->safe_psql('postgres', 'SELECT row_to_json(s) FROM pg_stat_subscription s');
	BAIL_OUT("021_soak seed $seed: the subscriber did not catch up");
}

# apply_pid(): the pid of sub's apply worker, once there is one
sub apply_pid
{
	my ($not) = @_;
	my $cond = defined $not ? "AND pid <> $not" : '';
	$sub->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_subscription WHERE subname = 'sub' AND relid IS NULL AND pid IS NOT NULL $cond")
	  or BAIL_OUT("021_soak seed $seed: no apply worker for sub; ddl_apply_status: " . status());
	return $sub->safe_psql('postgres',
		"SELECT pid FROM pg_stat_subscription WHERE subname = 'sub' AND relid IS NULL");
}

# fault(N): the Nth fault, with whatever the stream holds still in flight
sub fault
{
	my ($n) = @_;
	if ($n == 1)
	{
		my $pid = apply_pid();
		note "fault: kill -9 of the apply worker, pid $pid";
		kill 'KILL', $pid;
		# the subscriber restarts after the crash: a new apply worker
		apply_pid($pid);
	}
	elsif ($n == 2)
	{
		note 'fault: immediate stop and start of the subscriber';
		$sub->stop('immediate');
		$sub->start;
	}
	else
	{
		note 'fault: immediate stop and start of the publisher';
		$pub->stop('immediate');
		$pub->start;
	}
	pass("fault $n survived by the harness");
	return;
}

my $gen = SoakGen->new(seed => $seed);
my $state_query = SoakGen::state_query();
my ($ran, $failed, $skipped_index, $committed) = (0, 0, 0, 0);
my %faults = map { int($steps * $_ / 4) => $_ } 1 .. 3;
for my $step (1 .. $steps)
{
	my $model = decode_json($pub->safe_psql('postgres', $state_query));
	my $s = $gen->next_step($model);
	my $sql = SoakGen::sql($s->{items}, $s->{txn}, 0);
	note "step $step:\n$sql";
	if ($manual && ($s->{txn} // '') ne 'ROLLBACK')
	{
		# the harness check: the subscriber has everything so far, then
		# takes the step's DDL first
		catch_up();
		my $ddl = SoakGen::sql($s->{items}, $s->{txn}, 1);
		if ($break eq 'index' && !$skipped_index && $ddl =~ /CREATE INDEX/)
		{
			note 'broken on purpose: this step is not run on the subscriber';
			$skipped_index = 1;
		}
		else
		{
			my ($rc, $out, $err) = $sub->psql('postgres', $ddl);
			BAIL_OUT("021_soak seed $seed step $step: the subscriber failed the step's DDL: $err")
			  if $rc != 0 || $err =~ /ERROR/;
		}
	}
	my ($rc, $out, $err) = $pub->psql('postgres', $sql);
	if ($rc == 0 && $err !~ /ERROR/)
	{
		$ran++;
		# one outbox row per DDL statement of a committed step
		$committed += grep { defined $_->{ddl} } @{ $s->{items} }
		  unless ($s->{txn} // '') eq 'ROLLBACK';
	}
	else
	{
		$failed++;
		diag "step $step failed on the publisher: $err";
		BAIL_OUT("021_soak seed $seed step $step: a failed step diverges the harness check")
		  if $manual;
	}
	if ($manual && grep { ($_->{kind} // '') eq 'create table' } @{ $s->{items} })
	{
		$sub->safe_psql('postgres', 'ALTER SUBSCRIPTION sub REFRESH PUBLICATION');
		$sub->wait_for_subscription_sync();
	}

	# rows of every live table, then now and then a fault
	$model = decode_json($pub->safe_psql('postgres', $state_query));
	$pub->safe_psql('postgres', join('', map { "$_->{dml};\n" } $gen->rows($model)));
	fault($faults{$step}) if $faults{$step};
}
diag "021_soak seed $seed: $ran steps ran, $failed failed; steps by kind: "
  . join(', ', map { "$_ $gen->{stats}{$_}" } sort keys %{ $gen->{stats} });
is($failed, 0, 'every step ran on the publisher');

catch_up();
$sub->wait_for_subscription_sync($pub, 'sub');

unless ($manual)
{
	is( $sub->safe_psql(
			'postgres', q{
SELECT state || ' ' || coalesce(last_error, 'no error')
FROM ddl_notify.ddl_apply_status WHERE subscription = 'sub'}),
		'applying no error',
		'ddl_apply_status: sub is applying, with no error');
	is( $sub->safe_psql('postgres', q{SELECT count(*) FROM ddl_notify.subscriber_status WHERE name = 'pub_audit'})
		  . ' '
		  . $pub->safe_psql('postgres', q{SELECT count(*) FROM ddl_notify.subscriber_status WHERE name = 'pub_audit'}),
		'0 1', "the publisher's subscriber stays the publisher's (publication $pubkind)");
	is($sub->safe_psql('postgres', q{SELECT applied FROM ddl_notify.ddl_apply_status WHERE subscription = 'sub'}),
		$committed, "each committed DDL statement applied once, rolled-back ones never ($committed)");
}

# dump(NODE): pg_dump --schema-only of the user database.  Left out or
# normalised, and why:
# - ddl_notify's schema: each side's own bookkeeping (queue, outbox, apply
#   state), not the replicated schema;
# - publications and subscriptions (--no-publications, --no-subscriptions):
#   the replication set-up itself exists on one side only;
# - psql's \restrict and \unrestrict lines (15.14 and later): a random key
#   in every dump.
sub dump_schema
{
	my ($node) = @_;
	my ($out, $err);
	IPC::Run::run(
		[
			'pg_dump', '--schema-only', '--no-publications', '--no-subscriptions',
			'--exclude-schema=ddl_notify', '-d', $node->connstr('postgres')
		],
		'>', \$out, '2>', \$err)
	  or die "pg_dump: $err";
	$out =~ s/^\\(un)?restrict .*\n//mg;
	return $out;
}

my $pdump = dump_schema($pub);
my $sdump = dump_schema($sub);
my $ntables = () = $pdump =~ /^CREATE TABLE /mg;
cmp_ok($ntables, '>', 2, "the publisher has tables at the end ($ntables)");
if (!ok($sdump eq $pdump, 'pg_dump --schema-only is the same on both sides'))
{
	my $dir = $PostgreSQL::Test::Utils::tmp_check;
	for ([ 'publisher', $pdump ], [ 'subscriber', $sdump ])
	{
		open my $fh, '>', "$dir/soak_$_->[0].sql" or die $!;
		print $fh $_->[1];
		close $fh;
	}
	my ($diff, $e);
	IPC::Run::run([ 'diff', '-u', "$dir/soak_publisher.sql", "$dir/soak_subscriber.sql" ], '>', \$diff, '2>', \$e);
	diag "the dumps differ:\n$diff";
}

# every table's rows, as text, ordered by every column
my @tables = split /\n/, $pub->safe_psql('postgres',
	q{SELECT c.relname || ' ' || string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = 'app' AND c.relkind = 'r' GROUP BY c.relname ORDER BY c.relname});
if ($break eq 'row')
{
	# the first table that has rows
	my ($victim) = grep {
		my ($n) = split / /;
		$sub->safe_psql('postgres', "SELECT count(*) > 0 FROM app.$n") eq 't'
	} @tables;
	($victim) = split / /, $victim;
	$sub->safe_psql('postgres', "DELETE FROM app.$victim WHERE id = (SELECT min(id) FROM app.$victim)");
	note "broken on purpose: one row of app.$victim deleted on the subscriber";
}
my ($rows, $same) = (0, 0);
for my $t (@tables)
{
	my ($name, $cols) = split / /, $t, 2;
	my $q = "SELECT t::text FROM app.$name t ORDER BY $cols";
	my $p = $pub->safe_psql('postgres', $q);
	my $s = $sub->safe_psql('postgres', $q);
	$rows += () = $p =~ /^/mg if length $p;
	if ($p eq $s)
	{
		$same++;
		next;
	}
	fail("app.$name has the same rows on both sides");
	diag 'publisher: ' . (() = $p =~ /^/mg) . ' rows, subscriber: ' . (() = $s =~ /^/mg) . ' rows';
}
is($same, scalar @tables, "every table has the same rows on both sides ($same of "
	  . scalar(@tables) . " tables, $rows rows)");

$sub->stop;
$pub->stop;
done_testing();
