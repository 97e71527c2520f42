
# Copyright (c) 2026, the ddl_notify authors

# 002_crash_restart.pl: faults in the middle of a delivery batch.
#
# G9: a fast restart, an immediate shutdown (crash) and a SIGKILL of the
#     delivery worker (the postmaster then crash-restarts everything), each
#     while a batch is in flight, lose no committed event and repeat no
#     committed handler effect; after the restart delivery resumes by itself
#     in every database that has the extension (two here), with no DDL to
#     wake it and no per-database configuration.
#
# How: every handler logs the event; the handler of "uniq" then takes
# advisory lock 4242 in share mode for an object named *_park (see
# DdlNotifyTest.pm).  "plain" first handles and commits four events of one
# transaction while "uniq" is closed (failing); their rows stay, with plain's
# processed bit set.  Then a session takes the lock and "uniq" is reopened:
# its retry parks the worker in the middle of its batch of those four events,
# two handler calls done, not committed, the third waiting.  Events handled
# before the fault are committed in the logs.
# After the fault every event must be in each subscriber's log exactly once:
# "plain" has no constraint (a repeat shows as a duplicate row), "uniq" has
# UNIQUE (sub, event_id) (a repeat fails with 23505 and shows as an error),
# and the event table must drain.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $key  = DdlNotifyTest::LOCK_KEY;
my @dbs  = ('app', 'app2');
my $node = DdlNotifyTest::new_node('crash', conf => "restart_after_crash = on\n");

my %done;    # db => [identities of the tables created so far]
for my $db (@dbs)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	DdlNotifyTest::setup_db($node, $db);
	DdlNotifyTest::setup_subscriber($node, $db, 'plain');
	DdlNotifyTest::setup_subscriber($node, $db, 'uniq', unique => 1, park => 1);
	$done{$db} = [];
}

# One fault: events handled before it, a batch in flight when it happens.
sub fault_in_batch
{
	my ($label, $fault) = @_;
	my (%holder, %pending);

	for my $db (@dbs)
	{
		push @{ $done{$db} },
		  DdlNotifyTest::create_tables($node, $db, "${label}_pre", 1, 3);
		is(DdlNotifyTest::wait_for_delivery($node, $db),
			't', "G9 $label: $db: events before the fault are delivered");

		# "uniq" is closed (its handler fails, retried every 100-200 ms)
		# while "plain" handles and commits four events of one transaction;
		# their rows stay, with plain's processed bit set.
		$node->safe_psql($db,
			"INSERT INTO public.gate VALUES ('uniq', false) ON CONFLICT (sub) DO UPDATE SET open = false"
		);
		push @{ $done{$db} },
		  DdlNotifyTest::create_tables($node, $db, "${label}_mid", 1, 4,
			txn => 1, park => 3);
		ok( $node->poll_query_until(
				$db,
				"SELECT count(*) = 4 FROM public.log_plain WHERE object_identity LIKE 'public.${label}\\_mid%'"
			),
			"G9 $label: $db: \"plain\" has committed the four events");

		# Reopened, "uniq" gets them as one batch of four on its next retry:
		# two handler calls done, not committed, the third parked.
		$holder{$db} = $node->background_psql($db);
		$holder{$db}->query_safe("SELECT pg_advisory_lock($key)");
		$node->safe_psql($db,
			"UPDATE public.gate SET open = true WHERE sub = 'uniq'");
		ok(DdlNotifyTest::wait_worker_blocked($node, $db),
			"G9 $label: $db: the worker is parked inside a batch");
		like(
			$node->safe_psql(
				'postgres',
				"SELECT query FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' AND datname = '$db'"
			),
			qr/^ddl_notify: delivering 4 events to subscriber "uniq"/,
			"G9 $label: $db: the worker is in a batch of 4 events for \"uniq\"");
		is( $node->safe_psql(
				$db,
				"SELECT count(*) FROM public.log_uniq WHERE object_identity LIKE 'public.${label}\\_mid%'"
			),
			'0',
			"G9 $label: $db: \"uniq\" has committed none of them");
		$pending{$db} = $node->safe_psql($db,
			'SELECT string_agg(id::text, \',\' ORDER BY id) FROM ddl_notify.event'
		);
		isnt($pending{$db}, '', "G9 $label: $db: events are pending at the fault");
	}

	my $launcher = DdlNotifyTest::launcher_pid($node);
	$fault->();

	for my $db (@dbs)
	{
		# the holder's connection died with the server; its psql is idle
		eval { $holder{$db}->quit; };

		isnt(DdlNotifyTest::wait_worker($node, $db),
			'', "G9 $label: $db: a worker runs again after the fault");
		is(DdlNotifyTest::wait_for_delivery($node, $db),
			't', "G9 $label: $db: delivery resumes by itself");
		for my $sub ('plain', 'uniq')
		{
			DdlNotifyTest::check_exactly_once($node, $db, $sub, $done{$db},
				"G9 $label: $db");
			is( $node->safe_psql(
					$db, qq{
SELECT count(*) FROM unnest('{$pending{$db}}'::bigint[]) AS p(id)
WHERE (SELECT count(*) FROM public.log_$sub l WHERE l.event_id = p.id) <> 1}),
				'0',
				"G9 $label: $db: every event pending at the fault reached $sub once"
			);
		}
		is($node->safe_psql($db, 'SELECT count(*) FROM ddl_notify.event'),
			'0', "G9 $label: $db: the event table drained");
	}
	isnt(DdlNotifyTest::launcher_pid($node),
		$launcher, "G9 $label: the launcher was restarted too");
	return;
}

fault_in_batch('fast', sub { $node->restart; });    # pg_ctl restart: fast mode

fault_in_batch(
	'immediate',
	sub {
		$node->stop('immediate');
		$node->start;
	});

fault_in_batch(
	'kill9',
	sub {
		my $offset = -s $node->logfile;
		my $pid = DdlNotifyTest::worker_pid($node, 'app');
		ok(kill('KILL', $pid), "G9 kill9: SIGKILL sent to the worker (pid $pid)");
		$node->wait_for_log(
			qr/all server processes terminated; reinitializing/, $offset);
		pass('G9 kill9: the postmaster crash-restarts the server');
	});

$node->stop;
done_testing();
