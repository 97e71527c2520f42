--
-- 038_redaction: the stored statement text is redacted as the parser read
-- the statement, fails closed, and is silent (issue 29, item 6).
--
-- Proves G10 (stored text never holds a password: event.query, hence the
-- handler's argument, the WAL message and dead letters, which are built from
-- the same value) and G0 (redaction adds no error, warning or notice to any
-- statement).  Each part names the code change it catches; with the
-- redaction of 0.1.0 (the core scanner run with the settings of the moment)
-- parts 1, 2 and 3 fail, and without reading inside constants part 4 fails
-- (test/mutations/redact_*.patch make the narrower changes):
-- 1. "SET standard_conforming_strings = off; CREATE USER MAPPING ...
--    OPTIONS (user 'a\', password '...')" sent as one string is parsed with
--    the setting on; the password is redacted, for the handler too.  Also the
--    other way round (off when the string arrives, SET on inside it), and a
--    shape that the setting of the moment scans without error but with the
--    password outside any constant.  Catches: redaction with the settings in
--    force when capture runs (0.1.0: the first statement failed with
--    "unterminated quoted string", the third stored its password); reading
--    one way only (redact_one_reading.patch: the second stored withheld).
-- 2. Two valid CREATE SERVER statements of the same shape succeed: a
--    backslash before the closing quote ("unterminated quoted string"
--    before) and U&'...' ("unsafe use of string constant with Unicode
--    escapes" before).  Catches: scanning with the settings of the moment,
--    or letting a scanner error through.
-- 3. A statement with a name longer than NAMEDATALEN and a password option
--    shows PostgreSQL's "identifier will be truncated" NOTICE once, not
--    twice.  Catches: redaction with the core scanner (it repeats notices).
-- 4. Passwords in function bodies: dblink_connect's connection strings
--    (keyword = value and URI), ALTER ROLE ... PASSWORD in the body and in
--    EXECUTE'd strings (quoted and dollar-quoted), a password in a SQL
--    function's body, URIs with a password within a text and a comment,
--    "secret := '...'", a body read both ways (a backslash in it); a body
--    redaction cannot read (an open comment) is replaced whole; bodies that
--    only mention a password, with an apostrophe in a comment, are kept
--    byte for byte.  Catches: not reading inside constants
--    (redact_no_inner.patch); reading them strictly (the kept bodies
--    withheld).
-- 5. A URI's password in a comment of the statement is redacted; the
--    rest of the comment is kept.  Catches: URIs redacted only inside
--    constants.
-- Then: no stored text and no handler argument matches 'hunter'.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
SET client_min_messages = warning;
CREATE ROLE regress_ddln_r_u;
CREATE FOREIGN DATA WRAPPER regress_ddln_r_w;
CREATE SERVER regress_ddln_r_s FOREIGN DATA WRAPPER regress_ddln_r_w;
CREATE TABLE rlog (n serial, query text);
CREATE FUNCTION r_log(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.rlog (query) VALUES (e.query) $$;
SELECT ddl_notify.subscribe('r_log', 'r_log(ddl_notify.event)') > 0 AS subscribed;
SELECT COALESCE(max(id), 0) AS before FROM ddl_notify.event \gset
RESET client_min_messages;

-- 1. a SET in the same string takes effect for later strings only (each
-- line sets what it needs first: psql splits lines with the setting it knows)
SET standard_conforming_strings = off \; CREATE USER MAPPING FOR regress_ddln_r_u SERVER regress_ddln_r_s OPTIONS (user 'a\', password 'hunter1');
SHOW standard_conforming_strings;
SET standard_conforming_strings = off;
SET standard_conforming_strings = on \; CREATE USER MAPPING FOR PUBLIC SERVER regress_ddln_r_s OPTIONS (user 'b\'', password 'hunter2');
SHOW standard_conforming_strings;
-- a shape the setting of the moment reads without error, the password outside any constant
RESET standard_conforming_strings;
SET standard_conforming_strings = off \; CREATE USER MAPPING FOR CURRENT_USER SERVER regress_ddln_r_s OPTIONS (user 'a\', password 'hunter13', note E'\'', x '');
RESET standard_conforming_strings;

-- 2. valid statements that redaction must not make fail
SET standard_conforming_strings = off \; CREATE SERVER regress_ddln_r_s2 FOREIGN DATA WRAPPER regress_ddln_r_w OPTIONS (dir 'C:\');
RESET standard_conforming_strings;
SET standard_conforming_strings = off \; CREATE SERVER regress_ddln_r_s3 FOREIGN DATA WRAPPER regress_ddln_r_w OPTIONS (name U&'\0041');
RESET standard_conforming_strings;

-- 3. PostgreSQL's notice, once
CREATE SERVER regress_ddln_r_s4_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa FOREIGN DATA WRAPPER regress_ddln_r_w
	OPTIONS (passwd 'hunter3');

-- 4. function bodies
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

-- 5. a URI in a comment
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
