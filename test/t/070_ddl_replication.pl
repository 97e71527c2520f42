
# Copyright (c) 2026, the ddl_notify authors

# 070_ddl_replication.pl: DDL replication over PostgreSQL's built-in logical
# replication (G16), between two clusters with ddl_notify: publish_ddl() on
# the publisher, apply_ddl() on the subscriber.  Synchronised on conditions
# only (wait_for_catchup, poll_query_until), never on sleeps.
#
# G16 in order with the rows: ALTER TABLE ADD COLUMN and an INSERT using it
#     in one transaction; CREATE TABLE and its INSERT in one transaction;
#     CREATE TABLE AS and SELECT INTO (their rows are decoded before their
#     ddl_command_end) -- all rows arrive, no REFRESH PUBLICATION.
#     Catches: the outbox row written at commit instead of at the
#     statement's end (the INSERT arrives first: "missing replicated
#     column"); a new table not made part of the subscription (its rows are
#     skipped: count 0); CREATE TABLE AS written only at its end (the apply
#     worker stops on "target relation does not exist").
# G16 a statement is run under the publisher's DateStyle, TimeZone and
#     standard_conforming_strings (ddl_outbox.settings): its literals mean
#     what they meant there.
#     Catches: the settings not set (replication_settings_ignored mutation:
#     the default '01-02-2016' is January 2nd here, the image check stops
#     applying).
# G16 CREATE INDEX CONCURRENTLY is applied (without CONCURRENTLY, which
#     cannot run in the apply worker's transaction).
#     Catches: the frame lost when CONCURRENTLY commits its first
#     transaction (no outbox row: the index is missing).
# G16 the publisher's bookkeeping never becomes the subscriber's with FOR
#     ALL TABLES: the publisher's subscriber row and events do not reach the
#     subscriber's tables, no publisher handler runs there.
#     Catches: not_replicated() letting a logical worker's rows through.
# G16 an event that cannot be applied stops applying, shown in
#     ddl_apply_status (state stopped, failed_event, last_error), rows wait,
#     and applying resumes once the operator resolved it.  A relation that
#     differs from the publisher's image after the statement (a column of
#     another type here) stops it too; the subscriber's own index survives
#     and is no difference.
#     Catches: the check left out (replay_no_check mutation: the divergence
#     goes on silently), an error not kept for the status view.
# G16 / G10 a role missing here stops applying; skip_ddl() of the stopped
#     event lets applying go on, and refuses another event id.  A statement
#     holding a password (CREATE USER MAPPING) is not replicated: applying
#     stops at it, nothing is made with another password.  An INSERT into
#     the outbox by hand is refused (42501); only owners may hand a
#     publication or subscription over (42501).
#     Catches: the redacted text replicated (a mapping with '********'), a
#     secret's text in the outbox.
# G16 the initial synchronization replays no history: a subscription whose
#     table synchronization copies the outbox while it still holds a row of
#     earlier DDL (as when apply_ddl() comes after the copy began; forced
#     here by setting the outbox's state back to 'i') applies only what came
#     after.
#     Catches: copied outbox rows applied (replication_history_applied
#     mutation: the earlier ADD COLUMN fails "already exists", applying
#     stops).
# stop_applying_ddl() and unpublish_ddl(): true once, then false; a stopped
#     subscription applies nothing more; the outbox leaves the publication.
# G16 exactly once: a crash (immediate stop) of the subscriber during a
#     stream of DDL loses and repeats nothing (one ddl_applied row per
#     outbox row); two subscriptions that both carry a DDL apply it once;
#     DDL applied on the subscriber and replicated back from it (a
#     bidirectional pair of publications) is not applied again where it
#     came from.
#     Catches: no dedupe by origin (the second subscription's ADD COLUMN
#     fails "already exists"), a statement applied from another cluster
#     recorded with this cluster's origin (it comes back and loops).
# G16 a subscriber of the subscriber (its publication of the schema s3,
#     marked too) applies the first cluster's DDL once, with the new table's
#     rows, when the transaction is streamed (parallel apply from 16 on).
#     Catches: applied DDL not captured on the middle cluster (nothing
#     reaches the third), a parallel apply worker not treated as a logical
#     worker.
# Bad input: unknown publication / subscription (42704), a publication
#     that does not publish inserts (55000).

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $conf = "wal_level = logical\nwal_retrieve_retry_interval = '200ms'\n"
  . "max_logical_replication_workers = 10\nmax_worker_processes = 24\n"
  . "max_wal_senders = 10\nmax_replication_slots = 10\n";
my $pub = DdlNotifyTest::new_node('publisher', conf => $conf);
my $sub = DdlNotifyTest::new_node('subscriber', conf => $conf);

my $base = q{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.t (id int PRIMARY KEY, a text);
CREATE SCHEMA s3;
CREATE SCHEMA backs;
CREATE TABLE public.seen (id bigint);
};
$pub->safe_psql('postgres', $base);
$sub->safe_psql('postgres', $base);

# a subscriber of the publisher's own: its row must stay there
$pub->safe_psql('postgres', q{
CREATE FUNCTION public.h(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS 'INSERT INTO public.seen VALUES (e.id)';
SELECT ddl_notify.subscribe('pubside', 'public.h(ddl_notify.event)');
SELECT ddl_notify.pause('pubside');
CREATE FUNCTION public.pending_marker() RETURNS int LANGUAGE sql AS 'SELECT 1';
});

# bad input
my ($rc, $out, $err) = $pub->psql('postgres', "SELECT ddl_notify.publish_ddl('nope')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42704.*publication "nope" does not exist/s, 'publish_ddl: unknown publication is 42704');
$pub->safe_psql('postgres', "CREATE PUBLICATION onlydel FOR TABLE public.t WITH (publish = 'delete')");
($rc, $out, $err) = $pub->psql('postgres', "SELECT ddl_notify.publish_ddl('onlydel')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000.*does not publish inserts/s, 'publish_ddl: a publication without inserts is 55000');
($rc, $out, $err) = $sub->psql('postgres', "SELECT ddl_notify.apply_ddl('nope')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42704.*subscription "nope" does not exist/s, 'apply_ddl: unknown subscription is 42704');

$pub->safe_psql('postgres', q{
CREATE PUBLICATION pub FOR ALL TABLES;
SELECT ddl_notify.publish_ddl('pub');
CREATE PUBLICATION pub2 FOR TABLES IN SCHEMA s3;
SELECT ddl_notify.publish_ddl('pub2');
});
is($pub->safe_psql('postgres', q{
SELECT string_agg(pubname, ',' ORDER BY pubname) FROM pg_publication_tables
WHERE schemaname = 'ddl_notify' AND tablename = 'ddl_outbox'}),
	'pub,pub2', 'the outbox is in both publications (added to the schema list)');

# a table list: the outbox joins it, and nothing else of the extension's does
$pub->safe_psql('postgres', q{
CREATE PUBLICATION tl FOR TABLE public.t;
SELECT ddl_notify.publish_ddl('tl');
});
is($pub->safe_psql('postgres', q{
SELECT string_agg(schemaname || '.' || tablename, ',' ORDER BY tablename) FROM pg_publication_tables
WHERE pubname = 'tl'}),
	'ddl_notify.ddl_outbox,public.t', 'a table list carries the outbox and no other table of the extension');
is($pub->safe_psql('postgres', q{SELECT ddl_notify.publish_ddl('tl'); SELECT count(*) FROM ddl_notify.ddl_publication WHERE pubname = 'tl'}),
	"\n1", 'publish_ddl twice is once');

my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', qq{
CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION pub WITH (enabled = false);
SELECT ddl_notify.apply_ddl('sub');
ALTER SUBSCRIPTION sub ENABLE;
});
$sub->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')")
  or die 'initial synchronization did not finish';

sub caught_up
{
	$pub->wait_for_catchup($_) for @_;
	return;
}

# in order with the rows
$pub->safe_psql('postgres', q{
BEGIN;
ALTER TABLE public.t ADD COLUMN b int;
INSERT INTO public.t VALUES (1, 'one', 11);
COMMIT;
BEGIN;
CREATE TABLE public.n (id serial PRIMARY KEY, v text);
INSERT INTO public.n (v) VALUES ('x'), ('y');
COMMIT;
CREATE TABLE public.ctas AS SELECT g AS x FROM generate_series(1, 3) g;
SELECT 5 AS y INTO public.selinto;
CREATE INDEX CONCURRENTLY t_a_idx ON public.t (a);
});
caught_up('sub');
is($sub->safe_psql('postgres', 'SELECT b FROM public.t WHERE id = 1'), '11',
	'ADD COLUMN and an INSERT using it in one transaction');
is($sub->safe_psql('postgres', 'SELECT string_agg(v, \',\' ORDER BY id) FROM public.n'), 'x,y',
	'CREATE TABLE and its INSERT in one transaction, no REFRESH');
is($sub->safe_psql('postgres', 'SELECT sum(x) FROM public.ctas'), '6', 'CREATE TABLE AS with its rows');
is($sub->safe_psql('postgres', 'SELECT y FROM public.selinto'), '5', 'SELECT INTO with its rows');
is($sub->safe_psql('postgres', "SELECT count(*) FROM pg_indexes WHERE indexname = 't_a_idx'"), '1',
	'CREATE INDEX CONCURRENTLY applied');
is($sub->safe_psql('postgres', "SELECT state || ' ' || applied FROM ddl_notify.ddl_apply_status"),
	'applying 7', 'ddl_apply_status: seven statements applied (CREATE TABLE AS and SELECT INTO are two rows each)');

# the publisher's settings: a statement run under DateStyle DMY, another
# TimeZone and standard_conforming_strings off means here what it meant there
# (PostgreSQL 19 has standard_conforming_strings on only: there the
# backslash is written once)
my $scs_off = $pub->safe_psql('postgres', 'SHOW server_version_num') < 190000;
$pub->safe_psql('postgres', q{
SET datestyle = 'Postgres, DMY';
SET timezone = 'Asia/Tokyo';
}
	  . ($scs_off ? q{SET standard_conforming_strings = off; SET escape_string_warning = off;} : '') . q{
CREATE TABLE public.dated (id int PRIMARY KEY, d date DEFAULT '01-02-2016',
	ts timestamptz DEFAULT '2016-02-01 09:00', s text DEFAULT }
	  . ($scs_off ? q{'a\\\\b'} : q{'a\\b'}) . ')');
caught_up('sub');
is( $sub->safe_psql('postgres', q{SET timezone = 'UTC';
		SELECT string_agg(pg_get_expr(adbin, adrelid), ' | ' ORDER BY adnum) FROM pg_attrdef
		WHERE adrelid = 'public.dated'::regclass}),
	q{'2016-02-01'::date | '2016-02-01 00:00:00+00'::timestamp with time zone | 'a\\b'::text},
	'a statement runs under the publisher\'s DateStyle, TimeZone and standard_conforming_strings');

# the bookkeeping stays on its side
is($sub->safe_psql('postgres', 'SELECT count(*) FROM ddl_notify.subscriber'), '0',
	"the publisher's subscriber row did not become the subscriber's");
is($pub->safe_psql('postgres',
	q{SELECT count(*) FROM ddl_notify.event WHERE object_identity = 'public.pending_marker()'}),
	'1', "the publisher's event for its paused subscriber is pending there");
is($sub->safe_psql('postgres',
	q{SELECT count(*) FROM ddl_notify.event WHERE object_identity = 'public.pending_marker()'}),
	'0', "and did not reach the subscriber's queue (initial copy and stream)");
$pub->safe_psql('postgres', q{SELECT ddl_notify.resume('pubside')});

# a conflict stops applying; rows wait; resolving resumes
$sub->safe_psql('postgres', q{
CREATE INDEX sub_own_idx ON public.t (b);
ALTER TABLE public.t ADD COLUMN c int;
});
$pub->safe_psql('postgres', q{
BEGIN;
ALTER TABLE public.t ADD COLUMN c text;
INSERT INTO public.t VALUES (2, 'two', 22, 'cc');
COMMIT;
});
$sub->poll_query_until('postgres',
	"SELECT state = 'stopped' FROM ddl_notify.ddl_apply_status WHERE subscription = 'sub'")
  or die 'applying did not stop';
like($sub->safe_psql('postgres', 'SELECT last_error FROM ddl_notify.ddl_apply_status'),
	qr/column "c" of relation "t" already exists/, 'last_error says why');
my $failed = $sub->safe_psql('postgres', 'SELECT failed_event FROM ddl_notify.ddl_apply_status');
ok($failed > 0, 'failed_event is shown');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM public.t WHERE id = 2'), '0',
	'the row after the stopped statement waits');
$sub->safe_psql('postgres', 'ALTER TABLE public.t DROP COLUMN c');
caught_up('sub');
is($sub->safe_psql('postgres', 'SELECT c FROM public.t WHERE id = 2'), 'cc',
	'resolved by hand: the statement and its row are applied');
is($sub->safe_psql('postgres', "SELECT state || ' ' || coalesce(last_error, '-') FROM ddl_notify.ddl_apply_status"),
	'applying -', 'the error is cleared');
is($sub->safe_psql('postgres', "SELECT count(*) FROM pg_indexes WHERE indexname = 'sub_own_idx'"), '1',
	"the subscriber's own index survives and is no difference");

# a relation that differs after the statement stops it too
$sub->safe_psql('postgres', 'ALTER TABLE public.t ALTER COLUMN a TYPE varchar(50)');
$pub->safe_psql('postgres', 'ALTER TABLE public.t ADD COLUMN d int');
$sub->poll_query_until('postgres',
	"SELECT state = 'stopped' FROM ddl_notify.ddl_apply_status WHERE subscription = 'sub'")
  or die 'applying did not stop on a difference';
like($sub->safe_psql('postgres', 'SELECT last_error FROM ddl_notify.ddl_apply_status'),
	qr/relation public\.t here differs.*columns a/s, 'the difference is shown');
is($sub->safe_psql('postgres', "SELECT count(*) FROM information_schema.columns WHERE table_name = 't' AND column_name = 'd'"),
	'0', 'the statement that led to a difference is rolled back');
$sub->safe_psql('postgres', 'ALTER TABLE public.t ALTER COLUMN a TYPE text');
caught_up('sub');
is($sub->safe_psql('postgres', "SELECT state FROM ddl_notify.ddl_apply_status"), 'applying',
	'resumes once the relation is made equal');

# a role missing here; skip_ddl()
$pub->safe_psql('postgres', q{
CREATE ROLE r2;
GRANT CREATE ON SCHEMA public TO r2;
SET ROLE r2;
CREATE TABLE public.r2t (id int);
});
$sub->poll_query_until('postgres',
	"SELECT state = 'stopped' FROM ddl_notify.ddl_apply_status WHERE subscription = 'sub'")
  or die 'applying did not stop on a missing role';
# first the GRANT to r2 stops (PostgreSQL's own error); skipped by hand
like($sub->safe_psql('postgres', 'SELECT last_error FROM ddl_notify.ddl_apply_status'),
	qr/role "r2" does not exist/, 'a GRANT to a role missing here stops applying');
$failed = $sub->safe_psql('postgres', 'SELECT failed_event FROM ddl_notify.ddl_apply_status');
($rc, $out, $err) = $sub->psql('postgres', "SELECT ddl_notify.skip_ddl('sub', $failed + 1000)",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000.*is not stopped at event/s, 'skip_ddl of another event is refused');
$sub->safe_psql('postgres', "SELECT ddl_notify.skip_ddl('sub', $failed)");
# then the CREATE TABLE r2 ran: nobody here may act as r2
$sub->poll_query_until('postgres',
	"SELECT failed_event > $failed FROM ddl_notify.ddl_apply_status WHERE subscription = 'sub'")
  or die 'applying did not stop at the next event';
like($sub->safe_psql('postgres', 'SELECT last_error FROM ddl_notify.ddl_apply_status'),
	qr/role "r2", which ran event \d+ on the publisher, does not exist here/,
	'a statement run by a role missing here stops applying');
$failed = $sub->safe_psql('postgres', 'SELECT failed_event FROM ddl_notify.ddl_apply_status');
$sub->safe_psql('postgres', "CREATE TABLE public.r2t (id int); SELECT ddl_notify.skip_ddl('sub', $failed)");
$pub->safe_psql('postgres', 'ALTER TABLE public.t ADD COLUMN e int');
caught_up('sub');
is($sub->safe_psql('postgres', "SELECT state || ' ' || skipped FROM ddl_notify.ddl_apply_status"),
	'applying 2', 'after skip_ddl, applying goes on');
is($sub->safe_psql('postgres', "SELECT count(*) FROM information_schema.columns WHERE table_name = 't' AND column_name = 'e'"),
	'1', 'the next statement is applied');

# a statement holding a secret is not replicated: applying stops at it
$pub->safe_psql('postgres', q{
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
CREATE SERVER fs FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'nowhere');
CREATE USER MAPPING FOR postgres SERVER fs OPTIONS (user 'u', password 'SECRET_PW');
});
$sub->poll_query_until('postgres',
	"SELECT state = 'stopped' FROM ddl_notify.ddl_apply_status WHERE subscription = 'sub'")
  or die 'applying did not stop at a secret';
like($sub->safe_psql('postgres', 'SELECT last_error FROM ddl_notify.ddl_apply_status'),
	qr/held a secret and was not replicated/, 'a statement with a password stops applying');
is($sub->safe_psql('postgres', q{SELECT count(*) FROM pg_user_mappings WHERE srvname = 'fs'}), '0',
	'and the mapping is not made with some other password');
$failed = $sub->safe_psql('postgres', 'SELECT failed_event FROM ddl_notify.ddl_apply_status');
$sub->safe_psql('postgres', qq{
CREATE USER MAPPING FOR postgres SERVER fs OPTIONS (user 'u', password 'typed_by_hand');
SELECT ddl_notify.skip_ddl('sub', $failed);
});

# only a logical replication worker's insert into the outbox is applied
($rc, $out, $err) = $sub->psql('postgres',
	q{INSERT INTO ddl_notify.ddl_outbox VALUES (1, 1, 1, '{pub}', 'postgres', 'public', 'DROP TABLE', 'DROP TABLE public.t', '[]', now(), 'statement')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501.*written by ddl_notify only/s, 'an INSERT into the outbox by hand is refused');

# only owners hand over
$pub->safe_psql('postgres', q{
CREATE ROLE mallory LOGIN;
GRANT USAGE ON SCHEMA ddl_notify TO mallory;
GRANT EXECUTE ON FUNCTION ddl_notify.publish_ddl(name), ddl_notify.unpublish_ddl(name) TO mallory;
});
($rc, $out, $err) = $pub->psql('postgres', "SET ROLE mallory; SELECT ddl_notify.unpublish_ddl('pub')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501.*must be owner of publication pub/s, 'unpublish_ddl by a role that does not own the publication is 42501');
$sub->safe_psql('postgres', q{
CREATE ROLE mallory LOGIN;
GRANT USAGE ON SCHEMA ddl_notify TO mallory;
GRANT EXECUTE ON FUNCTION ddl_notify.apply_ddl(name), ddl_notify.skip_ddl(name, bigint) TO mallory;
});
($rc, $out, $err) = $sub->psql('postgres', "SET ROLE mallory; SELECT ddl_notify.apply_ddl('sub')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501.*must be owner of subscription sub/s, 'apply_ddl by a role that does not own the subscription is 42501');

# a crash of the subscriber in the middle of a stream of DDL
$sub->stop('immediate');
$pub->safe_psql('postgres', join("\n", map { "ALTER TABLE public.t ADD COLUMN k$_ int; INSERT INTO public.t (id, a) VALUES (100 + $_, 'k');" } 1 .. 8));
$sub->start;
caught_up('sub');
is($sub->safe_psql('postgres', "SELECT count(*) FROM information_schema.columns WHERE table_name = 't' AND column_name LIKE 'k%'"),
	'8', 'after a crash: every column');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM public.t WHERE id > 100'), '8', 'after a crash: every row');
is($sub->safe_psql('postgres', "SELECT count(*) = count(DISTINCT (origin, origin_id)) FROM ddl_notify.ddl_applied"),
	't', 'each DDL applied once');

# two subscriptions carry the same DDL (pub covers all, pub2 the schema s3)
$sub->safe_psql('postgres', qq{
CREATE SUBSCRIPTION sub2 CONNECTION '$connstr' PUBLICATION pub2 WITH (enabled = false);
SELECT ddl_notify.apply_ddl('sub2');
ALTER SUBSCRIPTION sub2 ENABLE;
});
$pub->safe_psql('postgres', 'CREATE TABLE s3.q (id int PRIMARY KEY); ALTER TABLE s3.q ADD COLUMN w int;');
caught_up('sub', 'sub2');
is($sub->safe_psql('postgres', "SELECT string_agg(subscription || ' ' || state, ',' ORDER BY subscription) FROM ddl_notify.ddl_apply_status"),
	'sub applying,sub2 applying', 'two subscriptions carrying one DDL: both go on');
is($sub->safe_psql('postgres', "SELECT count(*) FROM information_schema.columns WHERE table_schema = 's3' AND table_name = 'q'"),
	'2', 'the DDL both carried is applied once');

# both ways: the subscriber publishes its schema backs to the publisher
$sub->safe_psql('postgres', q{
CREATE PUBLICATION back FOR TABLES IN SCHEMA backs;
SELECT ddl_notify.publish_ddl('back');
});
my $subconn = $sub->connstr . ' dbname=postgres';
$pub->safe_psql('postgres', qq{
CREATE SUBSCRIPTION backsub CONNECTION '$subconn' PUBLICATION back WITH (enabled = false);
SELECT ddl_notify.apply_ddl('backsub');
ALTER SUBSCRIPTION backsub ENABLE;
});
$pub->safe_psql('postgres', 'CREATE TABLE backs.frompub (id int)');
caught_up('sub');
$sub->wait_for_catchup('backsub');
$sub->safe_psql('postgres', 'CREATE TABLE backs.fromsub (id int)');
$sub->wait_for_catchup('backsub');
caught_up('sub');
is($pub->safe_psql('postgres', "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'backs'"),
	'frompub,fromsub', 'both ways: the subscriber\'s DDL reaches the publisher');
is($sub->safe_psql('postgres', "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'backs'"),
	'frompub,fromsub', 'both ways: the publisher\'s DDL reaches the subscriber');
is($pub->safe_psql('postgres', "SELECT state || ' ' || applied FROM ddl_notify.ddl_apply_status"),
	'applying 1', 'the publisher applied only the subscriber\'s own DDL: its own came back and was ignored');

# a subscriber of the subscriber: the publisher's DDL goes on to a third
# cluster, applied once there, with large transactions streamed (applied by
# a parallel apply worker from PostgreSQL 16 on)
my $third = DdlNotifyTest::new_node('third', conf => $conf);
$third->safe_psql('postgres', $base);
my $streaming = $third->pg_version >= 16 ? 'parallel' : 'on';
$sub->safe_psql('postgres', q{
CREATE PUBLICATION onward FOR TABLES IN SCHEMA s3;
SELECT ddl_notify.publish_ddl('onward');
});
$third->safe_psql('postgres', q{
CREATE TABLE s3.q (id int PRIMARY KEY, w int);
});
$third->safe_psql('postgres', qq{
CREATE SUBSCRIPTION third CONNECTION '$subconn' PUBLICATION onward
	WITH (enabled = false, streaming = $streaming);
SELECT ddl_notify.apply_ddl('third');
ALTER SUBSCRIPTION third ENABLE;
});
$third->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')")
  or die 'initial synchronization of the third cluster did not finish';
$sub->safe_psql('postgres', "ALTER SYSTEM SET logical_decoding_work_mem = '64kB'; SELECT pg_reload_conf()");
$pub->safe_psql('postgres', "ALTER SYSTEM SET logical_decoding_work_mem = '64kB'; SELECT pg_reload_conf()");
$pub->safe_psql('postgres', q{
BEGIN;
ALTER TABLE s3.q ADD COLUMN big text;
INSERT INTO s3.q SELECT g, g, repeat('x', 200) FROM generate_series(1, 3000) g;
CREATE TABLE s3.r (id int PRIMARY KEY);
INSERT INTO s3.r SELECT g FROM generate_series(1, 10) g;
COMMIT;
});
caught_up('sub', 'sub2');
$sub->wait_for_catchup('third');
is($third->safe_psql('postgres', 'SELECT count(big) || \' \' || (SELECT count(*) FROM s3.r) FROM s3.q'),
	'3000 10', 'a subscriber of the subscriber: the column, the new table and every row, streamed');
is($third->safe_psql('postgres', "SELECT state || ' ' || applied FROM ddl_notify.ddl_apply_status"),
	'applying 2', 'applied once each on the third cluster');
is($third->safe_psql('postgres', "SELECT count(*) FROM ddl_notify.ddl_applied WHERE origin = (SELECT system_identifier FROM pg_control_system())"),
	'0', 'and recorded with the first cluster\'s origin, not the middle one\'s');

# the initial synchronization replays no history: an outbox row committed
# before the subscription existed (kept from pruning by an open reader) is
# copied with the table or not at all, and never applied
$pub->safe_psql('postgres', 'CREATE DATABASE hist');
$sub->safe_psql('postgres', 'CREATE DATABASE hist');
$pub->safe_psql('hist', q{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.h (id int PRIMARY KEY);
CREATE PUBLICATION hp FOR ALL TABLES;
SELECT ddl_notify.publish_ddl('hp');
});
my $reader = $pub->background_psql('hist');
$reader->query_safe('BEGIN; SELECT count(*) FROM ddl_notify.ddl_outbox;');
$pub->safe_psql('hist', 'ALTER TABLE public.h ADD COLUMN old int');
is($pub->safe_psql('hist', 'SELECT count(*) FROM ddl_notify.ddl_outbox'), '1', 'history: one outbox row before the subscription');
$sub->safe_psql('hist', q{
CREATE EXTENSION ddl_notify;
CREATE TABLE public.h (id int PRIMARY KEY, old int);
});
my $histconn = $pub->connstr . ' dbname=hist';
# the outbox copied by a table synchronization, as when apply_ddl() comes
# after the subscription began copying (made certain here by hand)
$sub->safe_psql('hist', qq{
CREATE SUBSCRIPTION hs CONNECTION '$histconn' PUBLICATION hp WITH (enabled = false);
SELECT ddl_notify.apply_ddl('hs');
SET allow_system_table_mods = on;
UPDATE pg_subscription_rel SET srsubstate = 'i'
WHERE srrelid = 'ddl_notify.ddl_outbox'::regclass
  AND srsubid = (SELECT oid FROM pg_subscription WHERE subname = 'hs');
ALTER SUBSCRIPTION hs ENABLE;
});
$sub->poll_query_until('hist',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')")
  or die 'initial synchronization of hist did not finish';
$reader->query_safe('COMMIT;');
$reader->quit;
$pub->safe_psql('hist', 'BEGIN; ALTER TABLE public.h ADD COLUMN new int; INSERT INTO public.h VALUES (1, 2, 3); COMMIT;');
$pub->wait_for_catchup('hs');
is($sub->safe_psql('hist', "SELECT state || ' ' || applied || ' ' || (SELECT new FROM public.h) FROM ddl_notify.ddl_apply_status"),
	'applying 1 3', 'history: only the DDL after the subscription is applied, once');

# handing back
is($third->safe_psql('postgres', "SELECT ddl_notify.stop_applying_ddl('third')"), 't',
	'stop_applying_ddl: true when it applied');
is($third->safe_psql('postgres', "SELECT ddl_notify.stop_applying_ddl('third')"), 'f',
	'stop_applying_ddl: false the second time');
$pub->safe_psql('postgres', 'ALTER TABLE s3.r ADD COLUMN after_stop int');
caught_up('sub', 'sub2');
$sub->wait_for_catchup('third');
is($third->safe_psql('postgres', "SELECT count(*) FROM information_schema.columns WHERE table_name = 'r' AND column_name = 'after_stop'"),
	'0', 'a stopped subscription applies no more DDL');
is($pub->safe_psql('postgres', "SELECT ddl_notify.unpublish_ddl('pub2')"), 't', 'unpublish_ddl: true when it was marked');
is($pub->safe_psql('postgres', q{
SELECT count(*) FROM pg_publication_tables WHERE pubname = 'pub2' AND tablename = 'ddl_outbox'}),
	'0', 'unpublish_ddl takes the outbox out of a schema publication');
is($pub->safe_psql('postgres', "SELECT ddl_notify.unpublish_ddl('pub2')"), 'f', 'unpublish_ddl: false the second time');

$third->stop;
$sub->stop;
$pub->stop;
done_testing();
