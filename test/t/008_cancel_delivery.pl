
# Copyright (c) 2026, the ddl_notify authors

# 008_cancel_delivery: cancelling CALL ddl_notify.deliver() while a handler
# runs, alone and in the middle of a run of dead letters.
#
# G3: the cancelled batch leaves nothing believed: its event stays pending,
# and the cancel is not recorded as the handler's failure.  G7: dead letters
# written before the cancel are kept, the rest follow on the next delivery,
# each event exactly once.
#
# The engine re-throws a cancel that arrives inside a handler (it catches
# every handler error first).  It used to free the memory of that error's
# copy before the error was reported, and the report read the freed file and
# function names: a crash, now and then.  The server runs with glibc's
# MALLOC_PERTURB_, which overwrites freed memory at once, so that reading it
# shows every time, in the LOCATION line of the error or as a crash.
#
# The cancel is statement_timeout firing while a handler waits for an
# advisory lock this test holds: a condition, not a sleep.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'ddl_notify'
ddl_notify.max_workers = 0
});
{
	local $ENV{MALLOC_PERTURB_} = '165';
	$node->start;
}

$node->safe_psql('postgres', q{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.seen (event_id bigint);
-- waits on advisory lock 1 for objects named *_wait, fails on *_fail
CREATE FUNCTION public.h(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF e.object_identity LIKE '%\_wait' THEN
		PERFORM pg_advisory_lock_shared(1);
		PERFORM pg_advisory_unlock_shared(1);
	END IF;
	IF e.object_identity LIKE '%\_fail%' THEN
		RAISE EXCEPTION 'cannot handle %', e.object_identity;
	END IF;
	INSERT INTO public.seen VALUES (e.id);
END $$;
});

# a session that holds lock 1 for as long as the test wants handlers to wait
my $locker = $node->background_psql('postgres');
$locker->query_safe('SELECT pg_advisory_lock(1)');

# cancelled_delivery(TIMEOUT, WHAT, PENDING): CALL deliver() with that
# statement_timeout must be cancelled, report the cancel's own location, leave
# the server up and the event on object PENDING pending.
sub cancelled_delivery
{
	my ($timeout, $what, $pending) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', qq{
\\set VERBOSITY verbose
SET statement_timeout = '$timeout';
CALL ddl_notify.deliver();
});
	like($err, qr/57014: canceling statement due to statement timeout/,
		"CALL deliver() is cancelled $what");
	like($err, qr/LOCATION:  ProcessInterrupts, postgres\.c:\d+/,
		"$what: the cancel reports where it was raised (the error was not read from freed memory)");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$what: the server is up");
	is($node->safe_psql('postgres', qq{
SELECT count(*) FROM ddl_notify.event WHERE object_identity = 'public.$pending'}),
		'1', "G3 $what: the event whose handler was cancelled is pending");
	return;
}

# 1. one handler, cancelled while it runs
$node->safe_psql('postgres', q{
SELECT ddl_notify.subscribe('s', 'public.h(ddl_notify.event)');
CREATE TABLE one_wait ();
});
cancelled_delivery('300ms', 'while the handler waits', 'one_wait');
is($node->safe_psql('postgres', q{
SELECT attempts || ' ' || coalesce(last_error, '-') FROM ddl_notify.subscriber_status WHERE name = 's'}),
	'0 -', 'G3: the cancel is not recorded as a failure of the handler');
is($node->safe_psql('postgres', 'SELECT count(*) FROM public.seen'), '0', 'no handler effect committed');

# 2. a run of dead letters, cancelled after it began
$node->safe_psql('postgres', q{
SELECT ddl_notify.unsubscribe('s');
TRUNCATE public.seen;
SELECT ddl_notify.subscribe('d', 'public.h(ddl_notify.event)', max_attempts => 1);
DO $$BEGIN
	FOR i IN 1..300 LOOP
		EXECUTE format('CREATE TABLE many_fail_%s ()', i);
	END LOOP;
END$$;
CREATE TABLE last_fail_wait ();
});
cancelled_delivery('2s', 'in a run of dead letters', 'last_fail_wait');

$locker->query_safe('SELECT pg_advisory_unlock(1)');
$locker->quit;
$node->safe_psql('postgres', 'CALL ddl_notify.deliver()');
is($node->safe_psql('postgres', q{
SELECT count(*) || ' ' || count(DISTINCT event_id) FROM ddl_notify.dead_letter WHERE subscriber = 'd'}),
	'301 301', 'G7: after the next delivery every event is dead-lettered, each once');
is($node->safe_psql('postgres', q{
SELECT dead_letters || ' ' || attempts FROM ddl_notify.subscriber_status WHERE name = 'd'}),
	'301 0', 'the subscriber counted 301 dead letters and has no attempt pending');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ddl_notify.event'), '0', 'the queue is empty');

$node->stop;
done_testing();
