
# Copyright (c) 2026, the ddl_notify authors

# 018_pool_exit_race.pl: a worker's idle exit racing new commits (issue 16).
#
# G14, G3, G8: with ddl_notify.worker_idle_timeout = 0 a worker leaves the
#     pool after every round that leaves it nothing to do (and with
#     ddl_notify.stream_interval = 0 it does not wait for more commits after
#     a round), so under a stream of DDL commits the commits keep meeting a
#     worker that is deciding to exit, or has decided.  The test runs short
#     streams of 10 one-statement transactions (at least 60 of them, and on
#     until the server log shows that a commit found its database's worker
#     exiting: pool.c logs it at DEBUG1 when it queues the database for a
#     new worker), and checks after every stream that wait_for_delivery() is
#     true: nothing lost, and each event handled exactly once (UNIQUE log),
#     by several successive workers.  A lost wake-up shows only when it is a
#     stream's last commit (a later commit queues the database again), hence
#     many short streams.
#     Caught (checked): a committer that counts an EXITING worker as
#     serving its database (sets its flag, queues nothing: the stream's
#     last commits wait for ever, and the race line never shows).
#     Caught (checked, test/mutations/exit_ignores_wake.patch): a worker
#     that exits though a commit set its wake flag after its last look
#     (DdlnWorkerLeave not looking at the flag).  That window is a few
#     microseconds, which no stream hits; the mutation widens it to 20 ms,
#     and then some stream's last commit lands in it within the 60 streams
#     (caught in each of 6 runs).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node(
	'exitrace', conf => q{
ddl_notify.max_workers = 1
ddl_notify.worker_idle_timeout = 0
ddl_notify.stream_interval = 0
log_min_messages = debug1
});
$node->safe_psql('postgres', 'CREATE DATABASE race');
DdlNotifyTest::setup_db($node, 'race');
DdlNotifyTest::setup_subscriber($node, 'race', 's', unique => 1);

my $log_offset = -s $node->logfile;
my @all;
my @late;
my $seen = 0;
my $streams = 0;
for my $stream (1 .. 200)
{
	# one transaction per CREATE TABLE, with gaps of 0-8 ms between them so
	# that commits land in every phase of a worker's exit (load shaping:
	# nothing waits on these gaps; the checks wait on conditions).  Short
	# streams: a lost wake-up shows only when it is a stream's last commit
	# (any later commit queues the database again).
	my $sql = '';
	for my $i (1 .. 10)
	{
		$sql .= "CREATE TABLE public.r${stream}_$i (id int);\n"
		  . "SELECT pg_sleep(random() * 0.008);\n";
		push @all, "public.r${stream}_$i";
	}
	$node->safe_psql('race', $sql);
	$streams = $stream;
	if (DdlNotifyTest::wait_for_delivery($node, 'race', 60) ne 't')
	{
		push @late, $stream;
		last;
	}
	$seen ||= $stream
	  if $node->log_contains(qr/found the worker of database \d+ exiting/,
		$log_offset);
	# at least 60 streams, and on until a commit met an exiting worker
	last if $seen && $stream >= 60;
}
ok($seen, "G14: a commit met an exiting worker (first in stream $seen of $streams, 10 commits each)");
is(join(' ', @late), '', 'G14: every stream was delivered completely');
DdlNotifyTest::check_exactly_once($node, 'race', 's', \@all,
	'G14 idle exit racing commits');
cmp_ok($node->safe_psql('race', 'SELECT count(DISTINCT pid) FROM public.log_s'),
	'>', 1, 'G14: workers came and went meanwhile');

$node->stop;
done_testing();
