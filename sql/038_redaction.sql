--
-- 038_redaction: the stored statement text is redacted as the parser read
-- it, inside function bodies too, fails closed, and is silent (issue 29,
-- item 6).  What standard_conforming_strings changes:
-- 038_redaction_scs.sql.
--
-- Proves G10 (stored text never holds a password: event.query, hence the
-- handler's argument, the WAL message and dead letters, which are built from
-- the same value) and G0 (redaction adds no error, warning or notice to any
-- statement).  Each part names the code change it catches; with the
-- redaction of 0.1.0 (PostgreSQL's scanner) parts 1, 2 and 3 fail:
-- 1. A statement with a name longer than NAMEDATALEN and a password option
--    shows PostgreSQL's "identifier will be truncated" NOTICE once, not
--    twice.  Catches: redaction with the core scanner (it repeats notices).
-- 2. Passwords in function bodies: dblink_connect's connection strings
--    (keyword = value and URI), ALTER ROLE ... PASSWORD in the body and in
--    EXECUTE'd strings (quoted and dollar-quoted), a password in a SQL
--    function's body, URIs with a password within a text and a comment,
--    "secret := '...'", a body read both ways (a backslash in it); a body
--    redaction cannot read (an open comment) is replaced whole; bodies that
--    only mention a password, with an apostrophe in a comment, are kept
--    byte for byte.  Catches: not reading inside constants
--    (test/mutations/redact_no_inner.patch); reading them strictly (the
--    kept bodies withheld).
-- 3. A URI's password in a comment of the statement is redacted; the
--    rest of the comment is kept.  Catches: URIs redacted only inside
--    constants.
-- Then: no stored text and no handler argument matches 'hunter'.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
SET client_min_messages = warning;
CREATE ROLE regress_ddln_r_u;
CREATE FOREIGN DATA WRAPPER regress_ddln_r_w;
CREATE TABLE rlog (n serial, query text);
CREATE FUNCTION r_log(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.rlog (query) VALUES (e.query) $$;
SELECT ddl_notify.subscribe('r_log', 'r_log(ddl_notify.event)') > 0 AS subscribed;
SELECT COALESCE(max(id), 0) AS before FROM ddl_notify.event \gset
RESET client_min_messages;

-- 1. PostgreSQL's notice, once
CREATE SERVER regress_ddln_r_s4_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa FOREIGN DATA WRAPPER regress_ddln_r_w
	OPTIONS (passwd 'hunter3');

-- 2. function bodies
CREATE FUNCTION r_body() RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	-- don't log in as anyone else
	PERFORM dblink_connect('c1', 'host=h dbname=d password=hunter4');
	PERFORM dblink_connect('c2', 'postgresql://u:hunter5@h/d');
	ALTER ROLE regress_ddln_r_u PASSWORD 'hunter6';
	EXECUTE 'ALTER ROLE regress_ddln_r_u PASSWORD ''hunter7''';
	EXECUTE $q$ALTER ROLE regress_ddln_r_u ENCRYPTED PASSWORD 'hunter8'$q$;
END
$f$;
CREATE FUNCTION r_var() RETURNS text LANGUAGE plpgsql AS '
DECLARE secret text;
BEGIN
	secret := ''hunter9'';
	RETURN secret;
END';
CREATE FUNCTION r_both() RETURNS text LANGUAGE plpgsql AS $$
DECLARE d text := 'C:\'; c text := 'host=h password=hunter12';
BEGIN RETURN d || c; END $$;
CREATE FUNCTION r_uri() RETURNS text LANGUAGE sql AS $$
	SELECT 'fetch https://api:hunter14@example.com/v1 daily' -- or ftp://u:hunter15@h
$$;
CREATE FUNCTION r_sql() RETURNS text LANGUAGE sql AS $$SELECT 'host=h password=hunter10'::text$$;
SET check_function_bodies = off;
CREATE FUNCTION r_open() RETURNS void LANGUAGE plpgsql AS $$ /* password 'hunter11' $$;
RESET check_function_bodies;
-- only mentions: kept as written
CREATE FUNCTION r_keep() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	-- don't store the password here
	RETURN 'rotate the secret monthly';
END $$;
COMMENT ON FUNCTION r_keep() IS 'the user''s password hash, not the password';

-- 3. a URI in a comment
COMMENT ON FUNCTION r_keep() IS 'kept' -- copied from postgresql://app:hunter16@db1/prod
;

SET client_min_messages = warning;
SELECT command_tag, query FROM ddl_notify.event WHERE id > :before ORDER BY id;
SELECT count(*) AS leaked FROM ddl_notify.event WHERE id > :before AND query ~ 'hunter';
CALL ddl_notify.deliver();
SELECT count(*) AS handled, count(*) FILTER (WHERE query ~ 'hunter') AS leaked_to_handler FROM rlog;

SELECT ddl_notify.unsubscribe('r_log');
DROP FUNCTION r_body(), r_var(), r_both(), r_uri(), r_sql(), r_open(), r_keep(), r_log(ddl_notify.event);
DROP TABLE rlog;
DROP FOREIGN DATA WRAPPER regress_ddln_r_w CASCADE;
DROP ROLE regress_ddln_r_u;
CALL ddl_notify.deliver();
DROP EXTENSION ddl_notify;
