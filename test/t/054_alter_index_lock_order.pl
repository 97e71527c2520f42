
# Copyright (c) 2026, the ddl_notify authors

# 054_alter_index_lock_order.pl: the "before" image of an ALTER INDEX takes
# its locks in PostgreSQL's order, the table before its index
# (imgcommand.c, DdlnImageLockNamed), so that it cannot deadlock with a
# DROP INDEX, which locks the table and then the index.
#
# G0: no error a session can observe is different with the extension.
#     A session holds the table in ACCESS EXCLUSIVE mode, as DROP INDEX
#     does before it locks the index; another runs ALTER INDEX ... SET on
#     an index of that table and waits; the first drops the index and
#     commits.  Without ddl_notify the ALTER INDEX locks only the index, so
#     the DROP INDEX goes through and the ALTER INDEX then finds no index.
#     With the image's reading locking the index first and its table
#     second, each session waits for the other: "deadlock detected" in one
#     of them.  Catches: the table locked after the index
#     (test/mutations/images_index_locked_before_table.patch).  The same
#     with ALTER INDEX ... RENAME, which takes the same path.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

# a deadlock is found after deadlock_timeout: short, so a failing run is quick
my $node = DdlNotifyTest::new_node('lockorder',
	conf => "ddl_notify.max_workers = 0\ndeadlock_timeout = '100ms'\n");
$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');

# run: ALTER INDEX "$alter" while another session holds the table as DROP
# INDEX does, then drops the index; returns the ALTER INDEX's stderr
sub alter_while_dropped
{
	my ($alter) = @_;
	$node->safe_psql('app',
		'DROP TABLE IF EXISTS public.t; CREATE TABLE public.t (a int); CREATE INDEX t_i ON public.t (a)'
	);
	my $dropper = $node->background_psql('app', on_error_stop => 0);
	$dropper->query_safe('BEGIN; LOCK TABLE public.t IN ACCESS EXCLUSIVE MODE');

	my $alterer = $node->background_psql('app', on_error_stop => 0);
	$alterer->query_until(qr/started/, "\\echo started\n$alter;\n\\echo altered\n");
	ok( $node->poll_query_until(
			'app', qq{
SELECT count(*) > 0 FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND query LIKE 'ALTER INDEX%'}
		),
		"$alter waits for the table");

	my $out = $dropper->query_until(qr/dropped/, "DROP INDEX public.t_i;\nCOMMIT;\n\\echo dropped :ERROR\n");
	like($out, qr/dropped false/, "DROP INDEX commits beside $alter");
	$alterer->query_until(qr/altered/, '');
	my $err = $alterer->{stderr};
	$dropper->quit;
	$alterer->quit;
	unlike($dropper->{stderr}, qr/deadlock/, 'the DROP INDEX met no deadlock');
	return $err;
}

my $err = alter_while_dropped('ALTER INDEX public.t_i SET (fillfactor = 50)');
unlike($err, qr/deadlock/, 'ALTER INDEX ... SET met no deadlock');
like($err, qr/relation "public.t_i" does not exist/,
	'ALTER INDEX ... SET fails as without the extension: the index is gone');

$err = alter_while_dropped('ALTER INDEX public.t_i RENAME TO t_j');
unlike($err, qr/deadlock/, 'ALTER INDEX ... RENAME met no deadlock');
like($err, qr/relation "public.t_i" does not exist/,
	'ALTER INDEX ... RENAME fails as without the extension: the index is gone');

# and with nobody in the way, the image is read as before
$node->safe_psql('app', 'CREATE INDEX t_i ON public.t (a); ALTER INDEX public.t_i SET (fillfactor = 70)');
is( $node->safe_psql(
		'app', q{
SELECT e.details->'changes'->0->>'op' FROM ddl_notify.event e
WHERE e.command_tag = 'ALTER INDEX' ORDER BY e.id DESC LIMIT 1}),
	'set index reloptions',
	'an ALTER INDEX ... SET carries its change');

$node->stop;
done_testing();
