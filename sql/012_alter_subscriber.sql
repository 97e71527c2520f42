--
-- 012_alter_subscriber: alter_subscriber(), pause() and resume()
--
-- Proves (operating subscribers; G5, G6, G7, G10 for the changes):
-- 1. Bad input is refused with its SQLSTATE and nothing changes: NULL or
--    unknown names (22004, 42704), a handler of another shape (42804), a
--    negative max_attempts (22023), unknown command tags or object types
--    (22023); a role may change only its own subscribers (42501) and may
--    give one only a handler it may EXECUTE (42501).  Catches: an
--    alter_subscriber() without subscribe()'s checks (trust.c).
-- 2. pause(): the subscriber keeps its position; its events wait (pending
--    grows, state paused); the others are delivered; resume() delivers what
--    waited, in order, exactly once.  Catches: an engine that does not skip
--    a paused subscriber; a resume that loses the position (events lost).
-- 3. alter_subscriber() changes the handler from the next event, filters
--    (an empty array receives everything again), max_attempts (0: for
--    ever) and echo, and keeps what it is not given.
-- 4. wait_for_delivery() does not wait for a paused subscriber; the lag
--    in time (subscriber_status.lag) and delivery_state() are data.
-- Delivery is driven by hand (no worker in pg_regress).
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
SET client_min_messages = warning;
SET ddl_notify.retry_initial_delay = 0;
\set status 'SELECT name, state, pending, command_tags, object_types, schemas, max_attempts, echo FROM ddl_notify.subscriber_status ORDER BY name'

CREATE TABLE got (who text, tag text, ident text, n serial);
CREATE FUNCTION h_a(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.got (who, tag, ident) VALUES ('a', e.command_tag, e.object_identity) $$;
CREATE FUNCTION h_a2(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.got (who, tag, ident) VALUES ('a2', e.command_tag, e.object_identity) $$;
CREATE FUNCTION h_b(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.got (who, tag, ident) VALUES ('b', e.command_tag, e.object_identity) $$;
CREATE FUNCTION h_int(e ddl_notify.event) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;
SELECT ddl_notify.subscribe('a', 'h_a(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('b', 'h_b(ddl_notify.event)') > 0 AS subscribed;

-- 1. refusals, nothing changed
SELECT ddl_notify.alter_subscriber(NULL, max_attempts => 3);
SELECT ddl_notify.alter_subscriber('nobody', max_attempts => 3);
SELECT ddl_notify.alter_subscriber('a', handler => 'h_int(ddl_notify.event)');
SELECT ddl_notify.alter_subscriber('a', max_attempts => -1);
SELECT ddl_notify.alter_subscriber('a', command_tags => '{"CREATE TABEL"}');
SELECT ddl_notify.alter_subscriber('a', object_types => '{tabel}');
SELECT ddl_notify.alter_subscriber('a', object_types => '{NULL}');
SELECT ddl_notify.pause(NULL);
SELECT ddl_notify.pause('nobody');
SELECT ddl_notify.resume('nobody');
:status;

-- another role: only its own subscribers, only handlers it may execute
CREATE ROLE regress_ddln_alter_c;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_alter_c;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
	ddl_notify.alter_subscriber(text, regprocedure, text[], text[], text[], integer, boolean, boolean),
	ddl_notify.pause(text), ddl_notify.resume(text), ddl_notify.unsubscribe(text)
	TO regress_ddln_alter_c;
GRANT INSERT ON got TO regress_ddln_alter_c;
GRANT USAGE ON SEQUENCE got_n_seq TO regress_ddln_alter_c;
CREATE FUNCTION h_secret(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT $$;
REVOKE EXECUTE ON FUNCTION h_secret(ddl_notify.event) FROM PUBLIC;
SET ROLE regress_ddln_alter_c;
SELECT ddl_notify.pause('a');
SELECT ddl_notify.alter_subscriber('a', echo => true);
SELECT ddl_notify.subscribe('c', 'h_a2(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.alter_subscriber('c', handler => 'h_secret(ddl_notify.event)');
SELECT ddl_notify.pause('c');
SELECT ddl_notify.resume('c');
SELECT ddl_notify.unsubscribe('c');
RESET ROLE;
:status;

-- 2. pause: a keeps its position, b goes on; resume delivers in order, once
SELECT ddl_notify.pause('a');
SELECT ddl_notify.pause('a');
CREATE TABLE p1 (x int);
CREATE TABLE p2 (x int);
CALL ddl_notify.deliver();
SELECT who, ident FROM got ORDER BY n;
:status;
SELECT ddl_notify.wait_for_delivery('0');
-- the lag in time, and how the database is served, as data
SELECT name, lag > '0'::interval AS lagging FROM ddl_notify.subscriber_status ORDER BY name;
SELECT mode, automatic, worker_pids, queued_since, next_retry_at FROM ddl_notify.delivery_state();
SELECT ddl_notify.resume('a');
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT who, ident FROM got ORDER BY n;
:status;
TRUNCATE got;

-- 3. a new handler from the next event; filters, max_attempts, echo
SELECT ddl_notify.alter_subscriber('a', handler => 'h_a2(ddl_notify.event)',
								   command_tags => '{"create table"}', object_types => '{TABLE}',
								   max_attempts => 5, echo => true);
:status;
CREATE TABLE p3 (x int);
CREATE INDEX p3_x ON p3 (x);
CALL ddl_notify.deliver();
SELECT who, tag, ident FROM got ORDER BY n;
-- an empty array receives everything again; NULL keeps; 0 retries for ever
SELECT ddl_notify.alter_subscriber('a', command_tags => '{}', object_types => '{}', max_attempts => 0);
SELECT ddl_notify.alter_subscriber('a');
:status;
SELECT handler FROM ddl_notify.subscriber WHERE name = 'a';
-- enabled => false / true is pause / resume
SELECT ddl_notify.alter_subscriber('a', enabled => false);
SELECT state FROM ddl_notify.subscriber_status WHERE name = 'a';
SELECT ddl_notify.alter_subscriber('a', enabled => true);
SELECT state FROM ddl_notify.subscriber_status WHERE name = 'a';

-- clean up
SELECT ddl_notify.unsubscribe('a');
SELECT ddl_notify.unsubscribe('b');
DROP TABLE got, p1, p2, p3;
DROP FUNCTION h_a(ddl_notify.event), h_a2(ddl_notify.event), h_b(ddl_notify.event),
	h_int(ddl_notify.event), h_secret(ddl_notify.event);
REVOKE ALL ON SCHEMA ddl_notify FROM regress_ddln_alter_c;
REVOKE ALL ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
	ddl_notify.alter_subscriber(text, regprocedure, text[], text[], text[], integer, boolean, boolean),
	ddl_notify.pause(text), ddl_notify.resume(text), ddl_notify.unsubscribe(text)
	FROM regress_ddln_alter_c;
DROP ROLE regress_ddln_alter_c;

-- leave the database as the next file expects it: without the extension
DROP EXTENSION ddl_notify;
