
# Copyright (c) 2026, the ddl_notify authors

# DdlNotifyTest: small shared helpers for the TAP tests of ddl_notify's
# background worker (test/t/NNN_*.pl).
#
# Subscribers made by setup_subscriber() log every event they handle into a
# table of their own, with the event id, so that a test can check "exactly
# once": a table made with unique => 1 has UNIQUE (sub, event_id), so a
# repeated handler call fails (SQLSTATE 23505) and shows as an attempt and a
# last_error in ddl_notify.subscriber_status; a table without it keeps the
# repeat, so count(*) <> count(DISTINCT event_id) shows it.  A handler made
# with park => 1 then takes advisory lock LOCK_KEY in share mode for an event
# on an object whose name ends in "_park": while a session holds that lock
# exclusively, that subscriber's delivery batch stops there, the handler
# calls before it done but not committed.  A handler raises while its row in
# public.gate says open = false.
#
# Synchronisation is on conditions only (poll_query_until,
# wait_for_delivery), never on sleeps.

package DdlNotifyTest;

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use constant LOCK_KEY => 4242;

# new_node(NAME, conf => EXTRA, allows_streaming => BOOL): a started node.
# A cluster that preloads ddl_notify, with short retry delays so that a
# failing subscriber is retried promptly once fixed, workers that stay idle
# for 10 minutes (ddl_notify.worker_idle_timeout) and one worker per
# database at most (ddl_notify.max_workers_per_database), so that a test
# can look at "the" worker of a database whenever its flow says; tests of
# the pool set their own (conf is appended after, and wins).
sub new_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $opt{allows_streaming} ? 1 : 0);
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'ddl_notify'
ddl_notify.retry_initial_delay = '100ms'
ddl_notify.retry_max_delay = '200ms'
ddl_notify.worker_idle_timeout = '10min'
ddl_notify.max_workers_per_database = 1
} . ($opt{conf} // ''));
	$node->start;
	return $node;
}

# setup_db(NODE, DB): CREATE EXTENSION and the shared tables of the handlers.
sub setup_db
{
	my ($node, $db) = @_;
	$node->safe_psql(
		$db, q{
CREATE EXTENSION ddl_notify;
CREATE TABLE IF NOT EXISTS public.gate (sub text PRIMARY KEY, open boolean NOT NULL);
});
	return;
}

# setup_subscriber(NODE, DB, NAME, unique => BOOL, park => BOOL)
# A handler public.h_NAME logging into public.log_NAME, and the subscription.
sub setup_subscriber
{
	my ($node, $db, $name, %opt) = @_;
	my $unique = $opt{unique} ? ', UNIQUE (sub, event_id)' : '';
	my $park   = $opt{park}   ? 'true'                    : 'false';
	my $key    = LOCK_KEY;
	$node->safe_psql(
		$db, qq{
CREATE TABLE IF NOT EXISTS public.log_$name (
	sub text NOT NULL,
	event_id bigint NOT NULL,
	trigger_event text,
	command_tag text,
	object_identity text,
	pid integer NOT NULL DEFAULT pg_backend_pid(),
	backend_type text
	$unique);
CREATE OR REPLACE FUNCTION public.h_$name(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS \$f\$
BEGIN
	IF NOT coalesce((SELECT g.open FROM public.gate g WHERE g.sub = '$name'), true) THEN
		RAISE EXCEPTION 'subscriber $name is closed (event %)', e.id;
	END IF;
	INSERT INTO public.log_$name (sub, event_id, trigger_event, command_tag, object_identity, backend_type)
	VALUES ('$name', e.id, e.trigger_event, e.command_tag, e.object_identity,
			(SELECT a.backend_type FROM pg_catalog.pg_stat_activity a WHERE a.pid = pg_catalog.pg_backend_pid()));
	IF $park AND e.object_identity LIKE '%\\_park' THEN
		PERFORM pg_advisory_xact_lock_shared($key);
	END IF;
END
\$f\$;
SELECT ddl_notify.subscribe('$name', 'public.h_$name(ddl_notify.event)');
});
	return;
}

# Seconds for waits that must not time out in a healthy run.
sub wait_secs
{
	return $PostgreSQL::Test::Utils::timeout_default;
}

# wait_for_delivery(NODE, DB, [SECS]): the extension's own wait, as 't'/'f'.
sub wait_for_delivery
{
	my ($node, $db, $secs) = @_;
	$secs //= wait_secs();
	return $node->safe_psql($db,
		"SELECT ddl_notify.wait_for_delivery('$secs s')");
}

# The pids of ddl_notify's processes of one BACKEND_TYPE (and WHERE), '' if none.
sub backend_pids
{
	my ($node, $backend_type, $where) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(pid::text, ',') FROM pg_stat_activity "
		  . "WHERE backend_type = '$backend_type' " . ($where // ''));
}

# The pid of the delivery worker of DB, '' if none.
sub worker_pid
{
	my ($node, $db) = @_;
	return backend_pids($node, 'ddl_notify worker', "AND datname = '$db'");
}

sub launcher_pid
{
	my ($node) = @_;
	return backend_pids($node, 'ddl_notify launcher');
}

# wait_worker(NODE, DB, [NOT_PID]): wait for exactly one worker in DB (other
# than NOT_PID) and return its pid; '' on timeout.  Polls from "postgres",
# never from DB itself.
sub wait_worker
{
	my ($node, $db, $not_pid) = @_;
	my $cond = defined $not_pid ? "AND pid <> $not_pid" : '';
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity "
		  . "WHERE backend_type = 'ddl_notify worker' AND datname = '$db' $cond")
	  or return '';
	return worker_pid($node, $db);
}

# wait_no_worker(NODE, DB): true once no worker is connected to DB.
sub wait_no_worker
{
	my ($node, $db) = @_;
	return $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity "
		  . "WHERE backend_type = 'ddl_notify worker' AND datname = '$db'");
}

# wait_worker_blocked(NODE, DB): true once DB's worker waits for LOCK_KEY.
sub wait_worker_blocked
{
	my ($node, $db) = @_;
	my $key = LOCK_KEY;
	return $node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
		  . "WHERE a.backend_type = 'ddl_notify worker' AND a.datname = '$db' "
		  . "AND l.locktype = 'advisory' AND l.objid = $key AND NOT l.granted");
}

# create_tables(NODE, DB, PREFIX, FROM, TO, txn => BOOL, park => N)
# CREATE TABLE public.PREFIX_I for I in FROM..TO, one transaction each, or
# all in one with txn => 1; table N is named PREFIX_N_park (see above).
# Returns the object identities.
sub create_tables
{
	my ($node, $db, $prefix, $from, $to, %opt) = @_;
	my @ids;
	my $sql = $opt{txn} ? "BEGIN;\n" : '';
	for my $i ($from .. $to)
	{
		my $name = "${prefix}_$i"
		  . (defined $opt{park} && $opt{park} == $i ? '_park' : '');
		$sql .= "CREATE TABLE public.$name (id int);\n";
		push @ids, "public.$name";
	}
	$sql .= "COMMIT;\n" if $opt{txn};
	$node->safe_psql($db, $sql);
	return @ids;
}

# check_exactly_once(NODE, DB, SUB, IDENTITIES, LABEL)
# Every "CREATE TABLE" event of the given tables was handled by SUB once,
# no event id was handled twice, and SUB has no error.
sub check_exactly_once
{
	my ($node, $db, $sub, $ids, $label) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $list = join(',', map { "'$_'" } @$ids);
	my $got = $node->safe_psql(
		$db, qq{
SELECT string_agg(object_identity || ':' || n, ' ' ORDER BY object_identity)
FROM (SELECT object_identity, count(*) AS n FROM public.log_$sub
      WHERE command_tag = 'CREATE TABLE' AND object_identity IN ($list)
      GROUP BY 1) s});
	my $want = join(' ', map { "$_:1" } sort @$ids);
	is($got, $want, "$label: $sub handled each CREATE TABLE exactly once");
	is( $node->safe_psql(
			$db,
			"SELECT count(*) - count(DISTINCT event_id) FROM public.log_$sub"),
		'0',
		"$label: $sub handled no event id twice");
	is( $node->safe_psql(
			$db,
			"SELECT coalesce(last_error_sqlstate, 'none') = '23505' OR attempts > 0 "
			  . "FROM ddl_notify.subscriber_status WHERE name = '$sub'"),
		'f',
		"$label: $sub is not failing and never failed on a repeat (23505)");
	return;
}

# comment_transactions(NODE, DB, N): N transactions of one event each, a
# COMMENT ON TABLE public.t (the caller's table), committed one by one.
sub comment_transactions
{
	my ($node, $db, $n) = @_;
	$node->safe_psql($db, qq{
DO \$\$BEGIN
	FOR i IN 1..$n LOOP
		EXECUTE format('COMMENT ON TABLE public.t IS %L', 'c' || i);
		COMMIT;
	END LOOP;
END\$\$});
	return;
}

# queue_blocks(NODE, DB, SQL): in a fresh session, SQL (one value), then the
# blocks its transaction fetched of the queue: event, event_xid,
# commit_order and commit_order_pos (pg_stat_get_xact_blocks_fetched).
# Returns SQL's value and the blocks.
sub queue_blocks
{
	my ($node, $db, $sql) = @_;
	my $r = $node->safe_psql($db, qq{
BEGIN;
$sql;
SELECT sum(pg_stat_get_xact_blocks_fetched(c.oid))
FROM pg_class c
WHERE c.oid IN ('ddl_notify.event'::regclass, 'ddl_notify.event_xid'::regclass,
				'ddl_notify.commit_order'::regclass, 'ddl_notify.commit_order_pos'::regclass);
COMMIT;
});
	return split /\n/, $r;
}

# dead_rows_blocks(NODE, DB, SQL, WANT, LABEL, WHAT): does SQL read more of
# the queue when an old snapshot (held by the caller) keeps more delivered
# rows?  1,000 transactions of one event each (comment_transactions), all
# delivered, then queue_blocks of SQL, whose value must be WANT (test
# LABEL); then 3,000 more and the same again.  Checks that the snapshot
# kept the rows (50 heap blocks of event or more) and that the second
# reading is within 10 blocks of the first; WHAT names one reading in the
# note and the test names ("one call").
sub dead_rows_blocks
{
	my ($node, $db, $sql, $want, $label, $what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my (@blocks, @heap);
	for my $step ([ 1000, '1,000 transactions delivered' ],
		[ 3000, '3,000 more delivered' ])
	{
		comment_transactions($node, $db, $step->[0]);
		is(wait_for_delivery($node, $db), 't', $step->[1]);
		my ($value, $blocks) = queue_blocks($node, $db, $sql);
		is($value, $want, $label);
		push @blocks, $blocks;
		push @heap, $node->safe_psql($db,
			"SELECT pg_relation_size('ddl_notify.event') / 8192");
	}
	note("blocks read by $what: $blocks[0] with $heap[0] heap blocks, "
		  . "$blocks[1] with $heap[1]");
	cmp_ok($heap[1] - $heap[0], '>=', 50, 'the old snapshot kept the delivered rows');
	cmp_ok($blocks[1], '<=', $blocks[0] + 10,
		"G11: $what reads no more blocks with 3,000 more dead transactions");
	return;
}

# lifecycle_handler(NODE, DB, NAME): a handler public.lc_NAME(ddl_notify.event)
# for the life-cycle tests (dump/restore, pg_upgrade, extension update): it
# appends (NAME, event id, tag, identity, database) to public.lc_log, whose
# serial n is the order of the calls, and raises while public.gate says
# NAME is closed.  Any role may run it (the table is writable by PUBLIC).
sub lifecycle_handler
{
	my ($node, $db, $name) = @_;
	$node->safe_psql(
		$db, qq{
CREATE TABLE IF NOT EXISTS public.gate (sub text PRIMARY KEY, open boolean NOT NULL);
CREATE TABLE IF NOT EXISTS public.lc_log (
	n bigserial,
	sub text NOT NULL,
	event_id bigint NOT NULL,
	command_tag text,
	object_identity text,
	db text NOT NULL DEFAULT current_database(),
	as_user name NOT NULL DEFAULT current_user);
GRANT SELECT ON public.gate TO PUBLIC;
GRANT SELECT, INSERT ON public.lc_log TO PUBLIC;
GRANT USAGE ON SEQUENCE public.lc_log_n_seq TO PUBLIC;
CREATE OR REPLACE FUNCTION public.lc_$name(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS \$f\$
BEGIN
	IF NOT coalesce((SELECT g.open FROM public.gate g WHERE g.sub = '$name'), true) THEN
		RAISE EXCEPTION 'subscriber $name is closed (event %)', e.id;
	END IF;
	INSERT INTO public.lc_log (sub, event_id, command_tag, object_identity)
	VALUES ('$name', e.id, e.command_tag, e.object_identity);
END
\$f\$;
});
	return;
}

# lifecycle_log(NODE, DB, SUB, WHERE): SUB's handled CREATE TABLE events in
# call order, as "identity identity ...", from the rows matching WHERE.
sub lifecycle_log
{
	my ($node, $db, $sub, $where) = @_;
	return $node->safe_psql($db,
		"SELECT string_agg(object_identity, ' ' ORDER BY n) FROM public.lc_log "
		  . "WHERE sub = '$sub' AND command_tag = 'CREATE TABLE'"
		  . (defined $where ? " AND $where" : ''));
}

1;
