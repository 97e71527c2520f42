
# Copyright (c) 2026, the ddl_notify authors

# 053_image_row_reuse.pl: an "after" image takes from its "before" (the same
# command's) only the indexes' catalog rows that did not change between the
# two (relimage.c, DdlnWatchChanged): another session's change to an index
# of the table, committed while the command runs, is in the "after".
#
# G2: a relation image is the relation as the catalogs say at that point.
#     A CREATE INDEX whose expression waits on an advisory lock holds its
#     table in SHARE mode, after its "before" image was read; another
#     session renames an index of the same table and gives another one a
#     storage parameter (ALTER INDEX takes no lock the CREATE INDEX holds)
#     and commits; the CREATE INDEX goes on, and its "after" must list the
#     renamed index under its new name and the other with its parameter, as
#     pg_indexes says once it committed.  Catches: the invalidations of
#     pg_class rows not noted (test/mutations/images_rows_reused_unwatched.patch:
#     the "before"'s rows reused, the old name and no parameter printed).
#     The session's own changes (ALTER INDEX ... RENAME, SET, CLUSTER ON,
#     REPLICA IDENTITY USING INDEX in one transaction) are checked by
#     sql/040_relation_images and sql/047_index_definitions.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

# no worker: the events stay (nobody subscribed, a worker would sweep them)
my $node = DdlNotifyTest::new_node('imagerows', conf => "ddl_notify.max_workers = 0\n");
$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
$node->safe_psql(
	'app', q{
CREATE TABLE public.r (c1 int, c2 int, c3 int);
INSERT INTO public.r VALUES (1, 2, 3);
CREATE INDEX r_a ON public.r (c2);
CREATE INDEX r_b ON public.r (c3);
CREATE INDEX r_c ON public.r (c2, c3);
CREATE FUNCTION public.r_wait(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS
  $$BEGIN PERFORM pg_advisory_lock(5252); PERFORM pg_advisory_unlock(5252); RETURN $1; END$$;
});

my $locker = $node->background_psql('app', on_error_stop => 1);
$locker->query_safe('SELECT pg_advisory_lock(5252)');

my $ddl = $node->background_psql('app', on_error_stop => 1);
$ddl->query_until(qr/started/,
	"\\echo started\nCREATE INDEX r_f ON public.r (public.r_wait(c1));\n");
ok( $node->poll_query_until(
		'app', q{
SELECT count(*) > 0 FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE 'CREATE INDEX r_f%'}
	),
	'CREATE INDEX waits in its index build, after its "before" image');

$node->safe_psql('app',
	'ALTER INDEX public.r_a RENAME TO r_renamed; ALTER INDEX public.r_b SET (fillfactor = 50)');
$locker->query_safe('SELECT pg_advisory_unlock(5252)');
$ddl->query_safe('SELECT 1');
$ddl->quit;
$locker->quit;

# the "after"'s definitions of the three older indexes, and pg_indexes's now
my $after = $node->safe_psql(
	'app', q{
SELECT string_agg(i->>'name' || ': ' || (i->>'definition'), E'\n' ORDER BY i->>'name')
FROM ddl_notify.event e, jsonb_array_elements(e.details->'after'->'indexes') i
WHERE e.command_tag = 'CREATE INDEX' AND e.object_identity = 'public.r_f'
  AND i->>'name' <> 'r_f'});
my $now = $node->safe_psql(
	'app', q{
SET search_path = pg_catalog;
SELECT string_agg(indexname || ': ' || indexdef, E'\n' ORDER BY indexname)
FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'r' AND indexname <> 'r_f'});
is($after, $now, 'the "after" of the CREATE INDEX is the indexes as they are now');
like($after, qr/^r_b: .*WITH \(fillfactor='50'\)\nr_c: .*\nr_renamed: CREATE INDEX r_renamed /,
	'... with the other session\'s storage parameter and rename');

my $before = $node->safe_psql(
	'app', q{
SELECT string_agg(i->>'name', ', ' ORDER BY i->>'name')
FROM ddl_notify.event e, jsonb_array_elements(e.details->'before'->'indexes') i
WHERE e.command_tag = 'CREATE INDEX' AND e.object_identity = 'public.r_f'});
is($before, 'r_a, r_b, r_c', 'its "before" is the table before both');

$node->stop;
done_testing();
