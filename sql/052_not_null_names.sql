--
-- 052_not_null_names: G2 and G15 (their payload) for the names of NOT NULL
-- constraints (issue 36: the stream rebuilds a real schema; a copy made
-- from images without them diverged silently), and G10 for them.
--
-- PostgreSQL 17 records a domain's NOT NULL as a named constraint, 18 a
-- table column's too.  The images carry the name ("not_null_name", of a
-- column or of a domain) only when it is not the one PostgreSQL gives by
-- itself (TABLE_COLUMN_not_null, DOMAIN_not_null): one named by
-- CONSTRAINT, one kept through a rename of its table, column or domain,
-- one taken from another table (LIKE, PARTITION OF).  ALTER TABLE ...
-- RENAME CONSTRAINT of one is the change "rename constraint".  Before 17
-- (domains) and 18 (columns) there is no such name and no key: the
-- outputs differ by version (expected/052_not_null_names.out for 15,
-- _1.out for 17, _2.out for 18 and 19).
-- From 18 on also: whether a column's NOT NULL is NO INHERIT or NOT VALID,
-- and whether a generated column is VIRTUAL (their changes: "set not null
-- inherit", "validate constraint").
-- A subscriber that may not read statement texts gets the names (they are
-- names, not texts).
-- Catches: the name not read into the images
-- (test/mutations/images_not_null_name_unread.patch), a rename of it not
-- diffed (images_not_null_rename_not_diffed.patch), and the key withheld
-- from such a subscriber (imagetexts.c's list without it:
-- images_not_null_name_withheld.patch).
--
-- (quiet: whether it is there already depends on the files run before)
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
RESET client_min_messages;

CREATE SCHEMA nn_s;
SET search_path = nn_s, public;

-- each column's NOT NULL and its name in the last "after" of a relation
-- of nn_s (a RENAME COLUMN's event is the column's: by the image's name)
CREATE FUNCTION pg_temp.nn(rel text)
RETURNS TABLE (name text, not_null boolean, not_null_name text)
LANGUAGE sql AS $$
	SELECT c->>'name', (c->>'not_null')::boolean, c->>'not_null_name'
	FROM (SELECT details->'after' AS img FROM ddl_notify.event
		  WHERE details->'after'->>'schema' = 'nn_s' AND details->'after'->>'name' = rel
		  ORDER BY id DESC LIMIT 1) e,
		 jsonb_array_elements(e.img->'columns') c
	ORDER BY (c->>'attnum')::int
$$;
-- the changes of the events since "since", one per line
CREATE FUNCTION pg_temp.ops(since bigint)
RETURNS TABLE (command_tag text, object_identity text, op jsonb)
LANGUAGE sql AS $$
	SELECT e.command_tag, e.object_identity, c
	FROM ddl_notify.event e, jsonb_array_elements(e.details->'changes') WITH ORDINALITY AS a(c, n)
	WHERE e.id > since AND e.trigger_event = 'ddl_command_end'
	ORDER BY e.id, a.n
$$;

--
-- 1. a table: a default name is not shown, a given one is
--
CREATE TABLE t (a int NOT NULL, b int CONSTRAINT b_nn NOT NULL, c int);
SELECT * FROM pg_temp.nn('t');
-- renames of the table and of a column keep the constraints' names, which
-- are then no longer the default ones
ALTER TABLE t RENAME TO t2;
SELECT * FROM pg_temp.nn('t2');
ALTER TABLE t2 RENAME COLUMN c TO c2;
ALTER TABLE t2 ALTER COLUMN c2 SET NOT NULL;
ALTER TABLE t2 RENAME COLUMN c2 TO c3;
SELECT * FROM pg_temp.nn('t2');

--
-- 2. RENAME CONSTRAINT of a NOT NULL (18 on: there is one to rename)
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DO $$
BEGIN
	IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'nn_s.t2'::regclass AND conname = 'b_nn') THEN
		ALTER TABLE nn_s.t2 RENAME CONSTRAINT b_nn TO b_nn2;
	ELSE
		ALTER TABLE nn_s.t2 ALTER COLUMN b SET STATISTICS -1;	-- an ALTER all the same
	END IF;
END $$;
SELECT command_tag, object_identity FROM ddl_notify.event WHERE id > :last ORDER BY id;
SELECT * FROM pg_temp.ops(:last);
SELECT * FROM pg_temp.nn('t2');

--
-- 3. LIKE and PARTITION OF take the other table's names
--
CREATE TABLE tl (LIKE t2);
SELECT * FROM pg_temp.nn('tl');
CREATE TABLE p (k int NOT NULL, v int) PARTITION BY LIST (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1);
SELECT * FROM pg_temp.nn('p1');
-- its own NOT NULL, in its own name
CREATE TABLE p2 PARTITION OF p (k CONSTRAINT p2_own NOT NULL, v NOT NULL) FOR VALUES IN (2);
SELECT * FROM pg_temp.nn('p2');

--
-- 4. domains (17 on): NOT NULL named, or renamed with its domain
--
CREATE DOMAIN d1 AS int NOT NULL;
CREATE DOMAIN d2 AS int CONSTRAINT d2_nn NOT NULL;
ALTER DOMAIN d1 RENAME TO d1r;
SELECT object_identity, details->'after'->'not_null' AS not_null,
	   details->'after'->>'not_null_name' AS not_null_name
FROM ddl_notify.event
WHERE details->'after'->>'kind' = 'domain' AND details->'after'->>'schema' = 'nn_s'
ORDER BY id;

--
-- 5. 18 on: a NOT NULL that is NO INHERIT or NOT VALID ("not_null_no_inherit",
--    "not_null_not_valid"; ALTER CONSTRAINT ... INHERIT is "set not null
--    inherit", VALIDATE CONSTRAINT "validate constraint"), and a generated
--    column that is VIRTUAL ("virtual"; 18's default kind)
--
CREATE TABLE g (a int, b int GENERATED ALWAYS AS (a * 2) STORED, c int);
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DO $$
BEGIN
	IF current_setting('server_version_num')::int >= 180000 THEN
		-- (EXECUTE: 15 and 17 would not parse them)
		EXECUTE 'ALTER TABLE nn_s.g ADD COLUMN v int GENERATED ALWAYS AS (a * 3) VIRTUAL';
		EXECUTE 'ALTER TABLE nn_s.g ADD CONSTRAINT g_a_ni NOT NULL a NO INHERIT';
		EXECUTE 'ALTER TABLE nn_s.g ADD CONSTRAINT g_c_nv NOT NULL c NOT VALID';
		EXECUTE 'ALTER TABLE nn_s.g ALTER CONSTRAINT g_a_ni INHERIT';
		EXECUTE 'ALTER TABLE nn_s.g VALIDATE CONSTRAINT g_c_nv';
	END IF;
END $$;
SELECT * FROM pg_temp.ops(:last);
SELECT e.id - :last AS n, c->>'name' AS name, c->'virtual' AS virtual,
	   c->'not_null_no_inherit' AS no_inherit, c->'not_null_not_valid' AS not_valid
FROM ddl_notify.event e, jsonb_array_elements(e.details->'after'->'columns') c
WHERE e.id > :last AND e.trigger_event = 'ddl_command_end'
  AND (c ? 'virtual' OR c ? 'not_null_no_inherit' OR c ? 'not_null_not_valid')
ORDER BY e.id, c->>'name';

--
-- 6. What a subscriber that may not read statement texts gets: the names
--
SET client_min_messages = warning;
CREATE ROLE regress_ddln_nn_app;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_nn_app;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
						  ddl_notify.unsubscribe(text) TO regress_ddln_nn_app;
CREATE SCHEMA nn_app AUTHORIZATION regress_ddln_nn_app;
CREATE TABLE public.nn_got (n serial, id bigint, details jsonb);
GRANT INSERT ON public.nn_got TO PUBLIC;
GRANT USAGE ON SEQUENCE public.nn_got_n_seq TO PUBLIC;
SET ROLE regress_ddln_nn_app;
CREATE FUNCTION nn_app.h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.nn_got (id, details) VALUES (e.id, e.details) $$;
SELECT ddl_notify.subscribe('nn_app', 'nn_app.h(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
RESET client_min_messages;
CREATE TABLE nn_t (a int CONSTRAINT nn_t_given NOT NULL DEFAULT 42);
CREATE DOMAIN nn_d AS int CONSTRAINT nn_d_given NOT NULL;
CALL ddl_notify.deliver();
SELECT details->'texts_withheld' AS texts_withheld,
	   coalesce(details->'after'->'columns'->0->>'not_null_name',
				details->'after'->>'not_null_name') AS not_null_name,
	   details->'after'->'columns'->0->'default' AS col_default
FROM public.nn_got ORDER BY id;

-- clean up
SELECT ddl_notify.unsubscribe('nn_app');
SET client_min_messages = warning;
DROP SCHEMA nn_s CASCADE;
DROP SCHEMA nn_app CASCADE;
DROP TABLE public.nn_got;
REVOKE ALL ON SCHEMA ddl_notify FROM regress_ddln_nn_app;
REVOKE ALL ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
					   ddl_notify.unsubscribe(text) FROM regress_ddln_nn_app;
DROP ROLE regress_ddln_nn_app;
RESET client_min_messages;
