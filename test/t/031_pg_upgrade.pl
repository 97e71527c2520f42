
# Copyright (c) 2026, the ddl_notify authors

# 031_pg_upgrade.pl: pg_upgrade of a cluster with ddl_notify (15 to 15, into
# a freshly initdb'd cluster, in copy and in --link mode, as the postgres OS
# user that runs the suite).
#
# G13: pg_upgrade runs to the end on a cluster with the extension,
#      subscribers and pending events (no reg* column in the extension's
#      tables; catches: subscriber.handler a regprocedure again, "Checking
#      for reg* data types in user tables fatal").
# G13: a subscriber paused before the upgrade is still paused after it, its
#      events waiting, and resume() then delivers them, once, in order (the
#      pause is a column of the table pg_upgrade copies; the engine does not
#      resolve a paused subscriber's names until it is resumed, so a change
#      that made that resolution reset the pause is not seen here: checked).
# G13: the subscribers, their subscription points and the pending events
#      survive: after the upgrade every pending event is delivered exactly
#      once, in order, to each subscriber that must see it, and nothing
#      delivered before the upgrade is delivered again; a subscriber that
#      subscribed after some still-queued events committed still does not
#      get them (its subscription point kept its meaning).  Catches: the
#      engine keeping the old cluster's handler OID (function OIDs are not
#      preserved by pg_upgrade; DdlnResolveSubscriber resolves the stored
#      signature again when resolved_in is another cluster's).
# G13, G4, G6: the old cluster runs in transaction epoch 7 (pg_resetwal -e):
#      event xids (xid8) and the stored snapshots mean the same after the
#      upgrade only if pg_upgrade carried the epoch over; DDL committed after
#      the upgrade is then delivered too, and in order after the old events.
# G10: a subscriber owned by a non-superuser role still runs as that role.

use strict;
use warnings FATAL => 'all';

use Cwd;
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $bindir = `pg_config --bindir`;
chomp $bindir;

# The old cluster: epoch 7, two subscribers, one failing (closed gate),
# pending events for both, and a third that subscribed late.
sub old_cluster
{
	my ($name) = @_;
	my $old = PostgreSQL::Test::Cluster->new("old_$name");
	$old->init;
	command_ok([ 'pg_resetwal', '-e', '7', $old->data_dir ],
		"$name: the old cluster starts in epoch 7");
	$old->append_conf('postgresql.conf', q{
shared_preload_libraries = 'ddl_notify'
ddl_notify.retry_initial_delay = '100ms'
ddl_notify.retry_max_delay = '200ms'
});
	$old->start;
	$old->safe_psql('postgres', 'CREATE DATABASE app');
	DdlNotifyTest::setup_db($old, 'app');
	DdlNotifyTest::lifecycle_handler($old, 'app', $_) for qw(good flaky late);
	$old->safe_psql(
		'app', q{
CREATE ROLE alice;
GRANT USAGE ON SCHEMA ddl_notify TO alice;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean) TO alice;
SET ROLE alice;
SELECT ddl_notify.subscribe('good', 'public.lc_good(ddl_notify.event)', command_tags => '{CREATE TABLE}');
RESET ROLE;
SELECT ddl_notify.subscribe('flaky', 'public.lc_flaky(ddl_notify.event)');
INSERT INTO public.gate VALUES ('flaky', false);
});
	# u1, u2: delivered to good before the upgrade, pending for flaky
	DdlNotifyTest::create_tables($old, 'app', 'u', 1, 2);
	$old->poll_query_until('app',
		"SELECT count(*) = 2 FROM public.lc_log WHERE sub = 'good'")
	  or die "good did not get u_1, u_2";
	$old->safe_psql('app',
		"SELECT ddl_notify.subscribe('late', 'public.lc_late(ddl_notify.event)')");
	# u3..u5: pending for everyone at the upgrade
	$old->safe_psql('app',
		"INSERT INTO public.gate VALUES ('good', false), ('late', false)");
	DdlNotifyTest::create_tables($old, 'app', 'u', 3, 5);
	$old->poll_query_until('app',
		"SELECT count(*) = 3 FROM ddl_notify.subscriber_status WHERE attempts > 0")
	  or die "the closed subscribers did not fail";
	return $old;
}

my $i = 0;
# copy mode is PostgreSQL 15's default (--copy is 17's spelling)
for my $mode ('copy', '--link')
{
	$i++;
	my $old = old_cluster("m$i");
	# late is paused across the upgrade (operators' state is configuration too)
	$old->safe_psql('app', "SELECT ddl_notify.pause('late')");
	my %before;
	$before{$_} = $old->safe_psql('app',
		"SELECT pending FROM ddl_notify.subscriber_status WHERE name = '$_'")
	  for qw(good flaky late);
	is( "$before{good} $before{flaky} $before{late}",
		'3 5 3',
		"$mode: before the upgrade good has 3 pending events, flaky 5, late 3");
	my $subs_before = $old->safe_psql('app',
		"SELECT string_agg(name || ':' || slot || ':' || owner::regrole || ':' || start_snapshot, ' ' ORDER BY name) FROM ddl_notify.subscriber"
	);
	my $xid_before = $old->safe_psql('app', 'SELECT pg_current_xact_id()');
	$old->stop;

	my $new = PostgreSQL::Test::Cluster->new("new_m$i");
	$new->init;
	$new->append_conf('postgresql.conf', q{
shared_preload_libraries = 'ddl_notify'
ddl_notify.retry_initial_delay = '100ms'
ddl_notify.retry_max_delay = '200ms'
});

	# pg_upgrade writes its logs into the current directory's subdirectory
	my $cwd = getcwd();
	my $dir = "$PostgreSQL::Test::Utils::tmp_check/upgrade_m$i";
	make_path($dir);
	chdir $dir;
	command_ok(
		[
			'pg_upgrade', '--no-sync',
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-s', $new->host, '-p', $old->port, '-P', $new->port,
			($mode eq 'copy' ? () : ($mode))
		],
		"G13 $mode: pg_upgrade runs to the end on a cluster with ddl_notify, subscribers and pending events"
	);
	chdir $cwd;

	$new->start;
	my $xid_after = $new->safe_psql('app', 'SELECT pg_current_xact_id()');
	cmp_ok($xid_after, '>', $xid_before,
		"G13 $mode: transaction ids go on from the old cluster's ($xid_before -> $xid_after, epoch 7 carried over)"
	);
	is( $new->safe_psql('app',
			"SELECT string_agg(name || ':' || slot || ':' || owner::regrole || ':' || start_snapshot, ' ' ORDER BY name) FROM ddl_notify.subscriber"
		),
		$subs_before,
		"G13 $mode: subscribers, slots, owners and subscription points survive");
	is( $new->safe_psql('app',
			"SELECT string_agg(pending::text, ' ' ORDER BY name) FROM ddl_notify.subscriber_status"
		),
		'5 3 3',
		"G13 $mode: the pending events survive (flaky 5, good 3, late 3)");
	is( $new->safe_psql('app',
			"SELECT string_agg(name || ':' || state, ' ' ORDER BY name) FROM ddl_notify.subscriber_status"),
		'flaky:failing good:failing late:paused',
		"G13 $mode: the paused subscriber is still paused after the upgrade");
	$new->safe_psql('app', "SELECT ddl_notify.resume('late')");

	# DDL after the upgrade, while the gates are still closed
	DdlNotifyTest::create_tables($new, 'app', 'u', 6, 6);
	$new->safe_psql('app', 'UPDATE public.gate SET open = true');
	is(DdlNotifyTest::wait_for_delivery($new, 'app'),
		't', "G13 $mode: everything is delivered after the upgrade");

	is(DdlNotifyTest::lifecycle_log($new, 'app', 'good'),
		'public.u_1 public.u_2 public.u_3 public.u_4 public.u_5 public.u_6',
		"G13 $mode: good got u_1, u_2 before and u_3..u_6 after the upgrade, each once, in order"
	);
	is(DdlNotifyTest::lifecycle_log($new, 'app', 'flaky'),
		'public.u_1 public.u_2 public.u_3 public.u_4 public.u_5 public.u_6',
		"G13 $mode: flaky, failing at the upgrade, got all six once, in order");
	is(DdlNotifyTest::lifecycle_log($new, 'app', 'late'),
		'public.u_3 public.u_4 public.u_5 public.u_6',
		"G6/G13 $mode: late got only what committed after it subscribed, once, in order"
	);
	is( $new->safe_psql('app',
			"SELECT count(*) - count(DISTINCT (sub, event_id)) FROM public.lc_log"),
		'0',
		"G13 $mode: no event id was handled twice by a subscriber");
	is( $new->safe_psql('app',
			"SELECT string_agg(DISTINCT sub || ':' || as_user, ' ' ORDER BY sub || ':' || as_user) FROM public.lc_log"
		),
		'flaky:postgres good:alice late:postgres',
		"G10/G13 $mode: each handler ran as its subscriber's owner, before and after");
	is( $new->safe_psql('app',
			"SELECT string_agg(name || ':' || handler::text || ':' || owner::text || ':' || attempts, ' ' ORDER BY name) "
			  . "FROM ddl_notify.subscriber_status"),
		'flaky:lc_flaky(ddl_notify.event):postgres:0 good:lc_good(ddl_notify.event):alice:0 late:lc_late(ddl_notify.event):postgres:0',
		"G13 $mode: each subscriber names its handler (resolved again) and owner, no attempt pending"
	);
	is($new->safe_psql('app', 'SELECT count(*) FROM ddl_notify.event'),
		'0', "G13 $mode: the queue drained");
	$new->stop;
}

done_testing();
