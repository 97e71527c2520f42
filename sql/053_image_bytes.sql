--
-- 053_image_bytes: G2 (its payload): the images of a relation past
-- jsonb's offset stride (more than 32 columns and 32 indexes) read back
-- from the stored details: every column and index there, each of its keys
-- found, the details equal to themselves printed and parsed again.
--
-- The details are written by ddl_notify's own jsonb writer (common.c,
-- DdlnJvToJsonb), not PostgreSQL's; an "after" image's columns, indexes and
-- constraints that did not change are its "before"'s, written once and
-- copied (relimage.c, DdlnImgImageValue).  A build with -DDDLN_CHECK_JSONB
-- (or assertions) also compares every byte with JsonbValueToJsonb's; this
-- file checks what a reader of an ordinary build sees.
-- Catches: an end offset written without its flag at every 32nd child
-- (test/mutations/jsonb_stride_offset_unflagged.patch), an object copied
-- where it is not int-aligned (jsonb_copy_unaligned.patch), and a column
-- of "after" taken from "before" when its default changed
-- (images_shared_column_default.patch).
--
-- Only the event of the statement just run is read: "last" is the highest
-- id before it (\gset).  Every output is a count, a name or a boolean: the
-- same on every PostgreSQL version.
--
-- (quiet: whether it is there already depends on the files run before)
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
RESET client_min_messages;

-- 40 columns (names of odd and even lengths: the numerics after them are
-- padded or not), a primary key, a CHECK, 35 indexes of one column
DO $$
BEGIN
	EXECUTE 'CREATE TABLE ib (' ||
		(SELECT string_agg(format('c%s%s int', i, repeat('x', i % 3)), ', ' ORDER BY i)
		 FROM generate_series(1, 40) i) ||
		', PRIMARY KEY (c1x), CHECK (c2xx > 0))';
	FOR i IN 1..35 LOOP
		EXECUTE format('CREATE INDEX ib_i%s ON ib (c%s%s)', i, i, repeat('x', i % 3));
	END LOOP;
END
$$;

--
-- 1. ADD COLUMN: "after" is "before" and one column more
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE ib ADD COLUMN extra text DEFAULT 'e';
CREATE TEMPORARY TABLE d AS
SELECT details FROM ddl_notify.event
WHERE id > :last AND trigger_event = 'ddl_command_end' AND command_tag = 'ALTER TABLE';
SELECT count(*) FROM d;
SELECT jsonb_array_length(details->'before'->'columns') AS columns_before,
	   jsonb_array_length(details->'after'->'columns') AS columns_after,
	   jsonb_array_length(details->'before'->'indexes') AS indexes_before,
	   jsonb_array_length(details->'after'->'indexes') AS indexes_after,
	   jsonb_array_length(details->'after'->'constraints') AS constraints_after
FROM d;
-- the unchanged parts, equal; the details, equal to their text parsed again
SELECT details->'before'->'columns' = (details->'after'->'columns') - -1 AS same_columns,
	   details->'before'->'indexes' = details->'after'->'indexes' AS same_indexes,
	   details->'before'->'constraints' = details->'after'->'constraints' AS same_constraints,
	   details = details::text::jsonb AS same_reparsed,
	   details->'after' = (details->'after')::text::jsonb AS after_reparsed,
	   jsonb_array_length(details->'changes') AS changes,
	   details->'changes'->0->'column'->>'name' AS added
FROM d;
-- each element by position, past the 32nd, and its keys
SELECT i, details->'after'->'columns'->i->>'name' AS name,
	   details->'after'->'columns'->i->'attnum' AS attnum,
	   details->'after'->'columns'->i->>'type' AS type,
	   details->'after'->'indexes'->i->>'name' AS index
FROM d, unnest(ARRAY[0, 1, 31, 32, 33, 34, 35, 39, 40]) i
ORDER BY i;
-- every column: its attnum and name agree, in both images
SELECT count(*) FILTER (WHERE (c->>'attnum')::int = n AND c->>'name' LIKE 'c' || n || '%') AS before_ok
FROM d, jsonb_array_elements(details->'before'->'columns') WITH ORDINALITY AS a(c, n);
SELECT count(*) FILTER (WHERE (c->>'attnum')::int = n) AS after_ok
FROM d, jsonb_array_elements(details->'after'->'columns') WITH ORDINALITY AS a(c, n);
-- containment, and jsonpath over the images
SELECT details @> '{"after": {"columns": [{"name": "c33", "attnum": 33, "type": "integer"}]}}' AS has_c33,
	   details @> '{"before": {"indexes": [{"name": "ib_i35", "constraint": null}]}}' AS has_i35,
	   details->'after' @> '{"columns": [{"name": "extra", "attnum": 41, "default": "''e''::text"}]}' AS has_extra,
	   details @> '{"before": {"columns": [{"name": "extra"}]}}' AS before_has_extra
FROM d;
SELECT jsonb_path_query(details, '$.after.columns[*] ? (@.attnum > 38).name') AS name
FROM d;
SELECT jsonb_path_query(details, '$.after.indexes[*] ? (@.name like_regex "^ib_i3[2-5]$").definition') AS definition
FROM d;
SELECT jsonb_path_query(details, '$.before.columns.size()') AS before_size,
	   jsonb_path_query(details, '$.after.columns[40].attnum') AS last_attnum
FROM d;
DROP TABLE d;

--
-- 2. SET DEFAULT of one column: that column differs, no other
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE ib ALTER COLUMN c34x SET DEFAULT 34;
CREATE TEMPORARY TABLE d AS
SELECT details FROM ddl_notify.event
WHERE id > :last AND trigger_event = 'ddl_command_end' AND command_tag = 'ALTER TABLE';
SELECT array_agg(i ORDER BY i) AS differing,
	   bool_and(details = details::text::jsonb) AS same_reparsed
FROM d, generate_series(0, 40) i
WHERE details->'before'->'columns'->i IS DISTINCT FROM details->'after'->'columns'->i;
SELECT details->'before'->'columns'->33->>'default' AS before_default,
	   details->'after'->'columns'->33->>'default' AS after_default,
	   details->'after'->'columns'->32->>'default' AS neighbour_default,
	   details->'changes'->0->>'op' AS op, jsonb_array_length(details->'changes') AS changes
FROM d;
DROP TABLE d;

DROP TABLE ib;
