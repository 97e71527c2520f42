
# Copyright (c) 2026, the ddl_notify authors

# 046_opclass_memo.pl: the default operator classes relimage.c remembers
# from one statement to the next (DdlnDefaultOpclass), and which classes
# take options (DdlnOpclassOf), follow another session's change (the
# first inside a transaction that holds the locks it needs already).
#
# G2: a relation image's index definitions are pg_get_indexdef()'s text.
#     A session's transaction reads the images of a table with a varchar
#     index (varchar's default btree class is text_ops then: the index
#     prints as plain), another session makes a default class of varchar's
#     own and commits, and the first transaction's next ALTER TABLE of the
#     same table prints the index with text_ops, as pg_get_indexdef does in
#     that statement; once the class is dropped, plain again.  And whether
#     a class takes options (DdlnOpclassOf) follows another session's
#     ALTER OPERATOR FAMILY ... ADD FUNCTION of an options function
#     (test/mutations/images_opclass_options_kept.patch).  Catches: the
#     memo kept on another backend's invalidation
#     (test/mutations/images_opclass_memo_kept.patch; sql/047 catches it
#     for the session's own change).  Not caught by any test: relimage.c's
#     AcceptInvalidationMessages() before an image consults the memo (in
#     this test something else in the statement processes the other
#     session's invalidation first; the call is there for a statement in
#     which nothing does).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

# no worker: the events stay (nobody subscribed, a worker would sweep them)
my $node = DdlNotifyTest::new_node('opclassmemo', conf => "ddl_notify.max_workers = 0\n");
$node->safe_psql('postgres', 'CREATE DATABASE app');
DdlNotifyTest::setup_db($node, 'app');
$node->safe_psql('app',
	'CREATE TABLE public.m (v varchar); CREATE INDEX m_v ON public.m (v);');

# the last image's definition of m_v, and whether it is pg_get_indexdef's now
my $check = q{
SELECT i->>'definition', (i->>'definition') = pg_get_indexdef('public.m_v'::regclass)
FROM ddl_notify.event e, jsonb_array_elements(e.details->'after'->'indexes') i
WHERE e.id = (SELECT max(id) FROM ddl_notify.event WHERE details ? 'after')
  AND i->>'name' = 'm_v';
};

my $bg = $node->background_psql('app', on_error_stop => 1);
$bg->query_safe('BEGIN');
$bg->query_safe('ALTER TABLE public.m ADD COLUMN a int');
is($bg->query_safe($check), 'CREATE INDEX m_v ON public.m USING btree (v)|t',
	'varchar index: plain while text_ops is the default');

$node->safe_psql(
	'app', q{
CREATE OPERATOR CLASS public.m_varchar_ops DEFAULT FOR TYPE varchar USING btree AS
	OPERATOR 1 < (text, text), OPERATOR 2 <= (text, text), OPERATOR 3 = (text, text),
	OPERATOR 4 >= (text, text), OPERATOR 5 > (text, text), FUNCTION 1 bttextcmp(text, text);
});

$bg->query_safe('ALTER TABLE public.m ADD COLUMN b int');
is( $bg->query_safe($check),
	'CREATE INDEX m_v ON public.m USING btree (v text_ops)|t',
	'another session made a default class of varchar: text_ops printed in the same transaction');
$bg->query_safe('COMMIT');
$bg->quit;

$node->safe_psql('app', 'DROP OPERATOR FAMILY public.m_varchar_ops USING btree');
$node->safe_psql('app', 'ALTER TABLE public.m ADD COLUMN c int');
is($node->safe_psql('app', $check), 'CREATE INDEX m_v ON public.m USING btree (v)|t',
	'the class dropped: plain again');

# Whether an operator class takes options (DdlnOpclassOf: its family has
# the method's options function) is remembered beside the default classes
# and forgotten on any change to pg_amproc too.  A session reads the images
# of a table whose point index uses a default btree class of our own that
# takes none; another session gives its family an options function
# (gtsvector_options, whose one option is siglen) and makes an index with
# siglen; the first session's next ALTER TABLE looks for that index's
# options and prints them, as pg_get_indexdef does.  Catches: the memo kept
# on a change to pg_amproc (test/mutations/images_opclass_options_kept.patch:
# the index printed as plain, its siglen left out).
$node->safe_psql(
	'app', q{
CREATE FUNCTION public.m_pt_cmp(point, point) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT 0';
CREATE OPERATOR CLASS public.m_point_ops DEFAULT FOR TYPE point USING btree AS
	OPERATOR 3 ~= (point, point), FUNCTION 1 public.m_pt_cmp(point, point);
CREATE TABLE public.p (p point);
CREATE INDEX p_p ON public.p (p);
});

# the last image's definitions of p's indexes, each with whether it is
# pg_get_indexdef's (names qualified as the images print them)
my $pcheck = q{
SELECT string_agg(i->>'definition' || '|' || ((i->>'definition') = pg_get_indexdef(c.oid))::text,
				  ' / ' ORDER BY i->>'name')
FROM ddl_notify.event e, jsonb_array_elements(e.details->'after'->'indexes') i, pg_class c
WHERE e.id = (SELECT max(id) FROM ddl_notify.event WHERE details->'after'->>'name' = 'p')
  AND c.relname = i->>'name' AND c.relnamespace = 'public'::regnamespace;
};

$bg = $node->background_psql('app', on_error_stop => 1);
$bg->query_safe('SET search_path = pg_catalog');
$bg->query_safe('ALTER TABLE public.p ADD COLUMN a int');
is($bg->query_safe($pcheck), 'CREATE INDEX p_p ON public.p USING btree (p)|true',
	'point index of a default class that takes no options: plain');
$node->safe_psql('app',
	'ALTER OPERATOR FAMILY public.m_point_ops USING btree ADD FUNCTION 5 (point, point) gtsvector_options(internal)');
$node->safe_psql('app', 'CREATE INDEX p_siglen ON public.p (p public.m_point_ops (siglen = 100))');
$bg->query_safe('ALTER TABLE public.p ADD COLUMN b int');
is( $bg->query_safe($pcheck),
	'CREATE INDEX p_p ON public.p USING btree (p)|true / '
	  . q{CREATE INDEX p_siglen ON public.p USING btree (p public.m_point_ops (siglen='100'))|true},
	'its family given an options function by another session: the new index\'s siglen printed');
$bg->quit;

$node->stop;
done_testing();
