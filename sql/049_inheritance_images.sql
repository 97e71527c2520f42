--
-- 049_inheritance_images: G2 and G15 (their payload) for inheritance and
-- typed tables (issue 36: the stream rebuilds a real schema).
-- docs/reference.md, "The payload".  expected/049_inheritance_images_1.out
-- is PostgreSQL 18 and later's, where a column's NOT NULL is a constraint
-- of its own: DROP NOT NULL on a parent also drops it, and its children's,
-- as sql_drop rows.
--
-- A table's image names its INHERITS parents ("inherits": schema and name
-- of each, in pg_inherits' inhseqno order) and a typed table's type
-- ("of_type"), read from the catalogs whatever the search_path; a child's
-- column or CHECK constraint it only inherits (attislocal, conislocal
-- false) says "inherited": true, which a consumer needs to create the child
-- with its own columns only (as pg_dump prints it):
-- - CREATE TABLE ... INHERITS (one parent, two parents; a column both local
--   and inherited is not flagged);
-- - ALTER TABLE ... INHERIT / NO INHERIT: "set inherits", and the columns
--   NO INHERIT leaves local;
-- - an ALTER TABLE on a parent that recurses to its children (ADD COLUMN,
--   ALTER TYPE, ADD CONSTRAINT, DROP COLUMN): the parent's row only, as
--   PostgreSQL reports it; the child's next image shows what it inherited;
-- - CREATE TABLE ... OF type, ALTER TABLE ... NOT OF / OF: "set of type";
-- - a partition has "partition_of", never "inherits", and no column or
--   constraint flagged.
-- Catches: relimage.c reading a partition's parent into "inherits"
-- (test/mutations/images_partition_inherits.patch), a column flagged for
-- having a parent at all instead of for having no definition of its own
-- (attislocal; test/mutations/images_inherited_by_count.patch).
--
-- (quiet: whether it is there already depends on the files run before)
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
RESET client_min_messages;

CREATE SCHEMA inh_s;
SET search_path = inh_s, public;

-- the columns and constraints of an image, one line each
CREATE FUNCTION pg_temp.shape(img jsonb)
RETURNS TABLE (what text, name text, inherited boolean, detail text)
LANGUAGE sql AS $$
	SELECT 'column', c->>'name', (c->>'inherited')::boolean,
		   concat_ws(' ', c->>'type', CASE WHEN (c->>'not_null')::boolean THEN 'not null' END)
	FROM jsonb_array_elements(img->'columns') c
	UNION ALL
	SELECT 'constraint', c->>'name', (c->>'inherited')::boolean, c->>'definition'
	FROM jsonb_array_elements(img->'constraints') c
$$;

SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset

--
-- 1. INHERITS, INHERIT, NO INHERIT
--
CREATE TABLE inh_a (a int NOT NULL, CONSTRAINT a_pos CHECK (a > 0));
CREATE TABLE inh_b (b int);
CREATE TABLE inh_c (c int, b int) INHERITS (inh_a);
CREATE TABLE inh_d () INHERITS (inh_b, inh_a);
ALTER TABLE inh_c INHERIT inh_b;
ALTER TABLE inh_d NO INHERIT inh_b;
ALTER TABLE inh_c NO INHERIT inh_a;
SELECT command_tag, object_identity, details->'changes' AS changes,
	   details->'after'->'inherits' AS after
FROM ddl_notify.event WHERE id > :last AND details ? 'after' ORDER BY id;
-- inh_c as created: a only inherited, b both local and (later) inherited
SELECT s.* FROM ddl_notify.event e, pg_temp.shape(e.details->'after') s
WHERE e.id > :last AND e.command_tag = 'CREATE TABLE'
	AND e.object_identity = 'inh_s.inh_c';
-- inh_c after NO INHERIT inh_a: a and a_pos are its own now
SELECT s.* FROM ddl_notify.event e, pg_temp.shape(e.details->'after') s
WHERE e.id = (SELECT max(id) FROM ddl_notify.event WHERE object_identity = 'inh_s.inh_c');
-- inh_d: a from inh_a only, b its own since NO INHERIT inh_b
SELECT s.* FROM ddl_notify.event e, pg_temp.shape(e.details->'after') s
WHERE e.id = (SELECT max(id) FROM ddl_notify.event WHERE object_identity = 'inh_s.inh_d');

--
-- 2. an ALTER TABLE that recurses to children: the parent's row only
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE inh_a ADD COLUMN x text;
ALTER TABLE inh_a ALTER COLUMN x TYPE varchar(10);
ALTER TABLE inh_a ADD CONSTRAINT x_short CHECK (length(x) < 5);
ALTER TABLE inh_a ADD COLUMN y int, ALTER COLUMN a DROP NOT NULL;
ALTER TABLE inh_a DROP COLUMN y;
-- (a rewrite is reported for each table it rewrites, a dropped column of
-- each table it went from)
SELECT trigger_event, object_type, object_identity, details->'changes' AS changes
FROM ddl_notify.event WHERE id > :last ORDER BY id;
-- inh_d's next image: x and x_short inherited, y gone
ALTER TABLE inh_d SET (fillfactor = 50);
SELECT s.* FROM ddl_notify.event e, pg_temp.shape(e.details->'after') s
WHERE e.id = (SELECT max(id) FROM ddl_notify.event WHERE object_identity = 'inh_s.inh_d');

--
-- 3. typed tables
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TYPE inh_t AS (x int, y text);
CREATE TABLE inh_typed OF inh_t;
ALTER TABLE inh_typed NOT OF;
ALTER TABLE inh_typed OF inh_t;
SELECT command_tag, object_identity, details->'changes' AS changes,
	   details->'after'->'of_type' AS after
FROM ddl_notify.event WHERE id > :last AND details ? 'after'
	AND object_type = 'table' ORDER BY id;

--
-- 4. a partition has partition_of, not inherits, and nothing flagged
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE inh_p (k int, CONSTRAINT k_pos CHECK (k > 0)) PARTITION BY LIST (k);
CREATE TABLE inh_p1 PARTITION OF inh_p FOR VALUES IN (1);
SELECT command_tag, object_identity, details->'after' ? 'inherits' AS has_inherits,
	   details->'after'->'partition_of' AS partition_of,
	   details->'after' @? '$.columns[*].inherited' OR
	   details->'after' @? '$.constraints[*].inherited' AS flagged
FROM ddl_notify.event WHERE id > :last AND details ? 'after' ORDER BY id;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA inh_s CASCADE;
RESET client_min_messages;
