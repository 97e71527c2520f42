
# Copyright (c) 2026, the ddl_notify authors

# 100_pgq.pl: PgQ (pgq 3, SQL-only use: pgq.ticker() called, no pgqd
# daemon) beside ddl_notify: a queue created, events produced, ticked,
# consumed, the queue's tables rotated by maintenance, the queue dropped.
#
# G2: the DDL PgQ runs inside its functions (create_queue: the queue's
#     event tables, their indexes and grants; drop_queue: their drops) is
#     delivered command by command as reference event triggers saw it;
#     registering, producing, ticks, batches and table rotation (TRUNCATE,
#     DML) are no events.  Catches: DDL run by PL/pgSQL EXECUTE inside a
#     function lost or doubled.
# G0: PgQ still works: the consumer gets its batch of events.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('pgq');

my $node = EcoTest::node('pgq');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION pgq; CREATE EXTENSION ddl_notify;');
EcoTest::reference($node, 'app');
EcoTest::recorder($node, 'app', 'all');
$node->safe_psql('app', 'TRUNCATE rec.ref');

$node->safe_psql('app', q{SELECT pgq.create_queue('orders')});
EcoTest::settled($node, 'app', 'create_queue');
my $after_create = $node->safe_psql('app', 'SELECT count(*) FROM rec.log_all');
ok($after_create > 0, "create_queue: $after_create events delivered");
$node->safe_psql(
	'app', q{
SELECT pgq.register_consumer('orders', 'c1');
SELECT pgq.insert_event('orders', 'new', 'order ' || g) FROM generate_series(1, 5) g;
SELECT pgq.force_tick('orders');
SELECT pgq.ticker();
});
my $batch = $node->safe_psql('app', q{SELECT pgq.next_batch('orders', 'c1')});
isnt($batch, '', 'PgQ: the consumer got a batch');
is( $node->safe_psql(
		'app', qq{SELECT count(*) FROM pgq.get_batch_events($batch)}),
	'5', 'PgQ: the batch holds the 5 events');
$node->safe_psql('app', qq{SELECT pgq.finish_batch($batch)});
$node->safe_psql('app', q{SELECT pgq.maint_rotate_tables_step1('orders'); SELECT pgq.maint_rotate_tables_step2();});
EcoTest::settled($node, 'app', 'ticks, batches, rotation');
is($node->safe_psql('app', 'SELECT count(*) FROM rec.log_all'), $after_create,
	'no event from registering, producing, ticking, consuming, rotating');
$node->safe_psql('app', q{SELECT pgq.unregister_consumer('orders', 'c1'); SELECT pgq.drop_queue('orders');});

EcoTest::settled($node, 'app', 'pgq');
my $n = EcoTest::compare($node, 'app', 'all', 'create_queue .. drop_queue');
ok($n > 5, "the reference saw $n commands");
is( $node->safe_psql(
		'app', q{SELECT string_agg(DISTINCT command_tag, ' ') FROM rec.log_all WHERE object_identity LIKE 'pgq.event_%'}),
	'ALTER TABLE CREATE INDEX CREATE SEQUENCE CREATE TABLE DROP SEQUENCE DROP TABLE GRANT',
	'the queue tables and sequences: created (with indexes, grants, settings) and dropped');


$node->stop;
done_testing();
