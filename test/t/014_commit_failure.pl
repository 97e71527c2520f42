
# Copyright (c) 2026, the ddl_notify authors

# 014_commit_failure: a delivery transaction that fails AT COMMIT, after every
# handler of its batch returned.
#
# G3 Commit before belief: the events stay pending, with the error, the
#    attempt count and the failing event recorded; nothing in memory claims
#    them, and once the cause is gone each is delivered exactly once.  When
#    the culprit is not the batch's first event, the events are tried one
#    per transaction: those that can commit are delivered, the one that
#    fails alone carries the failure.
# G5 Commit-consistent order: while the first transaction's events cannot
#    commit, nothing after them (a later transaction's event, which could
#    commit on its own) is delivered first; afterwards the order is the
#    commit order.
#
# How the COMMIT fails, deterministically: the handler mirrors each CREATE
# TABLE it is given (it creates a table itself), so the delivery transaction
# has recorded events, and at PRE_COMMIT it must take the subscription-point
# lock in ShareLock (ddl_notify.c, subscriber.c).  A subscribe() in another
# session holds that lock in ExclusiveLock from its own PRE_COMMIT until its
# commit is visible; with synchronous_standby_names naming a standby that
# never connects and synchronous_commit = on in that session only, it waits
# there (wait event SyncRep) for as long as the test wants.  The deliverer
# runs with lock_timeout, so its COMMIT fails with 55P03 after the handlers
# returned.  No handler statement is in the error's context: it is the
# engine's commit-failure path (isolate one event per transaction, record
# the failure on the first), not a handler failure.  Setting
# synchronous_standby_names to '' (ALTER SYSTEM, reload) lets the
# subscribe() finish.
#
# Mutations this test catches (test/mutations/, test/tools/mutate.sh):
# - progress_before_commit.patch: a batch adds its counts to shared memory
#   before its COMMIT is known to have succeeded: subscriber_status says
#   "delivered" for the events whose COMMIT failed.
# - floor_before_commit.patch: the engine moves its in-memory "where the
#   subscriber stopped" past the batch before DdlnTryCommit() and keeps it
#   when the COMMIT fails (TiDB's notifier bug): the later transaction's
#   COMMENT is delivered while the three CREATE TABLE events are still
#   pending (G5), and the failure is recorded on it.
# - commit_error_ignored.patch: the engine counts a batch whose COMMIT
#   failed as delivered and goes on: the recorded failure and the attempt
#   count are missing.
# - commit_failure_not_isolated.patch: a COMMIT failure of several events
#   recorded on the batch's first event without trying them one per
#   transaction (DdlnDeliverSubscriberLoop): the COMMENT that could commit is
#   not delivered, and the failure names it instead of the CREATE TABLE.
# - Caught (checked): DdlnTryCommit() without its re-throw of the caller's
#   own cancel (deliver.c): the cancel at COMMIT is taken as a commit
#   failure, the engine isolates the events one per transaction, waits at
#   that COMMIT again, and the cancelled CALL never ends.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('commit_failure');
# a sync-rep wait needs max_wal_senders > 0
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'ddl_notify'
# only CALL ddl_notify.deliver() delivers here: a worker would wait at the
# commit lock without a lock_timeout
ddl_notify.max_workers = 0
# a failed event is due again at once: each CALL is one more attempt
ddl_notify.retry_initial_delay = 0
ddl_notify.retry_max_delay = 0
synchronous_standby_names = 'nobody_connects'
synchronous_commit = local
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.log (seq serial PRIMARY KEY, event_id bigint NOT NULL,
	command_tag text, ident text);
-- mirrors every CREATE TABLE of public.t_* as public.m_*: DDL of its own
CREATE FUNCTION public.mirror(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.log (event_id, command_tag, ident)
	VALUES (e.id, e.command_tag, e.object_identity);
	IF e.command_tag = 'CREATE TABLE' AND e.object_identity LIKE 'public.t\_%' THEN
		EXECUTE format('CREATE TABLE public.%I ()',
					   'm_' || substr(e.object_identity, length('public.t_') + 1));
	END IF;
END $$;
CREATE FUNCTION public.late(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$ BEGIN END $$;
SELECT ddl_notify.subscribe('mirror', 'public.mirror(ddl_notify.event)');
});

# T1: three CREATE TABLE in one transaction; T2, later: a COMMENT, which the
# handler only logs (its batch could commit on its own).
$node->safe_psql('postgres', q{
BEGIN;
CREATE TABLE public.t_1 ();
CREATE TABLE public.t_2 ();
CREATE TABLE public.t_3 ();
COMMIT;
COMMENT ON TABLE public.t_1 IS 'later';
});
my $first_id = $node->safe_psql('postgres',
	"SELECT id FROM ddl_notify.event WHERE object_identity = 'public.t_1' AND command_tag = 'CREATE TABLE'");
is( $node->safe_psql('postgres',
		"SELECT string_agg(command_tag || ' ' || object_identity, ', ' ORDER BY id) FROM ddl_notify.event WHERE id >= $first_id"),
	'CREATE TABLE public.t_1, CREATE TABLE public.t_2, CREATE TABLE public.t_3, COMMENT public.t_1',
	'four events recorded, three in T1 and one in T2');

# hold_lock(NAME, LABEL): a subscribe(NAME) that stops at its commit (SyncRep),
# holding the subscription-point lock; returns its session
sub hold_lock
{
	my ($name, $label) = @_;
	my $bg = $node->background_psql('postgres');
	$bg->query_until(qr/subscribing/, qq{
\\echo subscribing
SET synchronous_commit = on;
SELECT ddl_notify.subscribe('$name', 'public.late(ddl_notify.event)');
});
	ok( $node->poll_query_until('postgres', qq{
SELECT count(*) = 1 FROM pg_stat_activity
WHERE wait_event = 'SyncRep' AND query LIKE '%ddl_notify.subscribe(''$name''%'}),
		$label);
	return $bg;
}

# release_lock(SESSION): no synchronous standby any more; the subscribe() ends
sub release_lock
{
	my ($bg) = @_;
	$node->safe_psql('postgres', q{
ALTER SYSTEM SET synchronous_standby_names = '';
SELECT pg_reload_conf();
});
	$bg->query_safe('SELECT 1');
	$bg->quit;
}

my $sub = hold_lock('late', 'the subscribe() waits at its commit, holding the lock');

# deliver(): returns the psql exit code, stdout and stderr
sub deliver
{
	my ($lock_timeout) = @_;
	my ($out, $err) = ('', '');
	my $set = defined $lock_timeout ? "SET lock_timeout = '$lock_timeout';" : '';
	# batches end where T1 ends: a batch of the three CREATE TABLE
	my $rc = $node->psql('postgres',
		"$set SET ddl_notify.batch_size = 3; CALL ddl_notify.deliver();",
		stdout => \$out, stderr => \$err);
	return ($rc, $out, $err);
}

my $status_sql = q{
SELECT pending, attempts, failing_event, last_error_sqlstate,
	   last_error LIKE 'canceling statement due to lock timeout%',
	   last_error LIKE '%PL/pgSQL%', next_retry_at IS NOT NULL
FROM ddl_notify.subscriber_status WHERE name = 'mirror'};

# The counters say what committed, nothing else: read right after each
# failed COMMIT, they are what they were before the first attempt.
my $counters_sql = q{
SELECT delivered, coalesce(last_event_id::text, 'none'), last_delivered_at IS NULL
FROM ddl_notify.subscriber_status WHERE name = 'mirror'};
my $counters_before = $node->safe_psql('postgres', $counters_sql);

for my $attempt (1 .. 2)
{
	my ($rc, $out, $err) = deliver('200ms');
	is($rc, 0, "attempt $attempt: CALL ddl_notify.deliver() itself succeeds");
	like($err, qr/1 failed attempt recorded\nDETAIL:  0 events were delivered/,
		"attempt $attempt: it reports one failed attempt, nothing delivered");
	is($node->safe_psql('postgres', $status_sql),
		"4|$attempt|$first_id|55P03|t|f|t",
		"attempt $attempt: all four pending; the commit failure (55P03, no handler context) recorded on T1's first event, attempts $attempt, a retry time");
	is($node->safe_psql('postgres', $counters_sql), $counters_before,
		"attempt $attempt: G3: delivered, last_event_id and last_delivered_at did not move (the COMMIT failed)");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM public.log'),
		'0', "attempt $attempt: nothing was delivered, the COMMENT of T2 neither (G5)");
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM ddl_notify.event WHERE id >= $first_id AND origin IS NULL"),
		'4', "attempt $attempt: the event rows are all there");
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_class WHERE relname LIKE 'm\\_%'"),
		'0', "attempt $attempt: the handlers' own DDL was rolled back");
}

# A cancel while the COMMIT waits (no lock_timeout now): the caller's
# cancel ends the round and is nobody's failure: nothing recorded, nothing
# believed (DdlnTryCommit re-throws it, failure.c's DdlnErrorIsDeliverers).
my $canceled = $node->background_psql('postgres', on_error_stop => 0);
$canceled->query_until(qr/delivering/, q{
\echo delivering
SET ddl_notify.batch_size = 3;
CALL ddl_notify.deliver();
});
# (while it delivers, its pg_stat_activity.query says so: the engine's own)
my $waiting = q{
SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
WHERE NOT l.granted AND l.locktype = 'advisory' AND l.objsubid = 3
  AND a.query LIKE 'ddl_notify: delivering % to subscriber "mirror"'};
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($waiting) w"),
	'a CALL deliver() without lock_timeout waits at its COMMIT for the subscription-point lock');
$node->safe_psql('postgres', "SELECT pg_cancel_backend(pid) FROM ($waiting) w");
$canceled->query('SELECT 1');
like($canceled->{stderr}, qr/canceling statement due to user request/,
	'the cancelled CALL deliver() fails with the cancel');
$canceled->quit;
is($node->safe_psql('postgres', $status_sql),
	"4|2|$first_id|55P03|t|f|t",
	'G3/G7: the cancel at COMMIT is recorded as no attempt; all four still pending');
is($node->safe_psql('postgres', 'SELECT count(*) FROM public.log'),
	'0', 'G3: nothing of the cancelled batch is kept');

# The cause goes away: the subscribe() may finish.
release_lock($sub);
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM ddl_notify.subscriber WHERE name = 'late'"),
	'1', 'the subscribe() committed once released');

my ($rc, $out, $err) = deliver(undef);
is($rc, 0, 'the next delivery succeeds');
is( $node->safe_psql('postgres',
		"SELECT string_agg(command_tag || ' ' || ident, ', ' ORDER BY seq) FROM public.log"),
	'CREATE TABLE public.t_1, CREATE TABLE public.t_2, CREATE TABLE public.t_3, COMMENT public.t_1',
	'each event delivered once, in commit then statement order');
is( $node->safe_psql('postgres',
		'SELECT count(*) - count(DISTINCT event_id) FROM public.log'),
	'0', 'no event delivered twice');
is( $node->safe_psql('postgres', q{
SELECT pending, attempts, failing_event IS NULL, next_retry_at IS NULL, delivered
FROM ddl_notify.subscriber_status WHERE name = 'mirror'}),
	'0|0|t|t|4', 'mirror: nothing pending, the failure cleared, 4 delivered');
is( $node->safe_psql('postgres',
		"SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE 'm\\_%'"),
	'm_1,m_2,m_3', 'the handlers\' DDL committed, once each');

# --- the culprit is not the batch's first event ------------------------------
# One transaction: a COMMENT, which the handler only logs, then a CREATE
# TABLE, which it mirrors.  The batch of both fails at COMMIT; the engine
# then tries them one per transaction: the COMMENT commits alone, the CREATE
# TABLE fails alone and carries the failure (G3), and the order holds (G5).
# The events are recorded first: a DDL commit would wait for the lock too.
my $seq0 = $node->safe_psql('postgres', 'SELECT max(seq) FROM public.log');
$node->safe_psql('postgres', q{
BEGIN;
COMMENT ON TABLE public.t_2 IS 'first';
CREATE TABLE public.t_4 ();
COMMIT;
ALTER SYSTEM SET synchronous_standby_names = 'nobody_connects';
});
# a restart, not a reload: the setting is in force before the next commit
$node->restart;
my $t4_id = $node->safe_psql('postgres',
	"SELECT id FROM ddl_notify.event WHERE object_identity = 'public.t_4' AND command_tag = 'CREATE TABLE'");
my $sub2 = hold_lock('late2', 'a second subscribe() waits at its commit, holding the lock');
($rc, $out, $err) = deliver('200ms');
# (3 handler calls: the COMMENT to mirror, both events to "late")
like($err, qr/1 failed attempt recorded\nDETAIL:  3 events were delivered/,
	'the batch of two failed at COMMIT: one failure recorded');
is( $node->safe_psql('postgres',
		"SELECT string_agg(command_tag || ' ' || ident, ', ' ORDER BY seq) FROM public.log WHERE seq > $seq0"),
	'COMMENT public.t_2', 'G3: the COMMENT, which commits on its own, is delivered');
is( $node->safe_psql('postgres', q{
SELECT pending, attempts, failing_event, last_error_sqlstate
FROM ddl_notify.subscriber_status WHERE name = 'mirror'}),
	"1|1|$t4_id|55P03",
	'G3: the failure is recorded on the CREATE TABLE, the event whose COMMIT fails alone');
release_lock($sub2);
# twice: the second round handles the event of the handler's own CREATE TABLE
# (not echoed to mirror, but pending until a batch sets its bit)
deliver(undef) for 1 .. 2;
is( $node->safe_psql('postgres',
		"SELECT string_agg(command_tag || ' ' || ident, ', ' ORDER BY seq) FROM public.log WHERE seq > $seq0"),
	'COMMENT public.t_2, CREATE TABLE public.t_4',
	'G3, G5: then the CREATE TABLE, once, after the COMMENT');
is( $node->safe_psql('postgres', q{
SELECT pending, attempts, (SELECT count(*) FROM pg_class WHERE relname = 'm_4')
FROM ddl_notify.subscriber_status WHERE name = 'mirror'}),
	'0|0|1', 'nothing pending, the failure cleared, the mirror table made once');

$node->stop;
done_testing();
