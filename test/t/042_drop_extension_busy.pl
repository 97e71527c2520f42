
# Copyright (c) 2026, the ddl_notify authors

# 042_drop_extension_busy.pl: DROP EXTENSION ddl_notify while a pool worker
# is in the middle of a delivery.
#
# G11/G13: the user's DROP EXTENSION succeeds and is never the victim of a
#      deadlock with the worker.  The worker's handler is parked on an
#      advisory lock (DdlNotifyTest's park) while it holds its locks on the
#      extension's tables; DROP EXTENSION starts; then the park is released.
#      Without the utility hook stopping the database's workers first
#      (worker.c, DdlnStepAsideForExtension), DROP EXTENSION waits behind
#      the worker for AccessExclusiveLock, the released worker then asks for
#      a lock DROP EXTENSION already holds, and the deadlock detector cancels
#      one of them, seen here as the DROP failing ("deadlock detected") or the
#      worker's delivery failing.  Catches: DdlnStepAsideForExtension()
#      removed (the DROP waits on a Lock while the worker lives).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('dropbusy');
$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
DdlNotifyTest::setup_subscriber($node, 'app', 'p', park => 1);
my $key = DdlNotifyTest::LOCK_KEY;

# The holder keeps the park closed: the worker's handler waits in it.
my $holder = $node->background_psql('app');
$holder->query_safe("SELECT pg_advisory_lock($key)");
DdlNotifyTest::create_tables($node, 'app', 'd', 1, 1, park => 1);
ok(DdlNotifyTest::wait_worker_blocked($node, 'app'),
	'the worker is in the middle of a delivery, its handler parked');
my $worker = DdlNotifyTest::worker_pid($node, 'app');

# DROP EXTENSION from another session, not waiting for it here.
my $dropper = $node->background_psql('app', on_error_stop => 0);
my $out = $dropper->query_until(qr/started/, q{
\echo started
DROP EXTENSION ddl_notify CASCADE;
\echo dropped :ERROR
});

# Either the DROP ends (the worker was stopped), or it waits for a lock the
# worker holds: then release the park, as a user's lock would be released.
$node->poll_query_until('app', q{
SELECT NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'ddl_notify')
    OR EXISTS (SELECT 1 FROM pg_stat_activity
               WHERE query LIKE 'DROP EXTENSION ddl_notify%' AND wait_event_type = 'Lock')
}) or die 'DROP EXTENSION neither ended nor waited';
my $waited = $node->safe_psql('app', q{
SELECT count(*) FROM pg_stat_activity
 WHERE query LIKE 'DROP EXTENSION ddl_notify%' AND wait_event_type = 'Lock'});
is($waited, '0', 'G11: DROP EXTENSION does not wait for the worker\'s locks');
$holder->query_safe("SELECT pg_advisory_unlock($key)");

$out .= $dropper->query_until(qr/dropped (?:true|false)/, '') unless $out =~ /dropped (?:true|false)/;
like($out, qr/dropped false/, 'G11: DROP EXTENSION succeeds while the worker was delivering');
unlike($dropper->{stderr}, qr/deadlock/, 'no deadlock');
is($node->safe_psql('app', q{SELECT count(*) FROM pg_extension WHERE extname = 'ddl_notify'}),
	'0', 'the extension is gone');
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $worker"),
	'the worker that was delivering has left');

$holder->quit;
$dropper->quit;
$node->stop;
done_testing();
