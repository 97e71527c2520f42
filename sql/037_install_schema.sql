--
-- 037_install_schema: CREATE EXTENSION into a schema made beforehand, and
-- the engine's identity (G10: no role makes code run as another role by an
-- object it creates before the extension)
--
-- Proves, with the code change each part catches:
-- 1. CREATE EXTENSION refuses a schema ddl_notify that exists already and
--    is owned by a role that is not a superuser (42501), grants CREATE to
--    such a role or to PUBLIC (42501), or holds any object (55000); the
--    function a role planted there (the README's subscribe() call with two
--    unknown literals would resolve to it) never runs, and nothing of the
--    extension is left.  ALTER EXTENSION UPDATE from 0.1.0 refuses such a
--    schema too.  Catches: the install script without its first block (the
--    extension installs into the role's schema; the planted subscribe()
--    then runs as the superuser and planted_ran shows it).
-- 2. The empty, superuser-owned schema that pg_dump writes before CREATE
--    EXTENSION ... WITH SCHEMA is accepted, and the README's subscribe()
--    call reaches the extension's function.
-- 3. The engine's identity is the extension's owner, not the schema's: with
--    the schema given to another role afterwards, subscribe() and CALL
--    deliver() still work.  Catches: DdlnExtensionOwner() returning the
--    schema's owner (42501, permission denied for table subscriber).
--
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS ddl_notify;
DROP SCHEMA IF EXISTS ddl_notify CASCADE;
CREATE ROLE regress_ddln_mallory;
SELECT format('GRANT CREATE ON DATABASE %I TO regress_ddln_mallory', current_database()) \gexec
CREATE TABLE planted_ran (who name);
GRANT INSERT ON planted_ran TO regress_ddln_mallory;

-- 1. a schema the role made first, with a function planted in it
SET ROLE regress_ddln_mallory;
CREATE SCHEMA ddl_notify;
CREATE FUNCTION ddl_notify.subscribe(name text, handler text) RETURNS integer
	LANGUAGE sql AS $$ INSERT INTO public.planted_ran VALUES (current_user); SELECT 1 $$;
RESET ROLE;
CREATE EXTENSION ddl_notify;
-- given to a superuser, it still holds the role's function
ALTER SCHEMA ddl_notify OWNER TO CURRENT_USER;
CREATE EXTENSION ddl_notify;
DROP FUNCTION ddl_notify.subscribe(text, text);
-- any other object counts too
CREATE TABLE ddl_notify.stray (a int);
CREATE EXTENSION ddl_notify;
DROP TABLE ddl_notify.stray;
-- CREATE for a role that is not a superuser, or for PUBLIC
GRANT CREATE ON SCHEMA ddl_notify TO regress_ddln_mallory;
CREATE EXTENSION ddl_notify;
REVOKE CREATE ON SCHEMA ddl_notify FROM regress_ddln_mallory;
GRANT CREATE ON SCHEMA ddl_notify TO PUBLIC;
CREATE EXTENSION ddl_notify;
REVOKE CREATE ON SCHEMA ddl_notify FROM PUBLIC;
-- nothing of the extension was left by the refusals
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'ddl_notify';
SELECT count(*) AS objects FROM pg_depend
 WHERE refclassid = 'pg_namespace'::regclass
   AND refobjid = (SELECT oid FROM pg_namespace WHERE nspname = 'ddl_notify');

-- ALTER EXTENSION UPDATE from 0.1.0, made into a role's schema
ALTER SCHEMA ddl_notify OWNER TO regress_ddln_mallory;
CREATE EXTENSION ddl_notify VERSION '0.1.0';
ALTER EXTENSION ddl_notify UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify';
DROP EXTENSION ddl_notify;
DROP SCHEMA ddl_notify;

-- 2. pg_dump's shape: an empty schema owned by a superuser, then the extension
CREATE SCHEMA ddl_notify;
ALTER SCHEMA ddl_notify OWNER TO CURRENT_USER;
CREATE EXTENSION IF NOT EXISTS ddl_notify WITH SCHEMA ddl_notify;
SELECT extversion FROM pg_extension WHERE extname = 'ddl_notify';
-- the README's call, two unknown literals, reaches the extension's function
CREATE TABLE seen (ident text);
CREATE FUNCTION invalidate(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.seen VALUES (e.object_identity) $$;
SELECT ddl_notify.subscribe('api_cache', 'invalidate(ddl_notify.event)') > 0 AS subscribed;
SELECT count(*) AS planted_calls FROM planted_ran;

-- 3. the engine runs as the extension's owner, whoever owns the schema now
ALTER SCHEMA ddl_notify OWNER TO regress_ddln_mallory;
SELECT ddl_notify.subscribe('second', 'invalidate(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE t37 (a int);
CALL ddl_notify.deliver();
SELECT ident, count(*) FROM seen GROUP BY ident ORDER BY ident;
SELECT name, pending, attempts, last_error FROM ddl_notify.subscriber_status ORDER BY name;
ALTER SCHEMA ddl_notify OWNER TO CURRENT_USER;

-- clean up: the extension stays, as later tests expect
SELECT ddl_notify.unsubscribe('api_cache');
SELECT ddl_notify.unsubscribe('second');
DROP TABLE t37, seen, planted_ran;
DROP FUNCTION invalidate(ddl_notify.event);
SELECT format('REVOKE CREATE ON DATABASE %I FROM regress_ddln_mallory', current_database()) \gexec
DROP ROLE regress_ddln_mallory;

-- leave the database as the next file expects it: without the extension
DROP EXTENSION ddl_notify;
DROP SCHEMA ddl_notify;
