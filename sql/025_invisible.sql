--
-- 025_invisible: installing ddl_notify changes no result, error or notice of
-- any other statement
--
-- Proves:
-- G0  GRANT and REVOKE on a large object work as without the extension.
--     Catches: capture naming a large object by pg_largeobject_metadata
--     (DdlnGrantClassId in src/capture.c), which made PostgreSQL's object
--     address functions fail with "unrecognized object class: 2995" and
--     rolled the user's GRANT back.
-- G2  ... and are recorded, one row per large object, under the address
--     PostgreSQL itself gives a large object (pg_largeobject, as COMMENT ON
--     LARGE OBJECT reports it).
-- G0  lastval() after DDL is the user's: the last value of the user's own
--     sequence, "not yet defined" in a session that used none, an error once
--     that sequence is dropped; a role without any right on ddl_notify's
--     sequences gets its own lastval() after its own DDL, not "permission
--     denied for sequence event_id_seq"; subscribe() and CALL
--     ddl_notify.deliver() (which writes a dead letter here) leave it alone
--     too.  Catches: capture drawing event ids and commit positions with
--     nextval_internal() (src/capture.c), and subscribe() or the engine
--     letting the identity columns of ddl_notify.subscriber/dead_letter draw
--     their ids (src/subscriber.c, src/deliver.c): each makes one of
--     ddl_notify's sequences the session's lastval().
-- G4/G5 (part) event ids and commit positions drawn by src/counter.c keep
--     increasing, across transactions and with nextval()/setval() on the
--     same sequences in between.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;

-- large objects: GRANT/REVOKE succeed and are recorded
SELECT lo_create(42);
GRANT SELECT ON LARGE OBJECT 42 TO PUBLIC;
REVOKE SELECT ON LARGE OBJECT 42 FROM PUBLIC;
COMMENT ON LARGE OBJECT 42 IS 'forty-two';
SELECT command_tag, object_type, object_identity, classid::regclass, objid, objsubid,
	   details->'grant' AS grant, details->'privileges' AS privileges
FROM ddl_notify.event WHERE object_type = 'large object' ORDER BY id;
-- the same class as PostgreSQL's own description of the object
SELECT DISTINCT pg_describe_object(classid, objid, objsubid)
FROM ddl_notify.event WHERE object_type = 'large object';
SELECT lo_unlink(42);

-- lastval(): the user's own sequence, untouched by the DDL in between
CREATE SEQUENCE s_g0 START 101;
SELECT nextval('s_g0');
CREATE TABLE t_g0 (a int);
SELECT lastval();
ALTER TABLE t_g0 ADD COLUMN b int;
DROP TABLE t_g0;
SELECT lastval();
-- a DDL transaction with several statements, committed
BEGIN;
CREATE TABLE t_g0 (a int);
CREATE INDEX ON t_g0 (a);
COMMIT;
SELECT lastval(), currval('s_g0');
-- subscribe() and a delivery round in this session, with a dead letter,
-- change nothing either (subscriber and dead_letter ids are identities)
CREATE FUNCTION g0_handler(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION g0_fail(e ddl_notify.event) RETURNS void LANGUAGE plpgsql
	AS $$ BEGIN RAISE EXCEPTION 'g0_fail refuses %', e.object_identity; END $$;
SELECT ddl_notify.subscribe('g0', 'g0_handler(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('g0_dead', 'g0_fail(ddl_notify.event)', max_attempts => 1) > 0 AS subscribed;
SELECT lastval();
CREATE TABLE t_g0_2 ();
CALL ddl_notify.deliver();
SELECT lastval();
SELECT name, pending, delivered, dead_letters FROM ddl_notify.subscriber_status
WHERE name LIKE 'g0%' ORDER BY name;
-- the sequence is gone: lastval() fails as PostgreSQL's does
DROP SEQUENCE s_g0;
SELECT lastval();
DROP TABLE t_g0_2;
SELECT lastval();

-- a session that used no sequence: "not yet defined", after DDL too
\c
CREATE TABLE t_g0_3 ();
SELECT lastval();
DROP TABLE t_g0_3;

-- a role without any right on ddl_notify's sequences
CREATE ROLE ddln_g0_user;
GRANT CREATE ON SCHEMA public TO ddln_g0_user;
SET ROLE ddln_g0_user;
CREATE TABLE t_g0_user (a int);
SELECT lastval();
CREATE SEQUENCE s_g0_user START 7;
SELECT nextval('s_g0_user');
ALTER TABLE t_g0_user ADD COLUMN b int;
SELECT lastval();
DROP TABLE t_g0_user;
DROP SEQUENCE s_g0_user;
RESET ROLE;
SELECT role_name, command_tag, object_identity FROM ddl_notify.event
WHERE role_name = 'ddln_g0_user' ORDER BY id;

-- ids and positions keep increasing, also when nextval()/setval() are
-- called on the same sequences in between (the state is the sequence's page)
SELECT max(id) AS max_id FROM ddl_notify.event \gset
SELECT max(pos) AS max_pos FROM ddl_notify.commit_order \gset
SELECT nextval('ddl_notify.event_id_seq') > :max_id AS nextval_above;
CREATE TABLE t_g0_4 ();
SELECT id > :max_id + 1 AS id_above, id = currval('ddl_notify.event_id_seq') + 1 AS next_after_nextval
FROM ddl_notify.event WHERE object_identity = 'public.t_g0_4';
SELECT setval('ddl_notify.event_id_seq', :max_id + 1000) IS NOT NULL AS set;
DROP TABLE t_g0_4;
SELECT id = :max_id + 1001 AS after_setval FROM ddl_notify.event
WHERE object_identity = 'public.t_g0_4' AND command_tag = 'DROP TABLE';
SELECT count(*) > 0 AS positions, min(pos) > :max_pos AS positions_above
FROM ddl_notify.commit_order WHERE pos > :max_pos;
SELECT count(*) = count(DISTINCT id) AS ids_unique FROM ddl_notify.event;

SELECT ddl_notify.unsubscribe('g0'), ddl_notify.unsubscribe('g0_dead');
DROP FUNCTION g0_handler(ddl_notify.event), g0_fail(ddl_notify.event);
DROP TABLE t_g0;
REVOKE CREATE ON SCHEMA public FROM ddln_g0_user;
DROP ROLE ddln_g0_user;
-- leave the database as the next file expects it: without the extension
DROP EXTENSION ddl_notify;
