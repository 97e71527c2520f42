--
-- 047_index_definitions: the "definition" of each index in a relation image
-- is pg_get_indexdef()'s text, byte for byte, whichever way relimage.c
-- printed it (issue 38): a plain index on columns is printed without
-- ruleutils, anything else by pg_get_indexdef; a definition taken over from
-- "before" into "after" follows what changed in between (a renamed index,
-- column, table or schema).
--
-- Each check compares the "after" image of the last row of a relation with
-- pg_get_indexdef() of the same indexes now, and prints the definitions.
-- Catches: a plain definition that forgets what makes an index not plain
-- (an operator class, a collation, DESC, NULLS FIRST, INCLUDE, NULLS NOT
-- DISTINCT, WITH (...); test/mutations/images_index_plain_any_opclass.patch)
-- or a per-column option (siglen of the default operator class, which
-- "before" learns from one scan of pg_attribute for all the indexes, made
-- when an index's operator class takes options, and "after" of a new index
-- from its own rows; test/mutations/images_index_plain_any_options.patch,
-- test/mutations/images_opclass_options_unseen.patch),
-- definitions reused from "before" without the check that nothing they
-- print changed (test/mutations/images_index_reused_unchecked.patch), and
-- a default operator class remembered from an earlier statement after a
-- class of its type was made or dropped (test/mutations/
-- images_opclass_memo_kept.patch: the memo's invalidation dropped).
--
-- (quiet: whether it is there already depends on the files run before)
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
RESET client_min_messages;

-- the indexes of the last "after" image of a relation (an ALTER INDEX's
-- row carries its table's): name, whether the image's
-- definition is pg_get_indexdef()'s now, and the definition
CREATE FUNCTION pg_temp.idx(rel regclass)
RETURNS TABLE (name text, same boolean, definition text)
LANGUAGE sql AS $$
	SELECT i->>'name', i->>'definition' = pg_get_indexdef(ix.indexrelid), i->>'definition'
	FROM ddl_notify.event e,
		 jsonb_array_elements(e.details->'after'->'indexes') i
		 LEFT JOIN pg_index ix ON ix.indrelid = rel
			AND (SELECT relname FROM pg_class WHERE oid = ix.indexrelid) = i->>'name'
	WHERE e.id = (SELECT max(id) FROM ddl_notify.event, pg_class c, pg_namespace n
				  WHERE c.oid = rel AND n.oid = c.relnamespace
					AND details->'after'->>'name' = c.relname
					AND details->'after'->>'schema' = n.nspname)
	ORDER BY 1
$$;

CREATE SCHEMA "Idx Schema";
CREATE DOMAIN "Idx Schema".small AS int;
CREATE TABLE "Idx Schema"."Idx Table" (
	a int,
	"Mixed Col" text,
	v varchar(20),
	c text COLLATE "C",
	d "Idx Schema".small,
	n numeric,
	p point,
	arr int[],
	"select" int,
	tsv tsvector
);
-- plain ones
CREATE INDEX ON "Idx Schema"."Idx Table" (a);
CREATE UNIQUE INDEX "Idx Unique" ON "Idx Schema"."Idx Table" (a, "Mixed Col");
CREATE INDEX idx_v ON "Idx Schema"."Idx Table" (v);
CREATE INDEX idx_c ON "Idx Schema"."Idx Table" (c);
CREATE INDEX idx_d ON "Idx Schema"."Idx Table" (d);
CREATE INDEX idx_kw ON "Idx Schema"."Idx Table" ("select", n);
CREATE INDEX idx_incl ON "Idx Schema"."Idx Table" (a) INCLUDE (v, "Mixed Col");
CREATE UNIQUE INDEX idx_nnd ON "Idx Schema"."Idx Table" (n) NULLS NOT DISTINCT;
CREATE INDEX idx_hash ON "Idx Schema"."Idx Table" USING hash (a);
CREATE INDEX idx_brin ON "Idx Schema"."Idx Table" USING brin (a);
CREATE INDEX idx_gin ON "Idx Schema"."Idx Table" USING gin (arr);
CREATE INDEX idx_gist ON "Idx Schema"."Idx Table" USING gist (p);
-- not plain: printed by pg_get_indexdef
CREATE INDEX idx_ops ON "Idx Schema"."Idx Table" ("Mixed Col" text_pattern_ops);
CREATE INDEX idx_coll ON "Idx Schema"."Idx Table" ("Mixed Col" COLLATE "C");
CREATE INDEX idx_coll_same ON "Idx Schema"."Idx Table" (c COLLATE "C");
CREATE INDEX idx_desc ON "Idx Schema"."Idx Table" (a DESC, n NULLS FIRST);
CREATE INDEX idx_expr ON "Idx Schema"."Idx Table" (lower("Mixed Col"));
CREATE INDEX idx_part ON "Idx Schema"."Idx Table" (a) WHERE a > 0;
CREATE INDEX idx_with ON "Idx Schema"."Idx Table" (a) WITH (fillfactor = 70);
CREATE INDEX idx_siglen ON "Idx Schema"."Idx Table" USING gist (tsv tsvector_ops (siglen = 100));
SELECT * FROM pg_temp.idx('"Idx Schema"."Idx Table"') WHERE name = 'idx_siglen';
ALTER TABLE "Idx Schema"."Idx Table" ADD COLUMN extra int;
SELECT * FROM pg_temp.idx('"Idx Schema"."Idx Table"');

-- what "after" takes over from "before" follows what changed
ALTER INDEX "Idx Schema".idx_v RENAME TO "idx V renamed";
SELECT * FROM pg_temp.idx('"Idx Schema"."Idx Table"') WHERE NOT same OR name LIKE 'idx V%';
ALTER TABLE "Idx Schema"."Idx Table" RENAME COLUMN "Mixed Col" TO "mixed col 2";
SELECT * FROM pg_temp.idx('"Idx Schema"."Idx Table"') WHERE NOT same OR definition LIKE '%mixed col 2%';
ALTER TABLE "Idx Schema"."Idx Table" RENAME TO idx_table;
SELECT count(*) AS indexes, bool_and(same) AS all_same FROM pg_temp.idx('"Idx Schema".idx_table');
ALTER TABLE "Idx Schema".idx_table SET SCHEMA public;
SELECT count(*) AS indexes, bool_and(same) AS all_same FROM pg_temp.idx('public.idx_table');
SELECT definition FROM pg_temp.idx('public.idx_table') WHERE name = 'idx_nnd';
ALTER TABLE idx_table ALTER COLUMN a TYPE bigint;
SELECT count(*) AS indexes, bool_and(same) AS all_same FROM pg_temp.idx('public.idx_table');
ALTER TABLE idx_table ADD PRIMARY KEY (a);
SELECT * FROM pg_temp.idx('public.idx_table') WHERE NOT same OR name LIKE '%pkey';

-- the default operator classes relimage.c remembers across statements
-- (G2: "after" says what the relation is; the memo is forgotten on
-- every change to pg_opclass, pg_cast or pg_type,
-- test/mutations/images_opclass_memo_kept.patch): varchar's default btree
-- class was text_ops (binary coercible) when the images above were read;
-- a default class of varchar's own makes idx_v's text_ops printed, and
-- dropping it makes it the default again, each in the next statement of
-- this session
CREATE OPERATOR CLASS idx_varchar_ops DEFAULT FOR TYPE varchar USING btree AS
	OPERATOR 1 < (text, text), OPERATOR 2 <= (text, text), OPERATOR 3 = (text, text),
	OPERATOR 4 >= (text, text), OPERATOR 5 > (text, text), FUNCTION 1 bttextcmp(text, text);
ALTER TABLE idx_table ADD COLUMN extra2 int;
SELECT * FROM pg_temp.idx('public.idx_table') WHERE NOT same OR name LIKE 'idx V%';
DROP OPERATOR FAMILY idx_varchar_ops USING btree;
ALTER TABLE idx_table ADD COLUMN extra3 int;
SELECT * FROM pg_temp.idx('public.idx_table') WHERE NOT same OR name LIKE 'idx V%';

DROP TABLE idx_table;
DROP SCHEMA "Idx Schema" CASCADE;
