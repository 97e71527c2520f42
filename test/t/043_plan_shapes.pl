
# Copyright (c) 2026, the ddl_notify authors

# 043_plan_shapes.pl: the delivery engine's statements have plans that do
# not depend on the queue's statistics.
#
# G3, G5  Cost, not correctness: the engine keeps generic plans for the
#     life of a backend, and autovacuum analyzes a drained queue, so a plan
#     may be made while the statistics say ddl_notify.event is empty and run
#     on a queue of thousands.  This test drains one transaction of 2,000
#     events with two subscribers (so that every step of a batch runs: the
#     delete of rows nobody else needs, the bits, the delete of complete
#     rows, commit_order's) twice, in a fresh session each time (new plans):
#     once after ANALYZE of the drained queue (reltuples 0, pages left), once
#     after ANALYZE of the full queue.  auto_explain logs the plan of every
#     statement the engine ran; for each statement, the plans of both runs
#     must be the same (costs aside), and that of the per-batch commit_order
#     delete must read event by xid, never a whole scan.  (The sweep's two
#     reads of the whole queue, now and then, are left out.)  The bits and
#     the deletes of event rows are written in C (fetch.c) by (xid, id) and
#     have no plan: no statement may name the events of a batch by a list
#     (unnest) any more.  Everything is delivered once to each subscriber.
#     Catches: the commit_order delete's NOT EXISTS as a plain anti join
#     (test/mutations/order_delete_anti_join.patch); before the bits were
#     written in C, the events named by "e.id = u.id AND e.xid = u.xid",
#     which under the empty statistics became a nested loop walking the
#     whole of event_xid with the event list inside (2,000 events: 1.2 s to
#     drain instead of 0.03 s; 16k: 38 s).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $n = 2000;
my $node = DdlNotifyTest::new_node('plan_shapes',
	conf => "ddl_notify.max_workers = 0\nddl_notify.batch_size = 500\n");
my $db = 'app';
$node->safe_psql('postgres', "CREATE DATABASE $db");
DdlNotifyTest::setup_db($node, $db);
DdlNotifyTest::setup_subscriber($node, $db, 'one');
DdlNotifyTest::setup_subscriber($node, $db, 'two');

# One transaction of $n events, named by PREFIX.
sub big_transaction
{
	my ($prefix) = @_;
	$node->safe_psql(
		$db, qq{
BEGIN;
DO \$\$BEGIN FOR i IN 1..$n LOOP EXECUTE format('CREATE TABLE public.${prefix}_%s ()', i); END LOOP; END\$\$;
COMMIT;
});
	return;
}

# Deliver in a fresh session with auto_explain on; the plans it logged, as
# { statement text => { plan without costs => 1 } }.
sub deliver_and_plans
{
	my $log    = $node->logfile;
	my $offset = -s $log;
	$node->safe_psql(
		$db, q{
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
CALL ddl_notify.deliver();
});
	my $text = substr(slurp_file($log), $offset);
	my %plans;
	my ($query, @plan);
	my $flush = sub {
		if (defined $query)
		{
			$plans{$query}{ join("\n", @plan) } = 1;
		}
		undef $query;
		@plan = ();
	};
	foreach my $line (split /\n/, $text)
	{
		if ($line =~ /LOG:  duration: .* plan:/)
		{
			$flush->();
			$query = '';
		}
		elsif (defined $query && $line =~ /^\tQuery Text: (.*)/)
		{
			$query = $1;
		}
		elsif (defined $query && $line =~ /^\t(.*)/)
		{
			my $p = $1;
			$p =~ s/\s*\(cost=[^)]*\)//;
			# (Query Parameters: 16+ logs the values, which differ between the runs)
			next if $p =~ /^\s*(Rows Removed|Hits:|Cache Mode|Memory Usage|Query Parameters:)/;
			push @plan, $p;
		}
		else
		{
			$flush->();
		}
	}
	$flush->();
	# the engine's own statements only
	delete $plans{$_} foreach grep { !/ddl_notify\./ || /CALL ddl_notify/ } keys %plans;
	return \%plans;
}

sub delivered
{
	my ($name) = @_;
	return $node->safe_psql($db,
		"SELECT count(*), count(DISTINCT event_id) FROM public.log_$name");
}

# --- statistics of an empty queue -----------------------------------------
$node->safe_psql($db,
	q{DO $$BEGIN FOR i IN 1..200 LOOP EXECUTE format('CREATE TABLE public.warm_%s ()', i); END LOOP; END$$;});
$node->safe_psql($db, 'CALL ddl_notify.deliver()');
$node->safe_psql($db, 'ANALYZE ddl_notify.event; ANALYZE ddl_notify.commit_order');
is( $node->safe_psql(
		$db, q{SELECT relpages > 0, reltuples FROM pg_class
			  WHERE oid = 'ddl_notify.event'::regclass}),
	"t|0",
	'statistics say the queue is empty, its pages are left');
big_transaction('e');
my $empty = deliver_and_plans();
# "one" also got the two events of "two"'s setup
is(delivered('one'), ($n + 202) . '|' . ($n + 202), 'empty statistics: every event delivered once to one');
is(delivered('two'), ($n + 200) . '|' . ($n + 200), 'empty statistics: every event delivered once to two');

# --- statistics of the full queue -----------------------------------------
big_transaction('f');
$node->safe_psql($db, 'ANALYZE ddl_notify.event; ANALYZE ddl_notify.commit_order');
cmp_ok(
	$node->safe_psql(
		$db, q{SELECT reltuples FROM pg_class WHERE oid = 'ddl_notify.event'::regclass}),
	'>=', $n, 'statistics say the queue is full');
my $full = deliver_and_plans();
is(delivered('one'), (2 * $n + 202) . '|' . (2 * $n + 202), 'full statistics: every event delivered once to one');
is(delivered('two'), (2 * $n + 200) . '|' . (2 * $n + 200), 'full statistics: every event delivered once to two');
is($node->safe_psql($db, 'SELECT count(*) FROM ddl_notify.event'), '0', 'the queue is empty');

# --- the plans --------------------------------------------------------------
my @batch = grep { /commit_order o WHERE o\.pos/ } keys %$empty;
is(scalar(@batch), 1, 'the per-batch commit_order delete ran and was logged');
is(scalar(grep { /unnest/ } keys %$empty, keys %$full), 0,
	'no statement names the events of a batch: the bits are written in C');
# The sweep's two whole-queue reads (rows nobody needs, transactions
# without a position) read the queue once whatever their plan (a
# Materialize more or less, a bitmap or an index scan): left out.
foreach my $q (sort grep { !/DELETE FROM ddl_notify.event e WHERE e.ctid|EXCEPT/ } keys %$empty)
{
	my $short = substr($q, 0, 60);
	ok(exists $full->{$q}, "ran under both statistics: $short");
	next unless exists $full->{$q};
	is_deeply([ sort keys %{ $empty->{$q} } ], [ sort keys %{ $full->{$q} } ],
		"same plan under empty and full statistics: $short");
}
foreach my $q (@batch)
{
	my $short = substr($q, 0, 60);
	foreach my $plan (keys %{ $empty->{$q} }, keys %{ $full->{$q} })
	{
		unlike($plan, qr/Seq Scan on (event|commit_order)|Hash|Merge|Materialize/,
			"no whole scan, hash or merge: $short");
		like($plan, qr/Index Only Scan using event_xid on event e|Index Scan using event_xid on event e\n\s*Index Cond: \(xid = /,
			"events of a transaction looked up by xid: $short");
	}
}

done_testing();
