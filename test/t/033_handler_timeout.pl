# Copyright (c) 2026, the ddl_notify authors

# 033_handler_timeout.pl: ddl_notify.handler_timeout ends a handler call
# whatever the handler traps (issue 29, item 4).
#
# G10/G14: one pool worker (max_workers = 1), handler_timeout = 2 s, and in
#     database "a" a handler that traps query_canceled inside a pg_sleep()
#     loop and never returns.  DDL in database "b" is delivered within the
#     timeout plus a few seconds: the call is cancelled at 2 s, and 1 s later
#     (the grace) its worker is ended, which frees the pool's only slot.  The
#     log says so.  Catches: no second stage (DdlnHandlerKillHandler not
#     armed, or not setting ProcDiePending): b is never delivered, the worker
#     of a holds the slot for ever (the issue's report;
#     test/mutations/handler_timeout_no_kill.patch).
# G7: a worker the timeout ended is replaced after the first restart delay,
#     not the doubled delay of a worker that died young: the 2nd and 3rd
#     attempts of a subscriber retried for ever (the 5th and 6th ended
#     workers of the database) are less than 12 s apart (measured: 5 s), and
#     the other subscriber of the database is delivered between attempts.
#     Catches: the launcher doubling the restart delay for it (the slot's
#     handler_ended ignored): 36 s apart
#     (test/mutations/handler_ended_restart_doubles.patch).
# G7: each ended call counts as a failed attempt of that subscriber:
#     attempts, last_error (the handler "did not return; the worker was
#     ended"), SQLSTATE 57014, a next retry; after max_attempts (3) the event
#     is dead-lettered, and the handler was called exactly 3 times (a
#     sequence the handler draws from at its start, outside the transaction
#     that dies).  A subscriber retried for ever is never called more than
#     once per recorded attempt, with the backoff in between (calls -
#     attempts stays 0 or 1, next_retry_at after last_error_at), observed
#     over several attempts.  Catches: the note of the ended call not kept
#     (DdlnKeepEndedCall a no-op) or not counted (DdlnCountEndedCall not
#     called): attempts stay 0 while the calls grow with every worker
#     restart, and nothing is dead-lettered
#     (test/mutations/ended_call_not_counted.patch).
# G10: a handler that traps the cancel and returns fails all the same (its
#     effects rolled back, 57014, dead-lettered with max_attempts 1), and
#     its worker is not ended.  Catches: no check of ddln_handler_timed_out
#     after the call returns (the event counted as delivered;
#     test/mutations/timed_out_return_succeeds.patch).
# G10: a plain slow handler still gets the ordinary cancel: a failed
#     attempt, the worker stays (same pid).  Catches: the process ended at
#     the timeout itself, without the cancel and its grace
#     (test/mutations/handler_timeout_no_grace.patch).
# G10: CALL ddl_notify.deliver() in a session (a cluster with max_workers =
#     0): the session is ended the same way (FATAL), and the next CALL
#     counts the ended call as a failed attempt ("the session was ended")
#     before it calls the handler again.
# Synchronisation: wait_for_delivery, poll_query_until on conditions.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use DdlNotifyTest;

# A check the rest depends on failed: end here (a broken build fails fast
# instead of waiting out every later condition).
sub stop_unless
{
	my ($ok) = @_;
	return if $ok;
	done_testing();
	exit 0;
}

my $node = DdlNotifyTest::new_node(
	'timeout', conf => qq{
ddl_notify.max_workers = 1
ddl_notify.handler_timeout = '2s'
ddl_notify.retry_initial_delay = '500ms'
ddl_notify.retry_max_delay = '1s'
});

# A handler that never returns: each call draws from public.calls first (a
# sequence: the draw survives the transaction the end of the process aborts).
my $trapper = q{
CREATE SEQUENCE public.calls;
CREATE FUNCTION public.h_trap(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM nextval('public.calls');
	LOOP
		BEGIN
			PERFORM pg_sleep(0.05);
		EXCEPTION WHEN query_canceled THEN
			NULL;
		END;
	END LOOP;
END $$;
};

for my $db ('a', 'b')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	DdlNotifyTest::setup_db($node, $db);
}
$node->safe_psql('a', $trapper);
$node->safe_psql('a',
	"SELECT ddl_notify.subscribe('trapper', 'public.h_trap(ddl_notify.event)', max_attempts => 3)");
DdlNotifyTest::setup_subscriber($node, 'b', 'good');

# --- the issue's shape: the worker of a is stuck in a handler ---------------

my $log_offset = -s $node->logfile;
$node->safe_psql('a', 'CREATE TABLE public.t1 (id int)');
ok( $node->poll_query_until('a', 'SELECT is_called FROM public.calls'),
	'the trapping handler was called');
my $t0 = time();
$node->safe_psql('b', 'CREATE TABLE public.tb (id int)');
stop_unless(is(DdlNotifyTest::wait_for_delivery($node, 'b', 20),
	't', 'G14: DDL in b is delivered although a handler in a traps every cancel'));
my $took = time() - $t0;
cmp_ok($took, '<', 12,
	'G14: ... within the timeout (2 s), the grace (1 s) and a few seconds');
note(sprintf('b delivered %.1f s after its DDL', $took));
is($node->safe_psql('b', "SELECT count(*) FROM public.log_good WHERE object_identity = 'public.tb'"),
	'1', 'G14: the handler in b ran once');
ok( $node->wait_for_log(
		qr/handler of subscriber "trapper" exceeded ddl_notify.handler_timeout \(2000 ms\) and did not return within 1000 ms of its cancel; the worker was ended/,
		$log_offset),
	'G10: the log says the worker was ended, and why');

# --- the ended calls are failed attempts, then a dead letter ---------------

# each attempt costs 3 s (timeout and grace), a worker restart and a backoff
stop_unless(ok( $node->poll_query_until('a',
		"SELECT count(*) = 1 FROM ddl_notify.dead_letter WHERE subscriber = 'trapper' "
		  . "OR (SELECT last_value > 6 FROM public.calls)"),
	'G7: after max_attempts ended calls, the event is dead-lettered')
	&& is($node->safe_psql('a', "SELECT count(*) FROM ddl_notify.dead_letter WHERE subscriber = 'trapper'"),
		'1', 'G7: ... before the handler was called twice as often'));
is( $node->safe_psql('a',
		"SELECT attempts || ' ' || sqlstate || ' ' || (error LIKE 'handler of subscriber \"trapper\" exceeded ddl_notify.handler_timeout (2000 ms) and did not return; the worker was ended%') "
		  . "FROM ddl_notify.dead_letter WHERE subscriber = 'trapper'"),
	'3 57014 true', 'G7: the dead letter says 3 attempts, 57014 and why');
is(DdlNotifyTest::wait_for_delivery($node, 'a'), 't', 'a has nothing pending any more');
is($node->safe_psql('a', 'SELECT last_value FROM public.calls'),
	'3', 'G7: the handler was called exactly 3 times: each ended call was counted before the next');
is($node->safe_psql('a', "SELECT dead_letters || ' ' || attempts FROM ddl_notify.subscriber_status WHERE name = 'trapper'"),
	'1 0', 'G7: subscriber_status counts the dead letter');

# --- retried for ever: one call per attempt, the backoff in between ---------

my $calls0 = $node->safe_psql('a', 'SELECT last_value FROM public.calls');
$node->safe_psql('a',
	"SELECT ddl_notify.unsubscribe('trapper'), ddl_notify.subscribe('forever', 'public.h_trap(ddl_notify.event)')");
DdlNotifyTest::setup_subscriber($node, 'a', 'gooda');
$node->safe_psql('a', 'CREATE TABLE public.t2 (id int)');
my (@seen, @at);
for my $n (1 .. 3)
{
	# wait for attempt n to be recorded, then look at calls and attempts
	stop_unless(ok( $node->poll_query_until('a',
			"SELECT attempts >= $n FROM ddl_notify.subscriber_status WHERE name = 'forever'"),
		"G7: attempt $n of the handler that never returns is recorded"));
	my ($calls, $attempts, $err, $backoff, $at) = split /\|/, $node->safe_psql('a',
		"SELECT (SELECT last_value FROM public.calls) - $calls0, attempts, last_error_sqlstate, "
		  . "next_retry_at > last_error_at, extract(epoch FROM last_error_at) "
		  . "FROM ddl_notify.subscriber_status WHERE name = 'forever'");
	push @seen, "$calls/$attempts";
	push @at, $at;
	ok($calls - $attempts == 0 || $calls - $attempts == 1,
		"G7: calls ($calls) are attempts ($attempts) or one more (in progress)");
	is("$err $backoff", '57014 t', "G7: attempt $n: 57014, and a retry after a backoff");
	if ($n == 1 || $n == 3)
	{
		# the database's other subscriber is served between the attempts,
		# the 6th ended worker of a as promptly as the 4th
		my $t1 = time();
		$node->safe_psql('a', "CREATE TABLE public.t2_$n (id int)");
		ok( $node->poll_query_until('a',
				"SELECT count(*) = 1 FROM public.log_gooda WHERE object_identity = 'public.t2_$n'"),
			"G7: after attempt $n, the other subscriber of a is delivered meanwhile");
		cmp_ok(time() - $t1, '<', 12, 'G7: ... within the timeout, the grace and a few seconds');
		note(sprintf('gooda delivered %.1f s after its DDL', time() - $t1));
	}
}
note('calls/attempts seen: ' . join(' ', @seen));
# an attempt costs the timeout and the grace (3 s), the replacement of the
# worker (a 1 s restart delay) and the backoff (at most 1 s here)
my $interval = $at[2] - $at[1];
note(sprintf('attempts 2 and 3 were %.1f s apart', $interval));
cmp_ok($interval, '<', 12,
	'G7: the 5th and 6th ended workers of a were replaced as promptly as the first');
$node->safe_psql('a', "SELECT ddl_notify.unsubscribe('forever')");

# --- a handler that traps the cancel and returns ---------------------------

$node->safe_psql('a', q{
CREATE TABLE public.effects (id bigint);
CREATE FUNCTION public.h_return(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	BEGIN
		PERFORM pg_sleep(30);
	EXCEPTION WHEN query_canceled THEN
		NULL;
	END;
	INSERT INTO public.effects VALUES (e.id);
END $$;
SELECT ddl_notify.subscribe('returner', 'public.h_return(ddl_notify.event)', max_attempts => 1);
});
my $worker = DdlNotifyTest::wait_worker($node, 'a');
$node->safe_psql('a', 'CREATE TABLE public.t3 (id int)');
is(DdlNotifyTest::wait_for_delivery($node, 'a'), 't', 'the returning handler is done with');
is( $node->safe_psql('a',
		"SELECT sqlstate || ' ' || (error LIKE 'handler of subscriber \"returner\" exceeded ddl_notify.handler_timeout (2000 ms)%trapped the cancel%') "
		  . "FROM ddl_notify.dead_letter WHERE subscriber = 'returner'"),
	'57014 true', 'G10: a handler that trapped the cancel and returned failed all the same');
is($node->safe_psql('a', 'SELECT count(*) FROM public.effects'),
	'0', 'G10: ... and its effects were rolled back');
is(DdlNotifyTest::worker_pid($node, 'a'), $worker, 'G10: ... without ending the worker');
$node->safe_psql('a', "SELECT ddl_notify.unsubscribe('returner')");

# --- a plain slow handler: the ordinary cancel -----------------------------

$node->safe_psql('a', q{
CREATE FUNCTION public.h_slow(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT pg_sleep(30) $$;
SELECT ddl_notify.subscribe('slow', 'public.h_slow(ddl_notify.event)', max_attempts => 2);
});
$worker = DdlNotifyTest::wait_worker($node, 'a');
$node->safe_psql('a', 'CREATE TABLE public.t4 (id int)');
is(DdlNotifyTest::wait_for_delivery($node, 'a'), 't', 'the slow handler is done with');
is( $node->safe_psql('a',
		"SELECT attempts || ' ' || sqlstate || ' ' || (error LIKE 'handler of subscriber \"slow\" exceeded ddl_notify.handler_timeout (2000 ms) (context:%') "
		  . "FROM ddl_notify.dead_letter WHERE subscriber = 'slow'"),
	'2 57014 true',
	'G10: a slow handler is cancelled at the timeout, twice, then dead-lettered');
is(DdlNotifyTest::worker_pid($node, 'a'), $worker,
	'G10: the ordinary cancel does not end the worker (same pid)');

# After a failure above: what the engine recorded and logged, printed at
# the very end of the output, where an excerpt of it (a CI's) shows it.
my $report = '';
unless (Test::More->builder->is_passing)
{
	$report = join("\n",
		'dead letters: ' . $node->safe_psql('a',
			"SELECT string_agg(subscriber || ' ' || attempts || ' ' || sqlstate || ' ' || error, E'\\n') FROM ddl_notify.dead_letter"),
		'subscribers: ' . $node->safe_psql('a',
			"SELECT string_agg(name || ' ' || attempts || ' ' || coalesce(last_error, '-'), E'\\n') FROM ddl_notify.subscriber_status"),
		'calls: ' . $node->safe_psql('a', 'SELECT last_value FROM public.calls'),
		'log:', grep { /ddl_notify: |FATAL|exited with/ && !/statement:/ } split /\n/, slurp_file($node->logfile));
}
$node->stop;

# --- CALL ddl_notify.deliver() in a session --------------------------------

my $manual = DdlNotifyTest::new_node(
	'manual', conf => qq{
ddl_notify.max_workers = 0
ddl_notify.handler_timeout = '1s'
});
DdlNotifyTest::setup_db($manual, 'postgres');
$manual->safe_psql('postgres', $trapper);
$manual->safe_psql('postgres',
	"SELECT ddl_notify.subscribe('trapper', 'public.h_trap(ddl_notify.event)', max_attempts => 2)");
$manual->safe_psql('postgres', 'CREATE TABLE public.m1 (id int)');
$log_offset = -s $manual->logfile;
my ($rc, $out, $err) = $manual->psql('postgres', 'CALL ddl_notify.deliver()');
like($err, qr/terminating connection due to administrator command/,
	'G10: CALL deliver() with a handler that traps the cancel ends the session (FATAL)');
ok( $manual->wait_for_log(
		qr/handler of subscriber "trapper" exceeded ddl_notify.handler_timeout \(1000 ms\) and did not return within 1000 ms of its cancel; the session was ended/,
		$log_offset),
	'G10: the log says the session was ended');
$manual->psql('postgres', 'CALL ddl_notify.deliver()');
is( $manual->safe_psql('postgres',
		"SELECT attempts || ' ' || last_error_sqlstate || ' ' || (last_error LIKE '%did not return; the session was ended%') "
		  . "FROM ddl_notify.subscriber_status WHERE name = 'trapper'"),
	'1 57014 true', 'G7: the next CALL deliver() counted the ended call as a failed attempt');
is($manual->safe_psql('postgres', 'SELECT last_value FROM public.calls'),
	'1', 'G7: ... before it called the handler again (in backoff now)');
$manual->stop;

diag("033 failed; the first node's record:\n$report") if $report ne '';
done_testing();
