--
-- 031_restore_trust: restored subscribers and the function a stored name
-- finds (G10, G13; a dump is data, not a choice anybody made)
--
-- Rows are inserted as pg_restore and psql insert them (names, no OIDs of
-- this database): a plain dump edited by hand is exactly such an INSERT.
-- Proves, with the code change each part catches:
-- 1. A row whose owner_name was edited from a role to a superuser, naming
--    that role's function: restored unconfirmed (state 'unconfirmed',
--    last_error says why); CALL deliver() calls nothing; the role cannot
--    confirm it (42501); a superuser's resume() does, as an explicit choice.
--    Catches: the restore trigger binding without trust.c's rule (the role's
--    function then runs as the superuser: ran_as shows it).
-- 2. A row naming pg_catalog.array_typanalyze(internal): restored
--    unconfirmed and unbound; after resume() the engine refuses to bind it
--    (42804); a hand-edited handler_oid of that function is refused right
--    before the call (42804): nothing is called, the server stays up.
--    Catches: the engine without its shape check right before the call
--    (DDLN_BIND_CALL; the worker then hands the event tuple to a function
--    taking "internal" and the server crashes).
-- 3. A superuser's restored subscriber whose handler does not exist yet; a
--    role that may create in public creates a function of that signature:
--    the engine does not deliver through it (the subscriber becomes
--    unconfirmed, 42501 in last_error, no attempt counted, nothing called);
--    a superuser's alter_subscriber(handler => ...) binds an explicit
--    choice, and once it delivers, last_error is cleared.  Catches: the
--    engine's resolution by name without the trust rule (DdlnResolveSubscriber
--    binding any function its name finds: the role's function then runs as
--    the superuser).
-- 4. A role that is not a superuser, with INSERT on the table, restoring a
--    row of another role is refused (42501); its own row is accepted and
--    active.  Catches: the restore trigger without its actor check.
-- 5. Sequences set back by a restore's setval(): subscribe() and the next
--    dead letter draw ids above those in use (no 23505); a restored row gets
--    a new id too.  A dead letter that fails (a trigger on dead_letter) is
--    that subscriber's failure: a later subscriber is delivered in the same
--    round.  Catches: drawing ids without the floor (23505); DdlnDeadLetter()
--    re-throwing any error but a lock timeout (deliver() fails whole).
-- Errors are shown with their SQLSTATE only; nothing prints an OID, an id,
-- a transaction id or a timestamp.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;
SET client_min_messages = warning;
\set status 'SELECT name, state, pending, attempts, last_error_sqlstate, last_error FROM ddl_notify.subscriber_status ORDER BY name'

CREATE ROLE regress_ddln_rsu SUPERUSER;
CREATE ROLE regress_ddln_ra;
CREATE ROLE regress_ddln_rm;
-- what the README's subscriber grant gives: the extension's types
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_ra, regress_ddln_rm;
CREATE TABLE ran_as (sub text, superuser boolean, ident text);
GRANT INSERT ON ran_as TO PUBLIC;
CREATE FUNCTION ra_h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.ran_as SELECT 'ra_h', rolsuper, e.object_identity
	FROM pg_catalog.pg_roles WHERE rolname = current_user
$$;
ALTER FUNCTION ra_h(ddl_notify.event) OWNER TO regress_ddln_ra;
CREATE FUNCTION su_h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.ran_as SELECT 'su_h', rolsuper, e.object_identity
	FROM pg_catalog.pg_roles WHERE rolname = current_user
$$;
GRANT EXECUTE ON FUNCTION ddl_notify.resume(text) TO regress_ddln_ra;

--
-- 1. owner_name edited to a superuser's
--
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('edited', 'public.ra_h(ddl_notify.event)', 'regress_ddln_rsu');
:status;
CREATE TABLE t31a (a int);
CALL ddl_notify.deliver();
SELECT count(*) AS calls FROM ran_as;
SET ROLE regress_ddln_ra;
SELECT ddl_notify.resume('edited');
RESET ROLE;
SELECT ddl_notify.resume('edited');
CALL ddl_notify.deliver();
SELECT sub, superuser, ident FROM ran_as;
SELECT ddl_notify.unsubscribe('edited');
TRUNCATE ran_as;

--
-- 2. a function of another shape
--
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('crasher', 'pg_catalog.array_typanalyze(internal)', 'regress_ddln_rsu');
SELECT name, state, last_error_sqlstate FROM ddl_notify.subscriber_status WHERE name = 'crasher';
SELECT handler_oid = 0 AS unbound FROM ddl_notify.subscriber WHERE name = 'crasher';
CREATE TABLE t31b (a int);
CALL ddl_notify.deliver();
SELECT ddl_notify.resume('crasher');
CALL ddl_notify.deliver();
SELECT name, state, pending, attempts, last_error_sqlstate FROM ddl_notify.subscriber_status WHERE name = 'crasher';
-- the row edited by hand to the function's OID: refused right before the call
UPDATE ddl_notify.subscriber
   SET handler_oid = 'pg_catalog.array_typanalyze(internal)'::regprocedure,
	   resolved_in = (SELECT system_identifier FROM pg_control_system()),
	   next_retry_at = NULL
 WHERE name = 'crasher';
CALL ddl_notify.deliver();
SELECT name, state, pending, attempts, last_error_sqlstate FROM ddl_notify.subscriber_status WHERE name = 'crasher';
SELECT ddl_notify.unsubscribe('crasher');

--
-- 3. a missing handler, created later by another role
--
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('missing', 'public.later_h(ddl_notify.event)', 'regress_ddln_rsu');
SELECT name, state, last_error_sqlstate FROM ddl_notify.subscriber_status WHERE name = 'missing';
GRANT CREATE ON SCHEMA public TO regress_ddln_rm;
SET ROLE regress_ddln_rm;
CREATE FUNCTION public.later_h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.ran_as SELECT 'later_h', rolsuper, e.object_identity
	FROM pg_catalog.pg_roles WHERE rolname = current_user
$$;
RESET ROLE;
CREATE TABLE t31c (a int);
CALL ddl_notify.deliver();
SELECT count(*) AS calls FROM ran_as;
SELECT name, state, pending, attempts, last_error_sqlstate, last_error FROM ddl_notify.subscriber_status WHERE name = 'missing';
-- a superuser's explicit choice binds
SELECT ddl_notify.alter_subscriber('missing', handler => 'su_h(ddl_notify.event)');
CALL ddl_notify.deliver();
SELECT sub, superuser, ident FROM ran_as;
SELECT name, state, pending, attempts, last_error FROM ddl_notify.subscriber_status WHERE name = 'missing';
SELECT ddl_notify.unsubscribe('missing');
DROP FUNCTION later_h(ddl_notify.event);
REVOKE CREATE ON SCHEMA public FROM regress_ddln_rm;
TRUNCATE ran_as;

--
-- 4. a role restoring rows
--
GRANT INSERT ON ddl_notify.subscriber TO regress_ddln_ra;
SET ROLE regress_ddln_ra;
\set VERBOSITY default
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('not_mine', 'public.ra_h(ddl_notify.event)', 'regress_ddln_rm');
\set VERBOSITY sqlstate
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('not_anyones', 'public.ra_h(ddl_notify.event)', 'regress_ddln_nobody');
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('mine', 'public.ra_h(ddl_notify.event)', 'regress_ddln_ra');
RESET ROLE;
REVOKE INSERT ON ddl_notify.subscriber FROM regress_ddln_ra;
:status;
SELECT ddl_notify.unsubscribe('mine');

--
-- 5. sequences set back; a dead letter that fails
--
SELECT ddl_notify.subscribe('first', 'su_h(ddl_notify.event)') > 0 AS subscribed;
SELECT pg_catalog.setval('ddl_notify.subscriber_id_seq', 1);
SELECT ddl_notify.subscribe('after_setval', 'su_h(ddl_notify.event)') > 0 AS subscribed;
SELECT pg_catalog.setval('ddl_notify.subscriber_id_seq', 1);
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('restored_after_setval', 'public.su_h(ddl_notify.event)', 'regress_ddln_rsu');
SELECT count(*) AS subscribers, count(DISTINCT id) AS ids FROM ddl_notify.subscriber;
SELECT ddl_notify.unsubscribe('first');
SELECT ddl_notify.unsubscribe('after_setval');
SELECT ddl_notify.unsubscribe('restored_after_setval');
CREATE FUNCTION fail_h(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'fail_h refuses %', e.object_identity;
END
$$;
SELECT ddl_notify.subscribe('dl', 'fail_h(ddl_notify.event)', max_attempts => 1) > 0 AS subscribed;
SELECT ddl_notify.subscribe('other', 'su_h(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE t31d (a int);
CREATE TABLE t31e (a int);
CALL ddl_notify.deliver();
SELECT pg_catalog.setval('ddl_notify.dead_letter_id_seq', 1);
CREATE TABLE t31f (a int);
CALL ddl_notify.deliver();
SELECT count(*) AS dead_letters, count(DISTINCT id) AS ids FROM ddl_notify.dead_letter WHERE subscriber = 'dl';
-- a dead letter that fails is "dl"'s failure only: "other" is delivered in the same round
CREATE FUNCTION dl_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'dead letters refused';
END
$$;
CREATE TRIGGER dl_refuse BEFORE INSERT ON ddl_notify.dead_letter
	FOR EACH ROW EXECUTE FUNCTION dl_refuse();
TRUNCATE ran_as;
CREATE TABLE t31g (a int);
CALL ddl_notify.deliver();
SELECT sub, ident FROM ran_as ORDER BY ident;
SELECT name, pending, attempts, last_error_sqlstate FROM ddl_notify.subscriber_status ORDER BY name;
DROP TRIGGER dl_refuse ON ddl_notify.dead_letter;
UPDATE ddl_notify.subscriber SET next_retry_at = NULL WHERE name = 'dl';
CALL ddl_notify.deliver();
SELECT count(*) AS dead_letters FROM ddl_notify.dead_letter WHERE subscriber = 'dl';
SELECT name, pending, attempts FROM ddl_notify.subscriber_status ORDER BY name;

-- clean up
SELECT ddl_notify.unsubscribe('dl');
SELECT ddl_notify.unsubscribe('other');
DELETE FROM ddl_notify.dead_letter WHERE subscriber = 'dl';
DROP TABLE t31a, t31b, t31c, t31d, t31e, t31f, t31g, ran_as;
DROP FUNCTION ra_h(ddl_notify.event), su_h(ddl_notify.event), fail_h(ddl_notify.event), dl_refuse();
REVOKE EXECUTE ON FUNCTION ddl_notify.resume(text) FROM regress_ddln_ra;
REVOKE USAGE ON SCHEMA ddl_notify FROM regress_ddln_ra, regress_ddln_rm;
DROP ROLE regress_ddln_ra;
DROP ROLE regress_ddln_rm;
DROP ROLE regress_ddln_rsu;

-- leave the database as the next file expects it: without the extension
DROP EXTENSION ddl_notify;
