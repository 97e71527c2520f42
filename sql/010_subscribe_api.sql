--
-- 010_subscribe_api: the subscriber API and every refusal
--
-- Proves: G7 (last error, attempts and next retry visible in SQL; skip; opt-in
-- dead letters; nothing dropped silently), and the contract's "bad input gets
-- a clear error with a proper SQLSTATE and nothing half-done" for subscribe,
-- unsubscribe and skip.  Delivery is driven by hand (no worker in pg_regress).
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY default
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;

CREATE TABLE handled (sub text, tag text, ident text, n serial);
CREATE FUNCTION h_log(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.handled (sub, tag, ident) VALUES ('log', e.command_tag, e.object_identity) $$;
CREATE FUNCTION h_tables(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.handled (sub, tag, ident) VALUES ('tables', e.command_tag, e.object_identity) $$;

-- wrong handlers
CREATE FUNCTION h_two(e ddl_notify.event, x int) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_text(e text) RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_int(e ddl_notify.event) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;
CREATE FUNCTION h_set(e ddl_notify.event) RETURNS SETOF void LANGUAGE sql AS $$ SELECT $$;
CREATE PROCEDURE h_proc(e ddl_notify.event) LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION h_agg_step(s int, e ddl_notify.event) RETURNS int LANGUAGE sql AS $$ SELECT s $$;
CREATE AGGREGATE h_agg(ddl_notify.event) (sfunc = h_agg_step, stype = int);
CREATE FUNCTION h_win(e ddl_notify.event) RETURNS void LANGUAGE internal WINDOW AS 'window_row_number';

-- refusals: each one an error with its SQLSTATE, nothing written
\set VERBOSITY sqlstate
SELECT ddl_notify.subscribe(NULL, 'h_log(ddl_notify.event)');
SELECT ddl_notify.subscribe('', 'h_log(ddl_notify.event)');
SELECT ddl_notify.subscribe(repeat('x', 64), 'h_log(ddl_notify.event)');
SELECT ddl_notify.subscribe('a', NULL);
SELECT ddl_notify.subscribe('a', 'no_such_function(ddl_notify.event)');
SELECT ddl_notify.subscribe('a', 'h_two(ddl_notify.event, int)');
SELECT ddl_notify.subscribe('a', 'h_text(text)');
SELECT ddl_notify.subscribe('a', 'h_int(ddl_notify.event)');
SELECT ddl_notify.subscribe('a', 'h_set(ddl_notify.event)');
SELECT ddl_notify.subscribe('a', 'h_proc(ddl_notify.event)');
SELECT ddl_notify.subscribe('a', 'h_agg(ddl_notify.event)');
SELECT ddl_notify.subscribe('a', 'h_win(ddl_notify.event)');
SELECT ddl_notify.subscribe('a', 'h_log(ddl_notify.event)', command_tags => '{}');
SELECT ddl_notify.subscribe('a', 'h_log(ddl_notify.event)', command_tags => '{NULL}');
SELECT ddl_notify.subscribe('a', 'h_log(ddl_notify.event)', command_tags => '{"CREATE TABEL"}');
SELECT ddl_notify.subscribe('a', 'h_log(ddl_notify.event)', schemas => '{}');
SELECT ddl_notify.subscribe('a', 'h_log(ddl_notify.event)', max_attempts => 0);
SELECT ddl_notify.subscribe('a', 'h_log(ddl_notify.event)', echo => NULL);
SELECT ddl_notify.unsubscribe(NULL);
SELECT ddl_notify.unsubscribe('nobody');
SELECT ddl_notify.skip('nobody', 1);
SELECT ddl_notify.skip(NULL, 1);
\set VERBOSITY default
SELECT count(*) AS subscribers_after_refusals FROM ddl_notify.subscriber;

-- a good subscription; its id is an int
SELECT ddl_notify.subscribe('log', 'h_log(ddl_notify.event)') > 0 AS subscribed;
-- duplicate name
\set VERBOSITY sqlstate
SELECT ddl_notify.subscribe('log', 'h_log(ddl_notify.event)');
\set VERBOSITY default
-- a failed subscribe inside a transaction leaves nothing behind
BEGIN;
SELECT ddl_notify.subscribe('tmp', 'h_log(ddl_notify.event)') > 0 AS subscribed;
ROLLBACK;
SELECT name FROM ddl_notify.subscriber ORDER BY name;

-- filters: command tags (spelled any case), object types, schemas
CREATE SCHEMA other;
SELECT ddl_notify.subscribe('tables', 'h_tables(ddl_notify.event)',
							command_tags => '{"create table", "DROP TABLE"}',
							schemas => '{public}') > 0 AS subscribed;
SELECT name, command_tags, object_types, schemas, echo, max_attempts
  FROM ddl_notify.subscriber_status ORDER BY name;

CREATE TABLE f1 (a int);
CREATE INDEX f1_a ON f1 (a);
CREATE TABLE other.f2 (a int);
DROP TABLE f1;
CALL ddl_notify.deliver();
SELECT sub, tag, ident FROM handled ORDER BY n;
SELECT name, pending, delivered, filtered, attempts FROM ddl_notify.subscriber_status ORDER BY name;
-- every row handled by both subscribers is gone
SELECT count(*) AS events_left FROM ddl_notify.event;

-- the subscriber limit: 64 subscribers per database
DO $$
BEGIN
	FOR i IN 3..64 LOOP
		PERFORM ddl_notify.subscribe('filler' || i, 'h_log(ddl_notify.event)',
									 command_tags => '{"CREATE SEQUENCE"}');
	END LOOP;
END
$$;
SELECT count(*) AS subscribers FROM ddl_notify.subscriber;
\set VERBOSITY default
SELECT ddl_notify.subscribe('one_too_many', 'h_log(ddl_notify.event)');
\set VERBOSITY sqlstate
SELECT ddl_notify.subscribe('one_too_many', 'h_log(ddl_notify.event)');
\set VERBOSITY default
-- freeing one slot makes room again
SELECT ddl_notify.unsubscribe('filler3');
SELECT ddl_notify.subscribe('one_more', 'h_log(ddl_notify.event)',
							command_tags => '{"CREATE SEQUENCE"}') > 0 AS subscribed;
DO $$
BEGIN
	FOR i IN 4..64 LOOP
		PERFORM ddl_notify.unsubscribe('filler' || i);
	END LOOP;
	PERFORM ddl_notify.unsubscribe('one_more');
END
$$;
SELECT name FROM ddl_notify.subscriber ORDER BY name;

-- G7: failures are visible, retried, skippable; dead letters are opt-in
TRUNCATE handled;
CREATE TABLE flaky_switch (fail boolean);
INSERT INTO flaky_switch VALUES (true);
CREATE FUNCTION h_flaky(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF (SELECT fail FROM public.flaky_switch) THEN
		RAISE EXCEPTION 'flaky handler refuses %', e.object_identity
			USING ERRCODE = 'P0001', DETAIL = 'switch is on';
	END IF;
	INSERT INTO public.handled (sub, tag, ident) VALUES ('flaky', e.command_tag, e.object_identity);
END
$$;
CREATE FUNCTION h_dead(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF (SELECT fail FROM public.flaky_switch) THEN
		RAISE EXCEPTION 'flaky handler refuses %', e.object_identity
			USING ERRCODE = 'P0001', DETAIL = 'switch is on';
	END IF;
	INSERT INTO public.handled (sub, tag, ident) VALUES ('dead', e.command_tag, e.object_identity);
END
$$;
SELECT ddl_notify.subscribe('flaky', 'h_flaky(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('dead', 'h_dead(ddl_notify.event)', max_attempts => 2) > 0 AS subscribed;
CREATE TABLE g1 ();
SELECT min(id) AS g1_event FROM ddl_notify.event WHERE object_identity = 'public.g1' \gset
CREATE TABLE g2 ();
CALL ddl_notify.deliver();
SELECT name, pending, delivered, attempts, last_error, last_error_sqlstate,
	   next_retry_at IS NOT NULL AS has_next_retry, dead_letters
  FROM ddl_notify.subscriber_status WHERE name IN ('flaky', 'dead') ORDER BY name;
-- the failing event is the first of the two; the second waits behind it (G5)
SELECT s.failing_event = :g1_event AS fails_on_g1
  FROM ddl_notify.subscriber_status s WHERE name = 'flaky';
-- second attempt: 'dead' reaches max_attempts and sends g1 to the dead-letter table,
-- then fails on g2 (attempt 1 of that one)
CALL ddl_notify.deliver();
SELECT name, attempts, dead_letters, pending FROM ddl_notify.subscriber_status
 WHERE name IN ('flaky', 'dead') ORDER BY name;
SELECT subscriber, event->>'object_identity' AS ident, attempts, sqlstate,
	   error LIKE 'flaky handler refuses public.g1%' AS error_kept
  FROM ddl_notify.dead_letter ORDER BY id;
-- skip: the operator skips g1 for 'flaky'; skipping again is refused
SELECT ddl_notify.skip('flaky', :g1_event);
-- g1 was its transaction's last event: the transaction left commit_order
-- with it (skip() deletes it by position; no sweep ran since)
SELECT count(*) AS xacts_without_events FROM ddl_notify.commit_order o
 WHERE NOT EXISTS (SELECT 1 FROM ddl_notify.event e WHERE e.xid = o.xid);
\set VERBOSITY sqlstate
SELECT ddl_notify.skip('flaky', :g1_event);
SELECT ddl_notify.skip('flaky', -1);
\set VERBOSITY default
SELECT name, attempts, failing_event, skipped, next_retry_at IS NULL AS retry_cleared
  FROM ddl_notify.subscriber_status WHERE name = 'flaky';
-- the cause is fixed: g2 is handled exactly once by both; g1 by neither
UPDATE flaky_switch SET fail = false;
CALL ddl_notify.deliver();
SELECT sub, ident, count(*) FROM handled WHERE sub IN ('flaky', 'dead') GROUP BY 1, 2 ORDER BY 1, 2;
SELECT name, pending, attempts, failing_event FROM ddl_notify.subscriber_status
 WHERE name IN ('flaky', 'dead') ORDER BY name;

-- unsubscribe releases pending rows: nothing accumulates without subscribers
UPDATE flaky_switch SET fail = true;
CREATE TABLE g3 ();
CALL ddl_notify.deliver();
SELECT count(*) > 0 AS rows_waiting_for_flaky FROM ddl_notify.event;
SELECT ddl_notify.unsubscribe(name) FROM ddl_notify.subscriber ORDER BY name;
SELECT count(*) AS events_left FROM ddl_notify.event;
CREATE TABLE g4 ();
CALL ddl_notify.deliver();
SELECT count(*) AS events_left_without_subscribers FROM ddl_notify.event;

-- deliver() refuses to run inside a transaction block
BEGIN;
CALL ddl_notify.deliver();
ROLLBACK;

DROP EXTENSION ddl_notify CASCADE;
DROP TABLE handled, flaky_switch, g1, g2, g3, g4;
DROP SCHEMA other CASCADE;
DROP FUNCTION h_text(text);
