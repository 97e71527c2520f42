--
-- 021_bad_input: hostile and nonsensical input to every entry point
--
-- Proves the contract's bad-input promise: "bad input gets a clear error
-- with a proper SQLSTATE and nothing half-done: an unknown or wrongly-typed
-- handler, a duplicate name, NULLs, too many subscribers, a caller without
-- the grant" (the grant part, G10, is in 020_privileges).  Each refusal is
-- shown with its SQLSTATE, followed by the state it must not have changed
-- (subscribers and events).  Also: input that looks dangerous but is valid
-- (SQL in a name, 1 MB statements, names and identifiers in other scripts)
-- is accepted and handled as plain data; settings refuse nonsense values.
-- Object types are checked against the names PostgreSQL reports and folded
-- to lower case (catches: object_types stored unchecked, which then
-- silently filtered out every event); a timeout past the last timestamp is
-- 22023 (catches: the timestamp arithmetic's own 22008).
-- Errors are shown with their SQLSTATE only (VERBOSITY sqlstate); nothing
-- here prints an OID, an id or a timestamp.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;
SET client_min_messages = warning;

CREATE TABLE bad_log (n serial, ident text, query_length int, query_md5 text, schema_name text);
CREATE FUNCTION h_ok(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.bad_log (ident, query_length, query_md5, schema_name)
	VALUES (e.object_identity, length(e.query), md5(e.query), e.schema_name)
$$;

-- wrongly-typed handlers
CREATE FUNCTION h_text(e text) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_two(e ddl_notify.event, x int) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_default(e ddl_notify.event, x int DEFAULT 0) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_none() RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_array(VARIADIC e ddl_notify.event[]) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_any(e anyelement) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE DOMAIN event_domain AS ddl_notify.event;
CREATE FUNCTION h_domain(e event_domain) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_int(e ddl_notify.event) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;
CREATE FUNCTION h_bool(e ddl_notify.event) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
CREATE FUNCTION h_setof(e ddl_notify.event) RETURNS SETOF void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_out(e ddl_notify.event, OUT x int) LANGUAGE sql AS $$ SELECT 1 $$;
CREATE FUNCTION h_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE PROCEDURE h_proc(e ddl_notify.event) LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_agg_step(s int, e ddl_notify.event) RETURNS int LANGUAGE sql AS $$ SELECT s $$;
CREATE AGGREGATE h_agg(ddl_notify.event) (sfunc = h_agg_step, stype = int);
CREATE FUNCTION h_win(e ddl_notify.event) RETURNS void LANGUAGE internal WINDOW AS 'window_row_number';
CALL ddl_notify.deliver();

-- "nothing changed" is this line, every time
\set state 'SELECT (SELECT count(*) FROM ddl_notify.subscriber) AS subscribers, (SELECT count(*) FROM ddl_notify.event) AS events, (SELECT count(*) FROM ddl_notify.dead_letter) AS dead_letters'
:state;

--
-- Names: NULL, empty, too long (in bytes, multibyte too)
--
SELECT ddl_notify.subscribe(NULL, 'h_ok(ddl_notify.event)');
SELECT ddl_notify.subscribe('', 'h_ok(ddl_notify.event)');
SELECT ddl_notify.subscribe(repeat('x', 64), 'h_ok(ddl_notify.event)');
SELECT ddl_notify.subscribe(repeat('x', 1000000), 'h_ok(ddl_notify.event)');
SELECT ddl_notify.subscribe(repeat('é', 32), 'h_ok(ddl_notify.event)');		-- 64 bytes
SELECT ddl_notify.subscribe(repeat('日', 22), 'h_ok(ddl_notify.event)');		-- 66 bytes
SELECT ddl_notify.unsubscribe(NULL);
SELECT ddl_notify.unsubscribe('');
SELECT ddl_notify.unsubscribe(repeat('x', 64));
SELECT ddl_notify.skip(NULL, 1);
SELECT ddl_notify.skip('', 1);
SELECT ddl_notify.skip(repeat('x', 64), 1);
:state;
-- 63 bytes is the limit, in any script
SELECT ddl_notify.subscribe(repeat('x', 63), 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe(repeat('é', 31) || 'x', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe(repeat('日', 21), 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT octet_length(name) AS bytes, length(name) AS characters FROM ddl_notify.subscriber ORDER BY name COLLATE "C";
SELECT ddl_notify.unsubscribe(repeat('x', 63)),
	   ddl_notify.unsubscribe(repeat('é', 31) || 'x'),
	   ddl_notify.unsubscribe(repeat('日', 21));
:state;

--
-- Names that look like SQL are plain names
--
SELECT ddl_notify.subscribe($$x'); DROP TABLE ddl_notify.event; --$$, 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('"; DELETE FROM ddl_notify.subscriber; --', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe(E'back\\slash\nnew line\ttab', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('%s%n%d', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT name FROM ddl_notify.subscriber ORDER BY name COLLATE "C";
SELECT to_regclass('ddl_notify.event') IS NOT NULL AS event_table_exists;
CREATE TABLE injected_t ();
CALL ddl_notify.deliver();
SELECT name, pending, delivered FROM ddl_notify.subscriber_status ORDER BY name COLLATE "C";
SELECT ident, count(*) FROM bad_log GROUP BY 1 ORDER BY 1;
-- the same strings reach the same subscribers
SELECT ddl_notify.skip($$x'); DROP TABLE ddl_notify.event; --$$, 0);
SELECT ddl_notify.unsubscribe($$x'); DROP TABLE ddl_notify.event; --$$),
	   ddl_notify.unsubscribe('"; DELETE FROM ddl_notify.subscriber; --'),
	   ddl_notify.unsubscribe(E'back\\slash\nnew line\ttab'),
	   ddl_notify.unsubscribe('%s%n%d');
SELECT to_regclass('ddl_notify.event') IS NOT NULL AS event_table_exists;
TRUNCATE bad_log;
:state;

--
-- Handlers: NULL, unknown, wrongly typed, not a plain function
--
SELECT ddl_notify.subscribe('h', NULL);
SELECT ddl_notify.subscribe('h', 'no_such_function(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'h_ok');			-- a name is not a signature
SELECT ddl_notify.subscribe('h', 0::regprocedure);
SELECT ddl_notify.subscribe('h', 4294967295::oid::regprocedure);
SELECT ddl_notify.subscribe('h', 'h_text(text)');
SELECT ddl_notify.subscribe('h', 'h_two(ddl_notify.event, int)');
SELECT ddl_notify.subscribe('h', 'h_default(ddl_notify.event, int)');
SELECT ddl_notify.subscribe('h', 'h_none()');
SELECT ddl_notify.subscribe('h', 'h_array(ddl_notify.event[])');
SELECT ddl_notify.subscribe('h', 'h_any(anyelement)');
SELECT ddl_notify.subscribe('h', 'h_domain(event_domain)');
SELECT ddl_notify.subscribe('h', 'h_int(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'h_bool(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'h_setof(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'h_out(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'h_trigger()');
SELECT ddl_notify.subscribe('h', 'h_proc(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'h_agg(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'h_win(ddl_notify.event)');
SELECT ddl_notify.subscribe('h', 'pg_catalog.now()');
SELECT ddl_notify.subscribe('h', 'ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean)');
SELECT ddl_notify.subscribe('h', 'ddl_notify.is_pending(bigint, xid8, integer, pg_snapshot, xid8)');
:state;

--
-- Filters and options
--
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', command_tags => '{}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', command_tags => '{NULL}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', command_tags => '{"CREATE TABLE", NULL}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', command_tags => '{"CREATE TABEL"}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', command_tags => '{"CREATE TABLE; DROP TABLE ddl_notify.event"}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', command_tags => '{{"CREATE TABLE"}}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', object_types => '{}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', object_types => '{NULL}');
-- object types as PostgreSQL reports them: a misspelling is refused, with a hint
\set VERBOSITY default
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', object_types => '{tabel}');
\set VERBOSITY sqlstate
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', object_types => '{table, "materialized  view"}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', schemas => '{}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', schemas => '{NULL}');
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', max_attempts => 0);
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', max_attempts => -1);
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', echo => NULL);
:state;
-- object types are folded to the lower case PostgreSQL reports them in
BEGIN;
SELECT ddl_notify.subscribe('types', 'h_ok(ddl_notify.event)', object_types => '{TABLE, "Table Column", index}') > 0 AS subscribed;
SELECT object_types FROM ddl_notify.subscriber WHERE name = 'types';
ROLLBACK;
-- command tags are matched as PostgreSQL spells them, whatever the case given
SELECT ddl_notify.subscribe('f', 'h_ok(ddl_notify.event)', command_tags => '{"create table", "Drop Table"}',
							max_attempts => 2147483647) > 0 AS subscribed;
SELECT name, command_tags, max_attempts FROM ddl_notify.subscriber_status;
SELECT ddl_notify.unsubscribe('f');

--
-- Duplicate names; unknown subscribers; skip of events that are not pending
--
SELECT ddl_notify.subscribe('dup', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('dup', 'h_ok(ddl_notify.event)');
SELECT ddl_notify.subscribe('dup', 'h_text(text)');
-- names are case- and space-sensitive: these are other names
SELECT ddl_notify.subscribe('Dup', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('dup ', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT name FROM ddl_notify.subscriber ORDER BY name COLLATE "C";
-- in one transaction: the second fails, the first is not committed either
BEGIN;
SELECT ddl_notify.subscribe('twice', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('twice', 'h_ok(ddl_notify.event)');
COMMIT;
-- a savepoint rolled back takes its subscription with it
BEGIN;
SAVEPOINT a;
SELECT ddl_notify.subscribe('in_savepoint', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
ROLLBACK TO SAVEPOINT a;
COMMIT;
-- subscribe() cannot be prepared
BEGIN;
SELECT ddl_notify.subscribe('prepared', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
PREPARE TRANSACTION 'regress_ddln_subscribe';
SELECT count(*) AS prepared_xacts FROM pg_prepared_xacts WHERE gid = 'regress_ddln_subscribe';
SELECT name FROM ddl_notify.subscriber ORDER BY name COLLATE "C";
:state;

SELECT ddl_notify.unsubscribe('nobody');
SELECT ddl_notify.unsubscribe('DUP');
SELECT ddl_notify.skip('nobody', 1);
CREATE TABLE skip_t ();
SELECT id AS skip_t_event FROM ddl_notify.event WHERE object_identity = 'public.skip_t' \gset
SELECT ddl_notify.skip('dup', NULL);
SELECT ddl_notify.skip('dup', -1);
SELECT ddl_notify.skip('dup', 0);
SELECT ddl_notify.skip('dup', 9223372036854775807);
SELECT ddl_notify.skip('dup', :skip_t_event + 1000000);
:state;
SELECT name, pending, skipped FROM ddl_notify.subscriber_status ORDER BY name COLLATE "C";
-- skipped once: the second time it is no longer pending
SELECT ddl_notify.skip('dup', :skip_t_event);
SELECT ddl_notify.skip('dup', :skip_t_event);
SELECT name, pending, skipped FROM ddl_notify.subscriber_status ORDER BY name COLLATE "C";
-- an event committed before the subscriber subscribed is not pending for it
SELECT ddl_notify.subscribe('late', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.skip('late', :skip_t_event);
SELECT ddl_notify.unsubscribe('late');
CALL ddl_notify.deliver();
SELECT ddl_notify.unsubscribe('dup'), ddl_notify.unsubscribe('Dup'), ddl_notify.unsubscribe('dup ');
SELECT ddl_notify.unsubscribe('dup');
TRUNCATE bad_log;
:state;

--
-- Delivery entry points misused (a DO block at top level may CALL deliver():
-- it is not atomic)
--
BEGIN;
CALL ddl_notify.deliver();
ROLLBACK;
DO $$ BEGIN CALL ddl_notify.deliver(); END $$;
CREATE FUNCTION call_deliver() RETURNS void LANGUAGE plpgsql AS $$ BEGIN CALL ddl_notify.deliver(); END $$;
SELECT call_deliver();
SELECT ddl_notify.deliver();
SELECT ddl_notify.wait_for_delivery(NULL);
SELECT ddl_notify.wait_for_delivery('-1 second');
-- a timeout past the last timestamp is refused as an argument (22023), not 22008
SELECT ddl_notify.wait_for_delivery('1000000 years');
SELECT ddl_notify.wait_for_delivery('-1000000 years');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ddl_notify.wait_for_delivery('1 second');
ROLLBACK;
SELECT ddl_notify.wait_for_delivery('0');
:state;

--
-- The subscriber limit: 64 per database
--
SELECT count(ddl_notify.subscribe('limit_' || g, 'h_ok(ddl_notify.event)')) AS subscribed
FROM generate_series(1, 64) g;
SELECT ddl_notify.subscribe('limit_65', 'h_ok(ddl_notify.event)');
SELECT count(*) AS subscribers, min(slot) AS min_slot, max(slot) AS max_slot,
	   count(DISTINCT slot) AS distinct_slots FROM ddl_notify.subscriber;
-- the 64 are all delivered, the 64th slot (the sign bit) too
CREATE TABLE limit_t ();
CALL ddl_notify.deliver();
SELECT count(*) AS handler_calls, count(DISTINCT n) FROM bad_log WHERE ident = 'public.limit_t';
SELECT count(*) AS not_delivered FROM ddl_notify.subscriber_status WHERE pending > 0 OR delivered <> 1;
SELECT count(*) AS events_left FROM ddl_notify.event;
-- one leaves, one more fits, in the freed slot
SELECT slot AS freed_slot FROM ddl_notify.subscriber WHERE name = 'limit_17' \gset
SELECT ddl_notify.unsubscribe('limit_17');
SELECT ddl_notify.subscribe('limit_65', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
SELECT slot = :freed_slot AS took_freed_slot FROM ddl_notify.subscriber WHERE name = 'limit_65';
SELECT ddl_notify.subscribe('limit_66', 'h_ok(ddl_notify.event)');
SELECT count(ddl_notify.unsubscribe(name)) AS unsubscribed FROM ddl_notify.subscriber;
TRUNCATE bad_log;
:state;

--
-- Big statements: with ddl_notify.max_query_length = -1 (no cap), 1 MB of
-- text is recorded and delivered whole (the cap itself: 030_hostile)
--
SET ddl_notify.max_query_length = -1;
SELECT ddl_notify.subscribe('big', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE big_t ();
SELECT repeat('0123456789abcdef', 65536) AS big \gset
COMMENT ON TABLE big_t IS :'big';
CREATE VIEW big_v AS SELECT :'big'::text AS big;
-- a 1 MB password in a connection string is redacted
SELECT 'password=' || repeat('x', 1048576) AS bigsecret \gset
COMMENT ON VIEW big_v IS :'bigsecret';
SELECT command_tag, object_identity, length(query) AS query_length,
	   query = 'COMMENT ON TABLE big_t IS ''' || :'big' || '''' AS comment_query_whole,
	   query = 'CREATE VIEW big_v AS SELECT ''' || :'big' || '''::text AS big' AS view_query_whole
FROM ddl_notify.event WHERE object_identity IN ('public.big_t', 'public.big_v') ORDER BY id;
CALL ddl_notify.deliver();
SELECT ident, query_length, query_md5 = md5('COMMENT ON TABLE big_t IS ''' || :'big' || '''') AS comment_md5_ok,
	   query_md5 = md5('CREATE VIEW big_v AS SELECT ''' || :'big' || '''::text AS big') AS view_md5_ok,
	   query_md5 = md5('COMMENT ON VIEW big_v IS ''password=********''') AS redacted_md5_ok
FROM bad_log ORDER BY n;
SELECT name, pending, delivered, attempts FROM ddl_notify.subscriber_status;
DROP VIEW big_v;
DROP TABLE big_t;
CALL ddl_notify.deliver();
SELECT ddl_notify.unsubscribe('big');
RESET ddl_notify.max_query_length;
TRUNCATE bad_log;

--
-- Names in other scripts: subscribers, schemas, tables, columns
--
SELECT ddl_notify.subscribe('подписчик', 'h_ok(ddl_notify.event)', schemas => '{схема}') > 0 AS subscribed;
SELECT ddl_notify.subscribe('購読者', 'h_ok(ddl_notify.event)', object_types => '{table}') > 0 AS subscribed;
SELECT ddl_notify.subscribe('مشترك 🐘', 'h_ok(ddl_notify.event)', command_tags => '{CREATE TABLE}') > 0 AS subscribed;
CREATE SCHEMA "схема";
CREATE TABLE "схема"."таблица" ("столбец" int);
CREATE TABLE "表格" ("列" int);
CREATE TABLE "جدول 🐘" ();
ALTER TABLE "схема"."таблица" RENAME "столбец" TO "колонка";
SELECT command_tag, object_type, schema_name, object_identity FROM ddl_notify.event ORDER BY id;
-- the identities name the objects they say
SELECT object_identity, classid = 'pg_class'::regclass AND objid = to_regclass(object_identity) AS identity_resolves
FROM ddl_notify.event WHERE object_type = 'table' ORDER BY id;
CALL ddl_notify.deliver();
SELECT name, pending, delivered, filtered FROM ddl_notify.subscriber_status ORDER BY name COLLATE "C";
SELECT ident, schema_name, count(*) FROM bad_log GROUP BY 1, 2 ORDER BY ident COLLATE "C", schema_name COLLATE "C";
SELECT ddl_notify.skip('подписчик', 0);
SELECT ddl_notify.unsubscribe('подписчик'), ddl_notify.unsubscribe('購読者'), ddl_notify.unsubscribe('مشترك 🐘');
DROP SCHEMA "схема" CASCADE;
DROP TABLE "表格", "جدول 🐘";
CALL ddl_notify.deliver();
TRUNCATE bad_log;
:state;

--
-- Settings: nonsense values are refused, the value stays what it was
--
SET ddl_notify.batch_size = 0;
SET ddl_notify.batch_size = -1;
SET ddl_notify.batch_size = 'abc';
SET ddl_notify.batch_size = 100001;
SET ddl_notify.batch_size = '10ms';
SET ddl_notify.batch_size = 1.5e10;
SET ddl_notify.retry_initial_delay = -1;
SET ddl_notify.retry_initial_delay = '-5s';
SET ddl_notify.retry_initial_delay = '1 fortnight';
SET ddl_notify.retry_max_delay = -1;
SET ddl_notify.retry_max_delay = 'soon';
SET ddl_notify.handler_timeout = 'x';
SET ddl_notify.handler_timeout = -1;
SET ddl_notify.capture_temp = 'maybe';
SET ddl_notify.capture_temp = 2;
SET ddl_notify.capture_query = 'maybe';
SET ddl_notify.capture_query = '';
SET ddl_notify.poll_interval = 5;
SET ddl_notify.poll_interval = '10s';
SET ddl_notify.stream_interval = 5;
SET ddl_notify.max_workers = 1;
SET ddl_notify.max_workers = -1;
SET ddl_notify.no_such_setting = 1;
SELECT set_config('ddl_notify.batch_size', '0', false);
SELECT name, setting FROM pg_settings WHERE name LIKE 'ddl\_notify.%' AND name <> 'ddl_notify.retry_initial_delay'
ORDER BY name;
-- the limits themselves are accepted
SET ddl_notify.batch_size = 1;
SET ddl_notify.batch_size = 100000;
SET ddl_notify.handler_timeout = 0;
SET ddl_notify.retry_max_delay = 0;
SET ddl_notify.capture_temp = 'on';
SET ddl_notify.capture_query = false;
SELECT name, setting FROM pg_settings WHERE name LIKE 'ddl\_notify.%' AND name <> 'ddl_notify.retry_initial_delay'
ORDER BY name;
RESET ddl_notify.batch_size;
RESET ddl_notify.handler_timeout;
RESET ddl_notify.retry_max_delay;
RESET ddl_notify.capture_temp;
RESET ddl_notify.capture_query;
:state;

--
-- Clean up
--
DROP EXTENSION ddl_notify CASCADE;
DROP TABLE bad_log, injected_t, skip_t, limit_t;
DROP FUNCTION h_text(text), h_none(), h_any(anyelement), h_trigger(), call_deliver();
