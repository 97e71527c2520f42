
# Copyright (c) 2026, the ddl_notify authors

# 003_standby_promotion.pl: delivery changes owner when a streaming standby
# is promoted.
#
# G9: events committed on the old primary, some delivered there and some not
#     yet, are delivered exactly once on the new primary after promotion,
#     and delivery goes on for new DDL, with no manual step.
# G9: nothing delivers on the hot standby before promotion: no
#     "ddl_notify launcher" or "ddl_notify worker" runs there, and
#     CALL ddl_notify.deliver() fails with SQLSTATE 25006; so does
#     subscribe(), which says why.  Caught (checked): subscribe() without its
#     recovery check (subscriber.c: the call then fails with an internal
#     error, XX000 "cannot assign TransactionIds during recovery").
# G4 across the owner change (the TiDB "schema version hole" bug, see
#     docs/guarantees.md, "Bugs it cannot have"): a DDL
#     transaction holding a lower event id commits after a higher id was
#     delivered on the old primary; the old primary dies while delivering it;
#     the new primary must not treat the lower id as a hole.
#
# Subscribers on database "app": "a" is healthy but parks on the late event
# (advisory lock, see DdlNotifyTest.pm) so that the old primary is in the
# middle of delivering it when it dies; "b" fails every event until it is
# fixed on the new primary.  Both log with UNIQUE (sub, event_id): a handler
# effect repeated on the new primary would fail with 23505.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $key     = DdlNotifyTest::LOCK_KEY;
my $primary = DdlNotifyTest::new_node('primary', allows_streaming => 1);
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($primary, 'app');
DdlNotifyTest::setup_subscriber($primary, 'app', 'a', unique => 1, park => 1);
DdlNotifyTest::setup_subscriber($primary, 'app', 'b', unique => 1);
$primary->safe_psql('app', "INSERT INTO public.gate VALUES ('b', false)");

# Delivered to "a" on the old primary, not to "b".
my @all = DdlNotifyTest::create_tables($primary, 'app', 'before', 1, 3);

# The hole: a transaction takes a lower event id and stays open ...
my $late = $primary->background_psql('app');
$late->query_safe('BEGIN; CREATE TABLE public.hole_low_park (id int);');
push @all, 'public.hole_low_park';

# ... while a later transaction with a higher id commits and is delivered.
push @all, DdlNotifyTest::create_tables($primary, 'app', 'hole_high', 1, 1);
ok( $primary->poll_query_until(
		'app',
		"SELECT count(*) = 4 FROM public.log_a WHERE object_identity ~ '^public\\.(before|hole_high)_' AND command_tag = 'CREATE TABLE'"
	),
	'G9: the old primary delivered the first events to "a"');

# Now the low id commits; the old primary's worker starts on it and parks.
my $holder = $primary->background_psql('app');
$holder->query_safe("SELECT pg_advisory_lock($key)");
$late->query_safe('COMMIT');
ok(DdlNotifyTest::wait_worker_blocked($primary, 'app'),
	'G9: the old primary is in the middle of delivering the late event');
push @all, DdlNotifyTest::create_tables($primary, 'app', 'after', 1, 2);

my $ids = $primary->safe_psql(
	'app', q{
SELECT (SELECT id FROM ddl_notify.event WHERE object_identity = 'public.hole_low_park' AND command_tag = 'CREATE TABLE')
	|| ' ' ||
	(SELECT id FROM ddl_notify.event WHERE object_identity = 'public.hole_high_1' AND command_tag = 'CREATE TABLE')});
my ($low, $high) = split ' ', $ids;
cmp_ok($low, '<', $high,
	'G4: the late event has the lower id, committed after the higher one');
cmp_ok(
	$primary->safe_psql('app',
		"SELECT last_event_id FROM ddl_notify.subscriber_status WHERE name = 'a'"),
	'>=', $high,
	'G4: "a" has already handled an id above the late event on the old primary');
is( $primary->safe_psql(
		'app',
		"SELECT string_agg(name || '=' || pending, ' ' ORDER BY name) FROM ddl_notify.subscriber_status"
	),
	'a=3 b=7',
	'G9: at the failover "a" has 3 events pending (one in flight), "b" all 7');

$primary->wait_for_catchup($standby);

# --- the hot standby does not deliver ----------------------------------------

is($standby->safe_psql('app', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is in recovery');
is( $standby->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type IN ('ddl_notify launcher', 'ddl_notify worker')"
	),
	'0',
	'G9: no ddl_notify launcher or worker runs on the hot standby');
my ($ret, $stdout, $stderr) =
  $standby->psql('app', "\\set VERBOSITY verbose\nCALL ddl_notify.deliver();");
isnt($ret, 0, 'G9: CALL ddl_notify.deliver() fails on the hot standby');
like($stderr, qr/ERROR:\s+25006:/, 'G9: ... with SQLSTATE 25006');
($ret, $stdout, $stderr) = $standby->psql('app',
	"\\set VERBOSITY verbose\nSELECT ddl_notify.subscribe('on_standby', 'public.h_a(ddl_notify.event)');");
isnt($ret, 0, 'subscribe() fails on the hot standby');
like($stderr, qr/ERROR:\s+25006:\s+cannot subscribe during recovery/,
	'... with SQLSTATE 25006 and says why (its own check, before any lock or write)');
is( $standby->safe_psql(
		'app',
		"SELECT string_agg(name || '=' || pending, ' ' ORDER BY name) FROM ddl_notify.subscriber_status"
	),
	'a=3 b=7',
	'G9: the standby has the same pending events');

# --- failover ---------------------------------------------------------------

$primary->stop('immediate');
eval { $holder->quit; };
eval { $late->quit; };
$standby->promote;
is($standby->safe_psql('app', 'SELECT pg_is_in_recovery()'),
	'f', 'the standby is promoted');

isnt(DdlNotifyTest::wait_worker($standby, 'app'),
	'', 'G9: a worker starts on the new primary by itself');
ok( $standby->poll_query_until(
		'app',
		"SELECT pending = 0 FROM ddl_notify.subscriber_status WHERE name = 'a'"),
	'G9: the new primary delivers the rest to "a"');
$standby->safe_psql('app', "UPDATE public.gate SET open = true WHERE sub = 'b'");
is(DdlNotifyTest::wait_for_delivery($standby, 'app'),
	't', 'G9: once "b" is fixed the new primary delivers everything');

for my $sub ('a', 'b')
{
	DdlNotifyTest::check_exactly_once($standby, 'app', $sub, \@all,
		'G9 after promotion');
}
is( $standby->safe_psql(
		'app',
		"SELECT count(*) FROM public.log_a WHERE event_id = $low AND object_identity = 'public.hole_low_park'"
	),
	'1',
	'G4: the late lower id was delivered to "a" after the owner change, not skipped as a hole'
);
is($standby->safe_psql('app', 'SELECT count(*) FROM ddl_notify.event'),
	'0', 'G9: the event table drained on the new primary');

# --- delivery goes on for new DDL --------------------------------------------

push @all, DdlNotifyTest::create_tables($standby, 'app', 'promoted', 1, 2);
is(DdlNotifyTest::wait_for_delivery($standby, 'app'),
	't', 'G9: new DDL on the new primary is delivered');
for my $sub ('a', 'b')
{
	DdlNotifyTest::check_exactly_once($standby, 'app', $sub, \@all,
		'G9 new DDL after promotion');
}

$standby->stop;
done_testing();
