--
-- 002_capture_extension: G2 (complete capture) around extensions, temporary
-- objects, roles and settings; G1 for DROP/CREATE EXTENSION ddl_notify.
--
-- G2: another extension's objects are recorded with in_extension = true
--     (CREATE EXTENSION, ALTER EXTENSION UPDATE, DROP EXTENSION), their query
--     being the script's statement; the extension's own objects never are
--     (COMMENT, GRANT, ALTER on them, triggers, policies and rules on its
--     tables, anything created in schema ddl_notify), and a GRANT naming one
--     of them and a user table records only the latter; temporary objects
--     (and the triggers, policies and rules of temporary tables) leave
--     nothing unless ddl_notify.capture_temp is on, and then are recorded
--     under schema pg_temp;
--     ddl_notify.capture_query = off leaves query NULL on every kind of row;
--     DDL of a role that cannot write ddl_notify.event is recorded under that
--     role's name; session_replication_role = replica does not stop capture.
-- G1: a rolled-back DROP EXTENSION ddl_notify keeps the rows and the capture;
--     DROP EXTENSION + CREATE EXTENSION ddl_notify works twice in one session
--     (once inside one transaction), records nothing of its own and captures
--     the next DDL in the new table.
--
-- Only the rows a block produced are shown ("last" is the highest id before
-- the block, \gset); ids, xids, timestamps and OIDs are never printed.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
SELECT count(*) AS events_after_create_extension FROM ddl_notify.event;

CREATE FUNCTION pg_temp.ev(since bigint)
RETURNS TABLE (trigger_event text, command_tag text, object_type text, schema_name text,
			   object_identity text, objsubid int, in_extension bool, query text, details jsonb)
LANGUAGE sql AS $$
	SELECT trigger_event, command_tag, object_type, schema_name, object_identity, objsubid,
		   in_extension, query, nullif(details - '{before,after,changes,statement}'::text[], '{}')
	FROM ddl_notify.event WHERE id > since
	-- the relation images ("before", "after", "changes") are left out:
	-- 040_relation_images shows them
	-- NOT NULL constraints, catalogued from PostgreSQL 18 on (each dropped
	-- one is a row, as any constraint), are left out: 003_not_null shows them
	  AND NOT (object_type = 'table constraint' AND object_identity LIKE '%\_not\_null on %')
	ORDER BY id
$$;

CREATE ROLE regress_ddln_user NOLOGIN;

--
-- Another extension: its objects have in_extension = true
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE SCHEMA ext;
CREATE EXTENSION citext VERSION '1.5' SCHEMA ext;
SELECT command_tag, object_type, schema_name, in_extension, count(*)
FROM ddl_notify.event WHERE id > :last
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
-- the rows are the script's statements (shown without the comments before
-- them: a statement's text includes them up to 17, not from 18 on)
SELECT command_tag, object_identity, in_extension,
	   regexp_replace(regexp_replace(query, '^(\s|--[^\n]*\n|/\*([^*]|\*[^/])*\*/)*', ''), '\s+', ' ', 'g') AS query
FROM ddl_notify.event
WHERE id > :last
  AND object_identity IN ('ext.citextout(ext.citext)', 'ext.citext', 'citext', 'ext')
ORDER BY id;
-- every member of the extension has a row, and every row of the script
-- says in_extension; not counted: the array type PostgreSQL makes with a
-- type (citext[]), a member from 17 on, which has no statement of its own
-- (the CREATE TYPE row names the type)
SELECT count(*) AS members,
	   count(*) FILTER (WHERE NOT EXISTS (
		   SELECT FROM ddl_notify.event e
		   WHERE e.id > :last AND e.classid = d.classid AND e.objid = d.objid AND e.in_extension))
	   AS members_not_recorded
FROM pg_depend d JOIN pg_extension x ON d.refobjid = x.oid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND x.extname = 'citext'
  AND NOT EXISTS (SELECT FROM pg_type t WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
				  AND t.typcategory = 'A');
SELECT count(*) AS rows_not_in_extension FROM ddl_notify.event
WHERE id > :last AND NOT in_extension AND command_tag NOT IN ('CREATE SCHEMA', 'CREATE EXTENSION');

SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER EXTENSION citext UPDATE TO '1.6';
ALTER EXTENSION citext SET SCHEMA public;
COMMENT ON FUNCTION citext_hash_extended(citext, int8) IS 'not in the script';
SELECT trigger_event, command_tag, object_type, schema_name, object_identity, in_extension,
	   regexp_replace(regexp_replace(query, '^(\s|--[^\n]*\n|/\*([^*]|\*[^/])*\*/)*', ''), '\s+', ' ', 'g') AS query
FROM ddl_notify.event WHERE id > :last ORDER BY id;

-- a user table using the extension's type, then DROP EXTENSION CASCADE
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE ci (name citext);
DROP EXTENSION citext CASCADE;
SELECT trigger_event, command_tag, object_type, details->'original' AS original,
	   details->'cascaded' AS cascaded, count(*)
FROM ddl_notify.event WHERE id > :last
GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;
SELECT object_type, object_identity, details->'original' AS original
FROM ddl_notify.event
WHERE id > :last AND object_type IN ('extension', 'type', 'table column', 'table')
ORDER BY id;
DROP SCHEMA ext;

--
-- The extension's own objects are not recorded
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
COMMENT ON TABLE ddl_notify.event IS 'changed by a test';
COMMENT ON EXTENSION ddl_notify IS 'changed by a test';
COMMENT ON FUNCTION ddl_notify.unsubscribe(text) IS 'changed by a test';
GRANT SELECT ON ddl_notify.event TO regress_ddln_user;
REVOKE SELECT ON ddl_notify.event FROM regress_ddln_user;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_user;
REVOKE USAGE ON SCHEMA ddl_notify FROM regress_ddln_user;
GRANT SELECT ON ALL TABLES IN SCHEMA ddl_notify TO regress_ddln_user;
REVOKE SELECT ON ALL TABLES IN SCHEMA ddl_notify FROM regress_ddln_user;
ALTER TABLE ddl_notify.dead_letter ALTER COLUMN error SET STATISTICS 100;
CREATE TABLE ddl_notify.user_table (a int);
DROP TABLE ddl_notify.user_table;
SELECT count(*) AS own_object_rows FROM ddl_notify.event WHERE id > :last;
-- nor triggers, policies and rules on its tables (which have no schema of their own)
CREATE FUNCTION trg_fn() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TRIGGER own_trg BEFORE INSERT ON ddl_notify.dead_letter FOR EACH ROW EXECUTE FUNCTION trg_fn();
CREATE POLICY own_pol ON ddl_notify.dead_letter USING (true);
CREATE RULE own_rule AS ON DELETE TO ddl_notify.dead_letter DO ALSO NOTIFY dead_letter_deleted;
COMMENT ON TRIGGER own_trg ON ddl_notify.dead_letter IS 'changed by a test';
DROP TRIGGER own_trg ON ddl_notify.dead_letter;
DROP POLICY own_pol ON ddl_notify.dead_letter;
DROP RULE own_rule ON ddl_notify.dead_letter;
SELECT * FROM pg_temp.ev(:last);
-- a GRANT naming one of them and a user table: only the user table
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE mixed (a int);
GRANT SELECT ON ddl_notify.subscriber, mixed TO regress_ddln_user;
SELECT * FROM pg_temp.ev(:last);

--
-- Temporary objects: nothing unless ddl_notify.capture_temp is on
--
SHOW ddl_notify.capture_temp;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TEMP TABLE tmp1 (id serial PRIMARY KEY, a int);
CREATE INDEX tmp1_a_idx ON tmp1 (a);
ALTER TABLE tmp1 ADD COLUMN b int;
ALTER TABLE tmp1 ALTER COLUMN a TYPE bigint USING a;
CREATE TEMP VIEW tmpv AS SELECT id, a FROM tmp1;
COMMENT ON TABLE tmp1 IS 'temporary';
GRANT SELECT ON tmp1 TO regress_ddln_user;
CREATE TEMP SEQUENCE tmps;
CREATE FUNCTION pg_temp.tf() RETURNS int LANGUAGE sql AS 'SELECT 1';
-- triggers, policies and rules of a temporary table (no schema of their own)
CREATE TRIGGER tmp1_trg BEFORE INSERT ON tmp1 FOR EACH ROW EXECUTE FUNCTION trg_fn();
CREATE POLICY tmp1_pol ON tmp1 USING (true);
CREATE RULE tmp1_rule AS ON DELETE TO tmp1 DO ALSO NOTIFY tmp1_deleted;
COMMENT ON TRIGGER tmp1_trg ON tmp1 IS 'temporary';
DROP RULE tmp1_rule ON tmp1;
DROP VIEW tmpv;
DROP FUNCTION pg_temp.tf();
DROP TABLE tmp1, mixed;
SELECT * FROM pg_temp.ev(:last);

SET ddl_notify.capture_temp = on;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TEMP TABLE tmp2 (id serial PRIMARY KEY, a int);
ALTER TABLE tmp2 ALTER COLUMN a TYPE bigint USING a;
CREATE TEMP VIEW tmpv2 AS SELECT id, a FROM tmp2;
GRANT SELECT ON tmp2 TO regress_ddln_user;
CREATE TRIGGER tmp2_trg BEFORE INSERT ON tmp2 FOR EACH ROW EXECUTE FUNCTION trg_fn();
DROP TABLE tmp2 CASCADE;
DROP SEQUENCE tmps;
SELECT * FROM pg_temp.ev(:last);
RESET ddl_notify.capture_temp;

--
-- ddl_notify.capture_query = off: query is NULL on every kind of row
--
SHOW ddl_notify.capture_query;
SET ddl_notify.capture_query = off;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE cq (a int);
ALTER TABLE cq ALTER COLUMN a TYPE bigint;
GRANT SELECT ON cq TO regress_ddln_user;
DROP TABLE cq;
SELECT * FROM pg_temp.ev(:last);
RESET ddl_notify.capture_query;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE cq_on (a int);
SELECT command_tag, object_identity, query FROM ddl_notify.event WHERE id > :last;
DROP TABLE cq_on;

--
-- A role that cannot read or write ddl_notify.event: its DDL is recorded
-- under its name, and it cannot turn off query capture
--
CREATE SCHEMA user_s AUTHORIZATION regress_ddln_user;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
SET ROLE regress_ddln_user;
SELECT count(*) FROM ddl_notify.event;
INSERT INTO ddl_notify.event (trigger_event, command_tag, role_name) VALUES ('x', 'x', 'x');
SET ddl_notify.capture_query = off;
CREATE TABLE user_s.u1 (id int PRIMARY KEY);
ALTER TABLE user_s.u1 ADD COLUMN b text;
DROP TABLE user_s.u1;
RESET ROLE;
SELECT role_name, trigger_event, command_tag, object_identity, query
FROM ddl_notify.event WHERE id > :last
  AND NOT (object_type = 'table constraint' AND object_identity LIKE '%\_not\_null on %')
ORDER BY id;
DROP SCHEMA user_s;

--
-- session_replication_role = replica does not stop capture (the event
-- triggers are ENABLE ALWAYS)
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
SET session_replication_role = replica;
CREATE TABLE repl1 (a int);
DROP TABLE repl1;
RESET session_replication_role;
SELECT trigger_event, command_tag, object_identity FROM ddl_notify.event WHERE id > :last ORDER BY id;

--
-- G1: a rolled-back DROP EXTENSION ddl_notify keeps the rows and the capture
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
SELECT count(*) AS rows_before FROM ddl_notify.event \gset
BEGIN;
DROP EXTENSION ddl_notify;
CREATE TABLE not_recorded (a int);
ROLLBACK;
SELECT count(*) = :rows_before AS rows_kept FROM ddl_notify.event;
CREATE TABLE after_rollback (a int);
SELECT * FROM pg_temp.ev(:last);
DROP TABLE after_rollback;
-- ... also when that transaction re-created the extension and recorded into
-- its new tables: capture keeps the tables' OIDs per session, and the
-- rollback must make it forget the new ones
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
BEGIN;
DROP EXTENSION ddl_notify;
CREATE EXTENSION ddl_notify;
CREATE TABLE in_new_extension (a int);
SELECT count(*) AS rows_in_new_extension FROM ddl_notify.event;
ROLLBACK;
CREATE TABLE after_rollback2 (a int);
SELECT * FROM pg_temp.ev(:last);
DROP TABLE after_rollback2;

--
-- DROP EXTENSION + CREATE EXTENSION ddl_notify, twice
--
DROP EXTENSION ddl_notify;
-- without the extension, DDL runs and nothing records it
BEGIN;
CREATE TABLE between1 (a int);
DROP TABLE between1;
COMMIT;
CREATE EXTENSION ddl_notify;
SELECT count(*) AS events_after_recreate FROM ddl_notify.event;
CREATE TABLE after1 (a int);
DROP TABLE after1;
SELECT * FROM pg_temp.ev(0);

-- the second cycle in one transaction
BEGIN;
DROP EXTENSION ddl_notify;
CREATE TABLE between2 (a int);
CREATE EXTENSION ddl_notify;
CREATE TABLE after2 (a int);
COMMIT;
SELECT * FROM pg_temp.ev(0);
ALTER TABLE after2 ADD COLUMN b int;
DROP TABLE after2, between2;
SELECT * FROM pg_temp.ev(0);

--
-- Cleanup: the next file starts from scratch
--
DROP FUNCTION trg_fn();
DROP ROLE regress_ddln_user;
DROP EXTENSION ddl_notify;
