--
-- 051_output_settings: G2 (complete capture) and the images of its
-- details: what an event says does not depend on the capturing session's
-- output settings, and the statement key says the settings its text must
-- be read under (src/relimage.c, DdlnImgOutputSettings; src/statementkey.c,
-- "settings"; docs/reference.md, "The payload").
--
-- Shown: a table made in a session with DateStyle "Postgres, DMY",
-- IntervalStyle sql_standard, TimeZone PST8PDT, extra_float_digits -3,
-- bytea_output escape and quote_all_identifiers on has the same "after"
-- image (dates, timestamps, intervals, floats, bytea and names as pg_dump's
-- settings print them) as the same table made under the defaults; a
-- domain's default likewise; the session's settings are back as they were
-- after the capture; details.statement.settings names the session's
-- DateStyle, IntervalStyle, TimeZone and standard_conforming_strings.
-- Catches: an image read under the session's settings (the first image
-- prints '01-02-2016' and differs from the second; a consumer in another
-- session reads it as January 2nd), settings left changed after the
-- capture, "settings" missing or read from the defaults rather than the
-- session.
--
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
RESET client_min_messages;
CREATE SCHEMA os;
CREATE FUNCTION os.last_image() RETURNS jsonb LANGUAGE sql AS $$
	SELECT details->'after' FROM ddl_notify.event
	WHERE object_type IN ('table', 'type', 'domain') ORDER BY id DESC LIMIT 1
$$;

-- the defaults of this test's session (pg_regress: DateStyle "Postgres, MDY")
RESET datestyle; RESET intervalstyle; RESET extra_float_digits; RESET bytea_output;
SET timezone = 'UTC';
CREATE TABLE os.plain (d date DEFAULT '2016-02-01', ts timestamptz DEFAULT '2000-01-01 08:00+00',
	i interval DEFAULT '1 day 02:00:00', f float8 DEFAULT 0.1, b bytea DEFAULT '\x0102',
	"Mixed" int, CHECK (d > '2000-01-01'));
SELECT os.last_image() AS plain_image \gset
CREATE DOMAIN os.dplain AS date DEFAULT '2016-02-01';
SELECT os.last_image() AS dplain_image \gset

SET datestyle = 'Postgres, DMY';
SET intervalstyle = 'sql_standard';
SET timezone = 'PST8PDT';
SET extra_float_digits = -3;
SET bytea_output = 'escape';
SET quote_all_identifiers = on;
CREATE TABLE os.odd (d date DEFAULT '01-02-2016', ts timestamptz DEFAULT '2000-01-01 00:00',
	i interval DEFAULT '1 day 02:00:00', f float8 DEFAULT 0.1, b bytea DEFAULT '\x0102',
	"Mixed" int, CHECK (d > '2000-01-01'));
SELECT os.last_image() AS odd_image \gset
CREATE DOMAIN os.dodd AS date DEFAULT '01-02-2016';
SELECT os.last_image() AS dodd_image \gset
-- the session's settings, as they were
SHOW datestyle;
SHOW intervalstyle;
SHOW timezone;
SHOW extra_float_digits;
SHOW bytea_output;
SHOW quote_all_identifiers;
-- what the statement's text is to be read under
SELECT object_type, details->'statement'->'settings' AS settings FROM ddl_notify.event
WHERE object_identity LIKE '%dodd%' ORDER BY id;
RESET ALL;

-- the two images, but for the table's name: the same
SELECT jsonb_set(jsonb_set(:'odd_image'::jsonb, '{name}', '"plain"'), '{constraints,0,name}', '"plain_d_check"')
	= :'plain_image'::jsonb AS same_table_image;
SELECT jsonb_set(:'dodd_image'::jsonb, '{name}', '"dplain"') = :'dplain_image'::jsonb AS same_domain_image;
SELECT c->>'name' AS name, c->>'default' AS "default"
FROM jsonb_array_elements((:'odd_image'::jsonb)->'columns') c ORDER BY (c->>'attnum')::int;
SELECT c->>'definition' AS check_definition FROM jsonb_array_elements((:'odd_image'::jsonb)->'constraints') c;
SELECT (:'dodd_image'::jsonb)->>'default' AS domain_default;

DROP SCHEMA os CASCADE;
