
# Copyright (c) 2026, the ddl_notify authors

# 046_opclass_memo.pl: the default operator classes relimage.c remembers
# from one statement to the next (DdlnDefaultOpclass) follow another
# session's change, inside a transaction that holds the locks it needs
# already.
#
# G2: a relation image's index definitions are pg_get_indexdef()'s text.
#     A session's transaction reads the images of a table with a varchar
#     index (varchar's default btree class is text_ops then: the index
#     prints as plain), another session makes a default class of varchar's
#     own and commits, and the first transaction's next ALTER TABLE of the
#     same table prints the index with text_ops, as pg_get_indexdef does in
#     that statement; once the class is dropped, plain again.  Catches: the
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

$node->stop;
done_testing();
