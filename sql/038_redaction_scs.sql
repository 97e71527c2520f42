--
-- 038_redaction_scs: redaction reads a statement with the
-- standard_conforming_strings its parser used (issue 29, item 6).
-- PostgreSQL 19 has no standard_conforming_strings = off: there the file
-- stops at its start (expected/038_redaction_scs_1.out).
--
-- Proves G10 (stored text never holds a password: event.query and the
-- handler's argument) and G0 (redaction adds no error to any statement).
-- With the redaction of 0.1.0 (PostgreSQL's scanner run with the settings
-- of the moment) every statement of parts 1 and 2 fails or stores its
-- password:
-- 1. "SET standard_conforming_strings = off; CREATE USER MAPPING ...
--    OPTIONS (user 'a\', password '...')" sent as one string is parsed with
--    the setting on; the password is redacted, for the handler too.  Also the
--    other way round (off when the string arrives, SET on inside it), and a
--    shape that the setting of the moment scans without error but with the
--    password outside any constant.  Catches: redaction with the settings in
--    force when capture runs (0.1.0: the first two statements failed with
--    "unterminated quoted string", the third stored its password); reading
--    one way only (test/mutations/redact_one_reading.patch: the second
--    stored withheld).
-- 2. Two valid CREATE SERVER statements of the same shape succeed: a
--    backslash before the closing quote ("unterminated quoted string"
--    before) and U&'...' ("unsafe use of string constant with Unicode
--    escapes" before).  Catches: scanning with the settings of the moment,
--    or letting a scanner error through.
-- Then: no stored text and no handler argument matches 'hunter'.
--
SELECT current_setting('server_version_num')::int >= 190000 AS scs_always_on \gset
\if :scs_always_on
\quit
\endif
CREATE EXTENSION IF NOT EXISTS ddl_notify;
SET client_min_messages = warning;
CREATE ROLE regress_ddln_rs_u;
CREATE FOREIGN DATA WRAPPER regress_ddln_rs_w;
CREATE SERVER regress_ddln_rs_s FOREIGN DATA WRAPPER regress_ddln_rs_w;
CREATE TABLE rslog (n serial, query text);
CREATE FUNCTION rs_log(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.rslog (query) VALUES (e.query) $$;
SELECT ddl_notify.subscribe('rs_log', 'rs_log(ddl_notify.event)') > 0 AS subscribed;
SELECT COALESCE(max(id), 0) AS before FROM ddl_notify.event \gset
RESET client_min_messages;

-- 1. a SET in the same string takes effect for later strings only (each
-- line sets what it needs first: psql splits lines with the setting it knows)
SET standard_conforming_strings = off \; CREATE USER MAPPING FOR regress_ddln_rs_u SERVER regress_ddln_rs_s OPTIONS (user 'a\', password 'hunter1');
SHOW standard_conforming_strings;
SET standard_conforming_strings = off;
SET standard_conforming_strings = on \; CREATE USER MAPPING FOR PUBLIC SERVER regress_ddln_rs_s OPTIONS (user 'b\'', password 'hunter2');
SHOW standard_conforming_strings;
-- a shape the setting of the moment reads without error, the password outside any constant
RESET standard_conforming_strings;
SET standard_conforming_strings = off \; CREATE USER MAPPING FOR CURRENT_USER SERVER regress_ddln_rs_s OPTIONS (user 'a\', password 'hunter13', note E'\'', x '');
RESET standard_conforming_strings;

-- 2. valid statements that redaction must not make fail
SET standard_conforming_strings = off \; CREATE SERVER regress_ddln_rs_s2 FOREIGN DATA WRAPPER regress_ddln_rs_w OPTIONS (dir 'C:\');
RESET standard_conforming_strings;
SET standard_conforming_strings = off \; CREATE SERVER regress_ddln_rs_s3 FOREIGN DATA WRAPPER regress_ddln_rs_w OPTIONS (name U&'\0041');
RESET standard_conforming_strings;

SET client_min_messages = warning;
SELECT command_tag, query FROM ddl_notify.event WHERE id > :before ORDER BY id;
SELECT count(*) AS leaked FROM ddl_notify.event WHERE id > :before AND query ~ 'hunter';
CALL ddl_notify.deliver();
SELECT count(*) AS handled, count(*) FILTER (WHERE query ~ 'hunter') AS leaked_to_handler FROM rslog;

SELECT ddl_notify.unsubscribe('rs_log');
DROP FUNCTION rs_log(ddl_notify.event);
DROP TABLE rslog;
DROP FOREIGN DATA WRAPPER regress_ddln_rs_w CASCADE;
DROP ROLE regress_ddln_rs_u;
CALL ddl_notify.deliver();
DROP EXTENSION ddl_notify;
