
# Copyright (c) 2026, the ddl_notify authors

# 034_hostile_restore: real dumps, edited and not, restored (G10, G13).
#
# A dump is data: restoring it, edited or not, never makes code run as a
# role that did not choose it, and a restore into a database that already
# has the extension cannot break it.  With pg_dump and psql (plain format),
# as a DBA does it:
# 1. A plain dump whose subscriber row was edited, owner_name alice ->
#    the superuser, no SQL added, restored by the superuser: the row comes
#    back unconfirmed; alice's function is never called (as the superuser or
#    at all) until a superuser confirms it.  Catches: the restore trigger
#    without trust.c's binding rule (DdlnBindRestored binding any function
#    its name finds): alice's handler then runs as the superuser.
# 2. The same dump unedited: alice's subscriber runs as alice at once, and a
#    subscriber paused before the dump comes back paused, its position new
#    (G13: the configuration, pause included, survives the dump).
# 3. The unedited dump restored into a database that already has the
#    extension and subscribers (the dump's setval() sets the sequences
#    back): its rows are refused only by name (23505 on name, as before), and
#    afterwards subscribe() and a dead letter still draw free ids (no 23505
#    on an id).  Catches: ids drawn from the sequence alone.
# Synchronisation is on conditions (wait_for_delivery, poll_query_until).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my $node = DdlNotifyTest::new_node('hostile_restore');
my $su = $node->safe_psql('postgres', 'SELECT current_user');
$node->safe_psql('postgres', 'CREATE DATABASE src');
DdlNotifyTest::setup_db($node, 'src');
DdlNotifyTest::lifecycle_handler($node, 'src', $_) for qw(al pz dl);
$node->safe_psql(
	'src', q{
CREATE ROLE alice;
GRANT USAGE ON SCHEMA ddl_notify TO alice;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean) TO alice;
ALTER FUNCTION public.lc_al(ddl_notify.event) OWNER TO alice;
SET ROLE alice;
SELECT ddl_notify.subscribe('al', 'public.lc_al(ddl_notify.event)');
RESET ROLE;
SELECT ddl_notify.subscribe('pz', 'public.lc_pz(ddl_notify.event)');
SELECT ddl_notify.pause('pz');
SELECT ddl_notify.subscribe('dl', 'public.lc_dl(ddl_notify.event)', max_attempts => 1);
});

my $dump = "$PostgreSQL::Test::Utils::tmp_check/src.sql";
$node->command_ok([ 'pg_dump', '-f', $dump, '-d', $node->connstr('src') ],
	'pg_dump of a database with subscribers');
my $plain = slurp_file($dump);

# 1. the subscriber row edited: owner_name alice -> the superuser
my $edited = $plain;
my $n = ($edited =~ s/^(\d+\tal\t.*\t)alice(\t)/$1$su$2/mg);
is($n, 1, 'the dump has one data row of subscriber al to edit');
my $edited_file = "$PostgreSQL::Test::Utils::tmp_check/edited.sql";
append_to_file($edited_file, $edited);

$node->safe_psql('postgres', 'CREATE DATABASE edited');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=0', '-d', $node->connstr('edited'), '-f', $edited_file ],
	'the edited dump is restored by the superuser');
is( $node->safe_psql('edited',
		"SELECT state || ' ' || last_error_sqlstate FROM ddl_notify.subscriber_status WHERE name = 'al'"),
	'unconfirmed 42501',
	'G10: the edited row comes back unconfirmed, and says why');
$node->safe_psql('edited', 'CREATE TABLE after_edit ()');
is(DdlNotifyTest::wait_for_delivery($node, 'edited'), 't',
	'the others are delivered (an unconfirmed subscriber is not waited for)');
is( $node->safe_psql('edited',
		"SELECT count(*) FROM public.lc_log WHERE sub = 'al' AND db = 'edited'"),
	'0', "G10: alice's function was not called for the edited row");
is( $node->safe_psql('edited',
		"SELECT pending > 0 FROM ddl_notify.subscriber_status WHERE name = 'al'"),
	't', '... and its events wait for a confirmation');
# a superuser's explicit confirmation binds it (as the superuser now)
$node->safe_psql('edited', "SELECT ddl_notify.resume('al')");
is(DdlNotifyTest::wait_for_delivery($node, 'edited'), 't', 'confirmed, it is delivered');
is( $node->safe_psql('edited',
		"SELECT string_agg(object_identity || ':' || as_user, ' ') FROM public.lc_log WHERE sub = 'al' AND db = 'edited' AND command_tag = 'CREATE TABLE'"),
	"public.after_edit:$su",
	"... once, as the owner the superuser confirmed");

# 2. the dump as it was
$node->safe_psql('postgres', 'CREATE DATABASE plain');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('plain'), '-f', $dump ],
	'the unedited dump is restored');
# (the worker may deliver the restore's own GRANTs before the dump's GRANT on
# public.gate came: that attempt fails and is retried; wait for it first)
$node->safe_psql('plain', 'CREATE TABLE after_plain ()');
is(DdlNotifyTest::wait_for_delivery($node, 'plain'), 't', 'delivered');
is( $node->safe_psql('plain',
		"SELECT string_agg(name || ':' || state, ' ' ORDER BY name) FROM ddl_notify.subscriber_status"),
	'al:active dl:active pz:paused',
	"G13: alice's subscriber is active, the paused one is still paused");
is( $node->safe_psql('plain',
		"SELECT string_agg(sub || ':' || object_identity || ':' || as_user, ' ' ORDER BY sub) FROM public.lc_log WHERE db = 'plain' AND command_tag = 'CREATE TABLE'"),
	'al:public.after_plain:alice dl:public.after_plain:' . $su,
	'G10: alice\'s subscriber runs as alice; the paused one gets nothing');
is( $node->safe_psql('plain',
		"SELECT pending > 0 FROM ddl_notify.subscriber_status WHERE name = 'pz'"),
	't', 'G13: the paused subscriber keeps what waits for it');
$node->safe_psql('plain', "SELECT ddl_notify.resume('pz')");
is(DdlNotifyTest::wait_for_delivery($node, 'plain'), 't', 'resumed, it catches up');
is( $node->safe_psql('plain',
		"SELECT string_agg(object_identity, ' ') FROM public.lc_log WHERE db = 'plain' AND sub = 'pz' AND command_tag = 'CREATE TABLE'"),
	'public.after_plain', '... with what waited, once');

# 3. the dump restored over a database that has the extension and subscribers
$node->safe_psql('plain', q{
SELECT ddl_notify.subscribe('extra' || g, 'public.lc_pz(ddl_notify.event)') FROM generate_series(1, 3) g;
INSERT INTO public.gate VALUES ('dl', false);
CREATE TABLE fail_1 ();
});
$node->poll_query_until('plain',
	"SELECT count(*) = 1 FROM ddl_notify.dead_letter WHERE subscriber = 'dl' AND event->>'object_identity' = 'public.fail_1'")
  or die 'no dead letter';
my ($ret, $out, $err) = $node->psql('plain', slurp_file($dump),
	extra_params => [ '-v', 'ON_ERROR_STOP=0' ]);
unlike($err, qr/subscriber_pkey|dead_letter_pkey/,
	'restoring over it collides on no id (only on names, which is right)');
like($err, qr/subscriber_name_key/, '... the names already there are refused');
$node->safe_psql('plain', "SELECT ddl_notify.subscribe('after_restore', 'public.lc_pz(ddl_notify.event)')");
$node->safe_psql('plain', 'CREATE TABLE fail_2 ()');
$node->poll_query_until('plain',
	"SELECT count(*) = 1 FROM ddl_notify.dead_letter WHERE subscriber = 'dl' AND event->>'object_identity' = 'public.fail_2'")
  or die 'no dead letter after the restore';
is( $node->safe_psql('plain',
		'SELECT count(*) = count(DISTINCT id) FROM ddl_notify.subscriber'),
	't', 'subscribe() after the restore drew a free id');
is( $node->safe_psql('plain',
		"SELECT count(*) > 1 AND count(*) = count(DISTINCT id) FROM ddl_notify.dead_letter"),
	't', '... and so did the dead letters after it');
is( $node->safe_psql('plain',
		"SELECT count(*) FROM ddl_notify.subscriber_status WHERE last_error_sqlstate = '23505'"),
	'0', 'no subscriber records a duplicate key');

$node->stop;
done_testing();
