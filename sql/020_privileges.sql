--
-- 020_privileges: least privilege and hostile callers
--
-- Proves G10 (least privilege): a handler runs as the role that subscribed
-- it, never as whoever delivers; subscribing needs an explicit grant, EXECUTE
-- on the handler and USAGE on its schema; whether query text is stored is a
-- setting only a superuser may change.  And the contract's "a caller without
-- the grant gets a clear error, nothing half-done".  Checked here:
--  1. nothing is granted to PUBLIC: a role without grants can neither read
--     the tables nor call the API (42501 each);
--  2. with docs/reference.md's grants a role may subscribe a handler it may
--     execute; not one it may not execute, nor one in a schema it may not
--     use (42501); docs/reference.md's grant on subscriber_status is enough to read it;
--  3. the handler runs as the subscribing role with the fixed search_path,
--     whoever calls deliver(); it cannot write the extension's tables (the
--     failure is recorded, nothing changes); EXECUTE revoked later is a
--     recorded 42501 failure; the handler cannot leave anything behind in the
--     deliverer's session (settings; temporary tables, which would shadow
--     the deliverer's tables and could carry triggers that run as the
--     deliverer);
--  4. a role may unsubscribe and skip only its own subscriptions (or those
--     of a role it is a member of); a superuser may act on any;
--  5. DROP ROLE of a subscriber's owner, DROP FUNCTION of a handler: the
--     subscriber shows a clear error, the others are still delivered, a
--     superuser can unsubscribe the orphan;
--  6. secrets in statement text are stored as '********' whatever the
--     quoting; capture_query = off stores no text; only a superuser may
--     change capture_query and capture_temp;
--  7. a hostile search_path (functions, operators and tables shadowing
--     pg_catalog's and the extension's) changes nothing the extension does.
-- Errors are shown with their SQLSTATE only (VERBOSITY sqlstate); nothing
-- here prints an OID, an id or a timestamp.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
-- each subscriber's progress and last error (numbers in it masked)
\set status 'SELECT name, pending, attempts, CASE WHEN attempts > 0 THEN last_error_sqlstate END AS sqlstate, CASE WHEN attempts > 0 THEN regexp_replace(last_error, ''[0-9]+'', ''N'') END AS error FROM ddl_notify.subscriber_status ORDER BY name'
SET ddl_notify.retry_initial_delay = 0;
-- failed attempts are read from subscriber_status, not from deliver()'s NOTICE
SET client_min_messages = warning;

CREATE ROLE regress_ddln_nobody;
CREATE ROLE regress_ddln_alice;
CREATE ROLE regress_ddln_bob;
CREATE ROLE regress_ddln_carol IN ROLE regress_ddln_alice;
CREATE ROLE regress_ddln_dave;

-- What the handlers write: who they ran as, with which search_path.
CREATE TABLE priv_log (n serial, sub text, as_user name, as_superuser boolean,
					   search_path text, tag text, ident text);
GRANT INSERT ON priv_log TO PUBLIC;
GRANT USAGE ON SEQUENCE priv_log_n_seq TO PUBLIC;
CREATE FUNCTION h_log(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.priv_log (sub, as_user, as_superuser, search_path, tag, ident)
	SELECT 'log', current_user, r.rolsuper, pg_catalog.current_setting('search_path'),
		   e.command_tag, e.object_identity
	FROM pg_catalog.pg_roles r WHERE r.rolname = current_user
$$;
CREATE FUNCTION h_log2(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.priv_log (sub, as_user, as_superuser, search_path, tag, ident)
	SELECT 'log2', current_user, r.rolsuper, pg_catalog.current_setting('search_path'),
		   e.command_tag, e.object_identity
	FROM pg_catalog.pg_roles r WHERE r.rolname = current_user
$$;
-- functions are executable by PUBLIC unless revoked
REVOKE EXECUTE ON FUNCTION h_log(ddl_notify.event), h_log2(ddl_notify.event) FROM PUBLIC;

--
-- 1. Nothing for PUBLIC
--
-- What PUBLIC may do on the extension's objects: only the pure helper
-- is_pending() and subscriber_progress() (the delivery counters
-- subscriber_status adds, which answer only a role that may read that
-- view) are executable; no table, no schema, no API function.
SELECT c.relname FROM pg_class c
WHERE c.relnamespace = 'ddl_notify'::regnamespace AND c.relkind IN ('r', 'v', 'S')
  AND has_table_privilege('public', c.oid, 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER')
ORDER BY 1;
SELECT p.oid::regprocedure AS public_may_execute FROM pg_proc p
WHERE p.pronamespace = 'ddl_notify'::regnamespace AND has_function_privilege('public', p.oid, 'EXECUTE')
ORDER BY 1;
SELECT has_schema_privilege('public', 'ddl_notify', 'USAGE') AS public_schema_usage;

-- Without any grant: not even the schema.
SET ROLE regress_ddln_nobody;
SELECT count(*) FROM ddl_notify.event;
SELECT count(*) FROM ddl_notify.subscriber_status;
CALL ddl_notify.deliver();
RESET ROLE;
-- With USAGE on the schema only, each object still refuses on its own.
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_nobody;
GRANT EXECUTE ON FUNCTION h_log(ddl_notify.event) TO regress_ddln_nobody;
CREATE TABLE pub_t1 ();
SELECT id AS pub_t1_event FROM ddl_notify.event WHERE object_identity = 'public.pub_t1' \gset
SET ROLE regress_ddln_nobody;
SELECT count(*) FROM ddl_notify.event;
SELECT count(*) FROM ddl_notify.subscriber;
SELECT count(*) FROM ddl_notify.subscriber_status;
SELECT count(*) FROM ddl_notify.dead_letter;
DELETE FROM ddl_notify.event;
INSERT INTO ddl_notify.subscriber (name) VALUES ('x');
SELECT ddl_notify.subscribe('nobody_sub', 'h_log(ddl_notify.event)');
SELECT ddl_notify.unsubscribe('nobody_sub');
SELECT ddl_notify.skip('nobody_sub', :pub_t1_event);
CALL ddl_notify.deliver();
SELECT ddl_notify.wait_for_delivery('1 second');
SELECT ddl_notify.delivery_status();
SELECT count(*) FROM ddl_notify.subscriber_progress();
RESET ROLE;
SELECT count(*) AS subscribers FROM ddl_notify.subscriber;
SELECT count(*) AS pub_t1_event_kept FROM ddl_notify.event WHERE id = :pub_t1_event;
REVOKE USAGE ON SCHEMA ddl_notify FROM regress_ddln_nobody;
REVOKE EXECUTE ON FUNCTION h_log(ddl_notify.event) FROM regress_ddln_nobody;

--
-- 2. docs/reference.md's grants
--
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_alice, regress_ddln_bob, regress_ddln_dave;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
						  ddl_notify.unsubscribe(text), ddl_notify.skip(text, bigint)
	TO regress_ddln_alice, regress_ddln_bob, regress_ddln_dave;
GRANT SELECT ON ddl_notify.subscriber_status TO regress_ddln_alice, regress_ddln_bob;
GRANT EXECUTE ON FUNCTION ddl_notify.delivery_status() TO regress_ddln_alice, regress_ddln_bob;

-- a handler in a schema alice may not use
CREATE SCHEMA regress_ddln_private;
CREATE FUNCTION regress_ddln_private.h_hidden(e ddl_notify.event) RETURNS void
	LANGUAGE sql AS $$ SELECT $$;
GRANT EXECUTE ON FUNCTION regress_ddln_private.h_hidden(ddl_notify.event) TO regress_ddln_alice;
SELECT oid AS hidden_oid FROM pg_proc WHERE proname = 'h_hidden' \gset

SET ROLE regress_ddln_alice;
-- no EXECUTE on h_log yet
SELECT ddl_notify.subscribe('alice', 'h_log(ddl_notify.event)');
-- EXECUTE on h_hidden, but no USAGE on its schema; by name PostgreSQL refuses
-- to look it up, by OID the extension refuses
SELECT ddl_notify.subscribe('alice', 'regress_ddln_private.h_hidden(ddl_notify.event)');
SELECT ddl_notify.subscribe('alice', :hidden_oid::regprocedure);
RESET ROLE;
SELECT count(*) AS subscribers FROM ddl_notify.subscriber;

GRANT EXECUTE ON FUNCTION h_log(ddl_notify.event) TO regress_ddln_alice, regress_ddln_bob, regress_ddln_dave;
GRANT EXECUTE ON FUNCTION h_log2(ddl_notify.event) TO regress_ddln_bob;
SET ROLE regress_ddln_alice;
SELECT ddl_notify.subscribe('alice', 'h_log(ddl_notify.event)') > 0 AS subscribed;
-- the grant on the view is enough to read it, every column of it
SELECT name, handler, owner, pending, delivery LIKE 'manual:%' AS manual_delivery
FROM ddl_notify.subscriber_status ORDER BY name;
-- but not the tables behind it
SELECT count(*) FROM ddl_notify.subscriber;
RESET ROLE;
SET ROLE regress_ddln_bob;
SELECT ddl_notify.subscribe('bob', 'h_log(ddl_notify.event)') > 0 AS subscribed;
-- a second subscription of bob's, with another handler
SELECT ddl_notify.subscribe('bob2', 'h_log2(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
SELECT name, owner FROM ddl_notify.subscriber_status ORDER BY name;

--
-- 3. The handler runs as its subscriber, whoever delivers
--
-- The superuser delivers from a session with another search_path.
CREATE SCHEMA regress_ddln_other;
SET search_path = regress_ddln_other, public;
CREATE TABLE public.runs_as ();
CALL ddl_notify.deliver();
RESET search_path;
SELECT sub, as_user, as_superuser, search_path, tag, ident FROM priv_log ORDER BY n;
TRUNCATE priv_log;

-- A handler may not write the extension's tables; the failure is recorded
-- and nothing changes.
CREATE FUNCTION h_tamper_subscriber(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ UPDATE ddl_notify.subscriber SET max_attempts = 1, owner = 10 $$;
CREATE FUNCTION h_tamper_event(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ DELETE FROM ddl_notify.event $$;
CREATE FUNCTION h_tamper_dead_letter(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO ddl_notify.dead_letter (subscriber, event_id, event, attempts) VALUES ('x', 1, '{}', 1) $$;
CALL ddl_notify.deliver();
SET ROLE regress_ddln_alice;
SELECT ddl_notify.subscribe('tamper_subscriber', 'h_tamper_subscriber(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('tamper_event', 'h_tamper_event(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('tamper_dead_letter', 'h_tamper_dead_letter(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
CREATE TABLE tamper_t ();
CALL ddl_notify.deliver();
SELECT name, pending, attempts, last_error_sqlstate, last_error ~ '^permission denied for table' AS denied
FROM ddl_notify.subscriber_status WHERE name LIKE 'tamper%' ORDER BY name;
-- the event is still there (pending for the three), nothing was deleted
SELECT object_identity, processed <> 0 AS handled_by_others FROM ddl_notify.event;
SELECT count(*) FILTER (WHERE max_attempts IS NOT NULL) AS max_attempts_set,
	   count(*) FILTER (WHERE owner = 10) AS owned_by_bootstrap
FROM ddl_notify.subscriber;
SELECT count(*) AS dead_letters FROM ddl_notify.dead_letter;
-- the others got the event
SELECT sub, as_user, ident FROM priv_log ORDER BY sub, as_user, n;
SELECT ddl_notify.unsubscribe(name) FROM ddl_notify.subscriber WHERE name LIKE 'tamper%' ORDER BY name;
TRUNCATE priv_log;

-- EXECUTE revoked after subscribing: a recorded 42501 failure, until granted back
REVOKE EXECUTE ON FUNCTION h_log(ddl_notify.event) FROM regress_ddln_bob;
CREATE TABLE revoked_t ();
CALL ddl_notify.deliver();
SELECT name, pending, attempts, last_error_sqlstate, last_error
FROM ddl_notify.subscriber_status WHERE name IN ('alice', 'bob') ORDER BY name;
SELECT sub, as_user, ident FROM priv_log ORDER BY sub, as_user, n;
GRANT EXECUTE ON FUNCTION h_log(ddl_notify.event) TO regress_ddln_bob;
CALL ddl_notify.deliver();
SELECT name, pending, attempts FROM ddl_notify.subscriber_status
WHERE name IN ('alice', 'bob') ORDER BY name;
SELECT sub, as_user, ident FROM priv_log ORDER BY sub, as_user, n;
TRUNCATE priv_log;

-- A handler cannot change the identity it runs as.
CREATE FUNCTION h_setrole(e ddl_notify.event) RETURNS void LANGUAGE plpgsql
	AS $$ BEGIN RESET ROLE; END $$;
SET ROLE regress_ddln_alice;
SELECT ddl_notify.subscribe('setrole', 'h_setrole(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
CREATE TABLE setrole_t ();
CALL ddl_notify.deliver();
SELECT name, pending, attempts, last_error_sqlstate
FROM ddl_notify.subscriber_status WHERE name = 'setrole';
SELECT ddl_notify.unsubscribe('setrole');

-- A handler leaves nothing behind in the session that delivers: no setting
-- (search_path, statement_timeout), no temporary table that would shadow a
-- table of the deliverer's.  Whether the attempt
-- itself fails or is undone is the engine's choice; only the deliverer's
-- session is looked at.
CREATE FUNCTION h_plant(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'regress_ddln_planted, pg_catalog', false);
	PERFORM pg_catalog.set_config('statement_timeout', '4321', false);
	EXECUTE 'CREATE TEMP TABLE IF NOT EXISTS priv_log (n int)';
END
$$;
SET ROLE regress_ddln_alice;
SELECT ddl_notify.subscribe('plant', 'h_plant(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
SHOW search_path;
SHOW statement_timeout;
CREATE TABLE plant_t ();
CALL ddl_notify.deliver();
SHOW search_path;
SHOW statement_timeout;
SELECT count(*) AS temp_relations FROM pg_catalog.pg_class WHERE relnamespace = pg_catalog.pg_my_temp_schema();
-- clean up whatever was left, so that the rest of the file runs as designed
RESET search_path;
RESET statement_timeout;
DISCARD TEMP;
SELECT ddl_notify.unsubscribe('plant');

--
-- 4. Only the owner (or a member of the owner role, or a superuser) may
--    unsubscribe or skip
--
CREATE TABLE skip_t ();
SELECT id AS skip_t_event FROM ddl_notify.event WHERE object_identity = 'public.skip_t' \gset
SET ROLE regress_ddln_bob;
SELECT ddl_notify.unsubscribe('alice');
SELECT ddl_notify.skip('alice', :skip_t_event);
SELECT ddl_notify.skip('bob', :skip_t_event);
RESET ROLE;
SET ROLE regress_ddln_nobody;
SELECT ddl_notify.unsubscribe('alice');
RESET ROLE;
SELECT name, pending, skipped FROM ddl_notify.subscriber_status WHERE name IN ('alice', 'bob') ORDER BY name;
-- carol is a member of alice
SET ROLE regress_ddln_carol;
SELECT ddl_notify.skip('alice', :skip_t_event);
RESET ROLE;
-- the superuser may act on anyone's
SELECT ddl_notify.skip('bob2', :skip_t_event);
SELECT name, pending, skipped FROM ddl_notify.subscriber_status ORDER BY name;
SELECT ddl_notify.unsubscribe('bob2');
SELECT name FROM ddl_notify.subscriber_status ORDER BY name;
CALL ddl_notify.deliver();
TRUNCATE priv_log;

--
-- 5. The owner role or the handler goes away
--
SET ROLE regress_ddln_dave;
SELECT ddl_notify.subscribe('dave', 'h_log(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
-- dave still holds grants: PostgreSQL refuses to drop him
DROP ROLE regress_ddln_dave;
-- DROP OWNED BY takes his grants away, then the role can go
DROP OWNED BY regress_ddln_dave;
DROP ROLE regress_ddln_dave;
CREATE TABLE orphan_t ();
CALL ddl_notify.deliver();
-- a clear error on the orphan (its owner's OID masked), the others delivered
:status;
SELECT sub, as_user, ident FROM priv_log ORDER BY as_user, n;
-- nobody but a superuser may unsubscribe it
SET ROLE regress_ddln_alice;
SELECT ddl_notify.unsubscribe('dave');
RESET ROLE;
SELECT ddl_notify.unsubscribe('dave');
TRUNCATE priv_log;

-- The handler is dropped under a subscriber.
CREATE FUNCTION h_doomed(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.priv_log (sub, as_user, ident) VALUES ('doomed', current_user, e.object_identity) $$;
SET ROLE regress_ddln_bob;
SELECT ddl_notify.subscribe('doomed', 'h_doomed(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
DROP FUNCTION h_doomed(ddl_notify.event);
CREATE TABLE doomed_t ();
CALL ddl_notify.deliver();
:status;
SELECT sub, as_user, tag, ident FROM priv_log ORDER BY as_user, n;
-- a function of the same name is another function: still failing
CREATE FUNCTION h_doomed(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CALL ddl_notify.deliver();
SELECT name, pending, last_error_sqlstate FROM ddl_notify.subscriber_status WHERE name = 'doomed';
-- its owner may unsubscribe it
SET ROLE regress_ddln_bob;
SELECT ddl_notify.unsubscribe('doomed');
RESET ROLE;
CALL ddl_notify.deliver();
SELECT name, pending, attempts FROM ddl_notify.subscriber_status ORDER BY name;
TRUNCATE priv_log;

--
-- 6. Secrets in statement text
--
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
CREATE SERVER regress_ddln_srv FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'localhost', dbname 'x');
CREATE FOREIGN DATA WRAPPER regress_ddln_dummy;
CREATE SERVER regress_ddln_dsrv FOREIGN DATA WRAPPER regress_ddln_dummy;
SELECT COALESCE(max(id), 0) AS before_secrets FROM ddl_notify.event \gset
CREATE USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (user 'u', password 'hunter1');
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password 'hunter2');
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET "password" E'hun\'ter3');
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET PASSWORD $$hunter4$$);
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password $q$hun'ter5$q$);
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password 'hun''ter6');
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password /* comment */ U&'hunter7');
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password 'hun'
'ter8');
-- a backslash-escaped quote with standard_conforming_strings off; PostgreSQL
-- 19 no longer allows it off, so there the same password is given with ''
-- (the same row is recorded).  The comment after the first statement keeps
-- psql's scan of the branch it skips on 19 balanced.
SELECT current_setting('server_version_num')::int < 190000 AS scs_off_allowed \gset
\if :scs_off_allowed
SET standard_conforming_strings = off;
SET escape_string_warning = off;
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password 'hun\'ter9'); -- '
RESET standard_conforming_strings;
RESET escape_string_warning;
\else
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password 'hun''ter9');
\endif
-- the option name spelled with a Unicode escape is still "password"
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET U&"p\0061ssword" 'hunter10');
-- two statements in one query string: each stored with its own text
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password 'hunter11') \; ALTER SERVER regress_ddln_srv OPTIONS (ADD port '5432');
-- a password inside a connection string
CREATE SERVER regress_ddln_dsrv2 FOREIGN DATA WRAPPER regress_ddln_dummy OPTIONS (conninfo 'host=h password=hunter12');
ALTER SERVER regress_ddln_dsrv OPTIONS (ADD passwd 'hunter13', ADD secret 'hunter14');
-- DDL run by a function
DO $$ BEGIN EXECUTE 'ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password ' || quote_literal('hunter15') || ')'; END $$;
-- stored: no hunterN anywhere, the statements otherwise as they were run
SELECT command_tag, rtrim(query) AS query FROM ddl_notify.event WHERE id > :before_secrets ORDER BY id;
SELECT count(*) AS leaked FROM ddl_notify.event
WHERE id > :before_secrets AND (query ~ 'hun.{0,4}ter' OR details::text ~ 'hun.{0,4}ter');
-- the value really was set (the statements did what they said)
SELECT umoptions FROM pg_user_mapping um JOIN pg_foreign_server s ON s.oid = um.umserver
WHERE s.srvname = 'regress_ddln_srv';

-- capture_query = off: no text at all
SELECT max(id) AS before_off FROM ddl_notify.event \gset
SET ddl_notify.capture_query = off;
ALTER USER MAPPING FOR regress_ddln_alice SERVER regress_ddln_srv OPTIONS (SET password 'hunter16');
CREATE TABLE no_query_t ();
RESET ddl_notify.capture_query;
CREATE TABLE with_query_t ();
SELECT command_tag, object_identity, query FROM ddl_notify.event WHERE id > :before_off ORDER BY id;

-- only a superuser may change what is captured
SET ROLE regress_ddln_alice;
SET ddl_notify.capture_query = off;
SET LOCAL ddl_notify.capture_query = off;
SELECT set_config('ddl_notify.capture_query', 'off', false);
SET ddl_notify.capture_temp = on;
ALTER ROLE regress_ddln_alice SET ddl_notify.capture_query = off;
SHOW ddl_notify.capture_query;
SHOW ddl_notify.capture_temp;
RESET ROLE;
CALL ddl_notify.deliver();
DROP SERVER regress_ddln_srv CASCADE;
DROP SERVER regress_ddln_dsrv, regress_ddln_dsrv2;
DROP FOREIGN DATA WRAPPER regress_ddln_dummy;
DROP EXTENSION postgres_fdw;
CALL ddl_notify.deliver();
TRUNCATE priv_log;

--
-- 7. Hostile search_path
--
-- regress_ddln_evil owns a schema that shadows pg_catalog's functions and
-- operators and the extension's tables; every object of it records its use
-- in evil.calls (and the tables are empty).  A session, the superuser's too,
-- puts it first in search_path and uses the whole API.
CREATE ROLE regress_ddln_evil;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_evil;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
						  ddl_notify.unsubscribe(text), ddl_notify.skip(text, bigint),
						  ddl_notify.wait_for_delivery(interval)
	TO regress_ddln_evil;
GRANT EXECUTE ON PROCEDURE ddl_notify.deliver() TO regress_ddln_evil;
GRANT EXECUTE ON FUNCTION h_log(ddl_notify.event) TO regress_ddln_evil;
GRANT SELECT ON ddl_notify.subscriber_status TO regress_ddln_evil;
CREATE SCHEMA evil AUTHORIZATION regress_ddln_evil;
SET ROLE regress_ddln_evil;
CREATE TABLE evil.calls (what text);
GRANT INSERT, SELECT ON evil.calls TO PUBLIC;
CREATE FUNCTION evil.log(what text) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO evil.calls VALUES (what) $$;
CREATE FUNCTION evil.now() RETURNS timestamptz LANGUAGE sql
	AS $$ SELECT evil.log('now'); SELECT pg_catalog.now() $$;
CREATE FUNCTION evil.clock_timestamp() RETURNS timestamptz LANGUAGE sql
	AS $$ SELECT evil.log('clock_timestamp'); SELECT pg_catalog.clock_timestamp() $$;
CREATE FUNCTION evil.statement_timestamp() RETURNS timestamptz LANGUAGE sql
	AS $$ SELECT evil.log('statement_timestamp'); SELECT pg_catalog.statement_timestamp() $$;
CREATE FUNCTION evil.pg_current_xact_id() RETURNS xid8 LANGUAGE sql
	AS $$ SELECT evil.log('pg_current_xact_id'); SELECT pg_catalog.pg_current_xact_id() $$;
CREATE FUNCTION evil.count(anyelement) RETURNS bigint LANGUAGE sql
	AS $$ SELECT evil.log('count'); SELECT 0::bigint $$;
CREATE FUNCTION evil.int4eq(integer, integer) RETURNS boolean LANGUAGE sql
	AS $$ SELECT evil.log('= integer'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE FUNCTION evil.int8eq(bigint, bigint) RETURNS boolean LANGUAGE sql
	AS $$ SELECT evil.log('= bigint'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE FUNCTION evil.texteq(text, text) RETURNS boolean LANGUAGE sql
	AS $$ SELECT evil.log('= text'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE FUNCTION evil.oideq(oid, oid) RETURNS boolean LANGUAGE sql
	AS $$ SELECT evil.log('= oid'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE FUNCTION evil.xid8eq(xid8, xid8) RETURNS boolean LANGUAGE sql
	AS $$ SELECT evil.log('= xid8'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE FUNCTION evil.tsle(timestamptz, timestamptz) RETURNS boolean LANGUAGE sql
	AS $$ SELECT evil.log('<= timestamptz'); SELECT $1 OPERATOR(pg_catalog.<=) $2 $$;
CREATE OPERATOR evil.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = evil.int4eq);
CREATE OPERATOR evil.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = evil.int8eq);
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.texteq);
CREATE OPERATOR evil.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = evil.oideq);
CREATE OPERATOR evil.= (LEFTARG = xid8, RIGHTARG = xid8, FUNCTION = evil.xid8eq);
CREATE OPERATOR evil.<= (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = evil.tsle);
CREATE TABLE evil.subscriber (id integer, name text, slot integer, handler regprocedure, owner oid,
							  start_snapshot pg_snapshot, start_xid xid8);
CREATE TABLE evil.event (id bigint, xid xid8, processed bigint, command_tag text, origin text);
CREATE TABLE evil.pg_proc (oid oid);
CREATE TABLE evil.pg_authid (oid oid);
CREATE FUNCTION evil.h_evil(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.priv_log (sub, as_user, ident) VALUES ('evil', current_user, e.object_identity) $$;
-- the trap works: in a session with this search_path, "=" is evil's
SET search_path = evil, pg_catalog, ddl_notify, public;
SELECT 1 = 1 AS trap_works;
SELECT what FROM evil.calls;
TRUNCATE evil.calls;
-- the whole API in that session, as the owner of the schema
SELECT ddl_notify.subscribe('evil', 'evil.h_evil(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('evil2', 'public.h_log(ddl_notify.event)', command_tags => '{CREATE TABLE}',
							schemas => '{evil,public}', max_attempts => 3) > 0 AS subscribed;
CREATE TABLE evil.t1 ();
CALL ddl_notify.deliver();
SELECT ddl_notify.wait_for_delivery('10 seconds');
CREATE TABLE evil.t2 ();
SELECT ddl_notify.skip('evil2', oldest_pending_id) FROM ddl_notify.subscriber_status
WHERE name OPERATOR(pg_catalog.=) 'evil2';
RESET ROLE;
-- and as the superuser
SET search_path = evil, pg_catalog, ddl_notify, public;
CREATE TABLE public.t3 (a int);
ALTER TABLE public.t3 ALTER a TYPE bigint;
DROP TABLE public.t3;
CALL ddl_notify.deliver();
SELECT ddl_notify.wait_for_delivery('10 seconds');
SELECT name, pending, attempts FROM ddl_notify.subscriber_status ORDER BY name;
SELECT ddl_notify.unsubscribe('evil2');
RESET search_path;
-- nothing of evil's was called, evil's tables are untouched, and the events
-- went where they should
SELECT what, count(*) FROM evil.calls GROUP BY 1 ORDER BY 1;
SELECT (SELECT count(*) FROM evil.subscriber) AS evil_subscribers,
	   (SELECT count(*) FROM evil.event) AS evil_events;
SELECT sub, as_user, tag, ident FROM priv_log WHERE ident ~ '^(evil|public)\.t[123]$' ORDER BY sub, as_user, n;
SELECT name, pending, attempts, skipped FROM ddl_notify.subscriber_status ORDER BY name;
SELECT count(*) AS events_left FROM ddl_notify.event;

--
-- Clean up
--
DROP SCHEMA evil CASCADE;
DROP SCHEMA regress_ddln_private CASCADE;
DROP SCHEMA regress_ddln_other CASCADE;
DROP EXTENSION ddl_notify CASCADE;
DROP TABLE priv_log, pub_t1, runs_as, tamper_t, revoked_t, setrole_t, plant_t, skip_t,
	orphan_t, doomed_t, no_query_t, with_query_t;
DROP OWNED BY regress_ddln_nobody, regress_ddln_alice, regress_ddln_bob, regress_ddln_carol, regress_ddln_evil;
DROP ROLE regress_ddln_nobody, regress_ddln_alice, regress_ddln_bob, regress_ddln_carol, regress_ddln_evil;
