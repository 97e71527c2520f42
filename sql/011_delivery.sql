--
-- 011_delivery: what a handler's transaction may and may not believe
--
-- Proves:
-- G3  commit before belief: the TiDB notifier bug (docs/guarantees.md,
--     "Bugs it cannot have"): one subscriber always fails, one always
--     succeeds; the event is never deleted before the failing one succeeds and
--     the succeeding one gets it exactly once.  And a deferred foreign key: a
--     handler writes a row whose DEFERRABLE INITIALLY DEFERRED key is checked
--     inside the handler's call (the engine makes constraints immediate); the
--     event stays pending, the others are unaffected, and once the cause is
--     fixed it is handled exactly once.  A failure at COMMIT itself is
--     test/t/014_commit_failure.pl.  Catches: a row deleted once one
--     subscriber handled it (test/mutations/need_mask_empty.patch: the mask
--     of the slots that still need an event left empty).
-- G7  a failing handler in the middle of a batch: the events before it are
--     delivered, the failing one waits (with the ones after it), the other
--     subscriber is not delayed; a stuck handler is cancelled by
--     ddl_notify.handler_timeout and counts as a failed attempt.
-- G12 DDL run by a handler is tagged with its subscriber and not echoed back
--     to it (unless it asked for echo), but other subscribers get it.
-- G10 (part) a handler runs as the role that subscribed it.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;

CREATE TABLE handled (n serial, sub text, ident text, as_role name, origin text);
CREATE FUNCTION h_ok(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.handled (sub, ident, as_role, origin) VALUES ('ok', e.object_identity, current_user, e.origin) $$;
CREATE FUNCTION h_fail(e ddl_notify.event) RETURNS void LANGUAGE plpgsql
	AS $$ BEGIN RAISE EXCEPTION 'duplicate key, as in the TiDB report'; END $$;

-- G3, the TiDB scenario: 'fail' always fails, 'ok' always succeeds
SELECT ddl_notify.subscribe('fail', 'h_fail(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('ok', 'h_ok(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE tidb_t1000 ();
SELECT id AS t1000_event FROM ddl_notify.event WHERE object_identity = 'public.tidb_t1000' \gset
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
-- after three rounds: handled once by 'ok', never deleted, still pending for 'fail'
SELECT sub, ident, count(*) FROM handled GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) AS event_row_kept FROM ddl_notify.event WHERE id = :t1000_event;
SELECT name, pending, attempts, failing_event = :t1000_event AS failing_on_it
  FROM ddl_notify.subscriber_status ORDER BY name;
-- the bit of 'ok' is committed, the bit of 'fail' is not
SELECT processed = (1::bigint << (SELECT slot FROM ddl_notify.subscriber WHERE name = 'ok')) AS only_ok_bit
  FROM ddl_notify.event WHERE id = :t1000_event;
-- 'fail' is fixed: it gets the event once, and only then is the row deleted
CREATE OR REPLACE FUNCTION h_fail(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.handled (sub, ident, as_role) VALUES ('fail', e.object_identity, current_user) $$;
CALL ddl_notify.deliver();
SELECT sub, ident, count(*) FROM handled GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) AS event_row_kept FROM ddl_notify.event WHERE id = :t1000_event;
SELECT ddl_notify.unsubscribe('fail');
TRUNCATE handled;

-- G3: a deferred foreign key, checked inside the handler's call (not at COMMIT)
CREATE TABLE parent (id int PRIMARY KEY);
CREATE TABLE child (parent_id int REFERENCES parent DEFERRABLE INITIALLY DEFERRED, ident text);
CREATE FUNCTION h_child(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.child VALUES (1, e.object_identity) $$;
SELECT ddl_notify.subscribe('deferred', 'h_child(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE d1 ();
CREATE TABLE d2 ();
CALL ddl_notify.deliver();
SELECT count(*) AS child_rows FROM child;
SELECT name, pending, attempts, last_error_sqlstate, last_error LIKE '%violates foreign key constraint%' AS fk_error
  FROM ddl_notify.subscriber_status ORDER BY name;
-- 'ok' was not delayed
SELECT sub, ident FROM handled ORDER BY n;
INSERT INTO parent VALUES (1);
CALL ddl_notify.deliver();
SELECT ident, count(*) FROM child GROUP BY ident ORDER BY ident;
SELECT name, pending, attempts FROM ddl_notify.subscriber_status ORDER BY name;
SELECT ddl_notify.unsubscribe('deferred');
TRUNCATE handled;

-- G7: a failure in the middle of a batch; the events before it are delivered
CREATE TABLE picky_log (ident text);
CREATE FUNCTION h_picky(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF e.object_identity = 'public.m3' THEN
		RAISE EXCEPTION 'm3 is poison';
	END IF;
	INSERT INTO public.picky_log VALUES (e.object_identity);
END
$$;
SELECT ddl_notify.subscribe('picky', 'h_picky(ddl_notify.event)') > 0 AS subscribed;
BEGIN;
CREATE TABLE m1 ();
CREATE TABLE m2 ();
CREATE TABLE m3 ();
CREATE TABLE m4 ();
COMMIT;
CALL ddl_notify.deliver();
SELECT ident FROM picky_log ORDER BY ident;
SELECT name, pending, attempts, failing_event = (SELECT id FROM ddl_notify.event WHERE object_identity = 'public.m3') AS fails_on_m3
  FROM ddl_notify.subscriber_status WHERE name = 'picky';
SELECT count(*) AS ok_got FROM handled WHERE ident LIKE 'public.m_';
SELECT ddl_notify.unsubscribe('picky');
TRUNCATE handled;

-- G7: after a transient failure the engine goes back to full batches
-- (it used to go on one event per transaction for the rest of the queue)
CREATE SEQUENCE once_seq;
CREATE TABLE once_log (ident text, xact xid8);
CREATE FUNCTION h_once(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF e.object_identity = 'public.n3' AND nextval('public.once_seq') = 1 THEN
		RAISE EXCEPTION 'transient failure';
	END IF;
	INSERT INTO public.once_log VALUES (e.object_identity, pg_current_xact_id());
END
$$;
SELECT ddl_notify.subscribe('once', 'h_once(ddl_notify.event)') > 0 AS subscribed;
DO $$ BEGIN FOR i IN 1..40 LOOP EXECUTE format('CREATE TABLE n%s ()', i); END LOOP; END $$;
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT count(*) AS handled, count(DISTINCT ident) AS distinct_events,
	   count(DISTINCT xact) <= 4 AS few_transactions
  FROM once_log;
SELECT ddl_notify.unsubscribe('once');
TRUNCATE handled;

-- G7: a stuck handler is cancelled by ddl_notify.handler_timeout
CREATE FUNCTION h_slow(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT pg_sleep(30) $$;
SELECT ddl_notify.subscribe('slow', 'h_slow(ddl_notify.event)') > 0 AS subscribed;
SET ddl_notify.handler_timeout = '200ms';
CREATE TABLE s1 ();
CALL ddl_notify.deliver();
RESET ddl_notify.handler_timeout;
SELECT name, pending, attempts, last_error, last_error_sqlstate
  FROM ddl_notify.subscriber_status WHERE name = 'slow';
SELECT ddl_notify.unsubscribe('slow');
TRUNCATE handled;

-- G12: a handler that runs DDL is not echoed; others see the DDL, tagged
CREATE FUNCTION h_ddl(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.handled (sub, ident, as_role) VALUES ('ddl', e.object_identity, current_user);
	IF e.command_tag = 'CREATE TABLE' AND e.object_identity NOT LIKE '%_audit' THEN
		EXECUTE format('CREATE TABLE %s_audit ()', e.object_identity);
	END IF;
END
$$;
SELECT ddl_notify.subscribe('ddl', 'h_ddl(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE e1 ();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
-- 'ddl' got e1 but not its own e1_audit; 'ok' got both, e1_audit tagged 'ddl'
SELECT sub, ident, origin FROM handled ORDER BY n;
-- with echo => true a handler sees its own DDL (and must stop itself)
SELECT ddl_notify.unsubscribe('ddl');
SELECT ddl_notify.subscribe('ddl_echo', 'h_ddl(ddl_notify.event)', echo => true) > 0 AS subscribed;
TRUNCATE handled;
CREATE TABLE e2 ();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT sub, ident FROM handled WHERE sub = 'ddl' ORDER BY n;
SELECT ddl_notify.unsubscribe('ddl_echo');
TRUNCATE handled;

-- G10 (part): the handler runs as the role that subscribed it
CREATE ROLE ddln_alice;
GRANT USAGE ON SCHEMA ddl_notify TO ddln_alice;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean) TO ddln_alice;
GRANT INSERT ON handled TO ddln_alice;
GRANT USAGE ON SEQUENCE handled_n_seq TO ddln_alice;
CREATE FUNCTION h_whoami(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.handled (sub, ident, as_role) VALUES ('alice', e.object_identity, current_user) $$;
ALTER FUNCTION h_whoami(ddl_notify.event) OWNER TO ddln_alice;
SET ROLE ddln_alice;
SELECT ddl_notify.subscribe('alice', 'h_whoami(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
CREATE TABLE w1 ();
CALL ddl_notify.deliver();
SELECT sub, ident, as_role FROM handled ORDER BY n;

-- a handler function dropped under a subscriber: a clear error, others unaffected
TRUNCATE handled;
DROP FUNCTION h_whoami(ddl_notify.event);
CREATE TABLE w2 ();
CALL ddl_notify.deliver();
SELECT name, pending, attempts, last_error_sqlstate,
	   last_error LIKE 'handler function % of subscriber "alice" does not exist' AS clear_error
  FROM ddl_notify.subscriber_status WHERE name = 'alice';
SELECT sub, ident FROM handled ORDER BY n;
SELECT ddl_notify.unsubscribe('alice');

-- G5/G7: one transaction's events in several batches (batch_size 3), and a
-- subscriber dead-lettering every other event of it, one at a time: each
-- event exactly once, in id order, none skipped, none repeated (a batch
-- takes up a transaction where the last committed batch stopped)
CREATE TABLE seq_log (n serial, sub text, id bigint);
CREATE FUNCTION h_seq(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.seq_log (sub, id) VALUES ('seq', e.id) $$;
CREATE FUNCTION h_odd(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF e.id % 2 = 1 THEN
		RAISE EXCEPTION 'odd event';
	END IF;
	INSERT INTO public.seq_log (sub, id) VALUES ('odd', e.id);
END
$$;
SELECT ddl_notify.subscribe('seq', 'h_seq(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('odd', 'h_odd(ddl_notify.event)', max_attempts => 1) > 0 AS subscribed;
SET ddl_notify.batch_size = 3;
DO $$ BEGIN FOR i IN 1..11 LOOP EXECUTE format('CREATE TABLE b%s ()', i); END LOOP; END $$;
CALL ddl_notify.deliver();
RESET ddl_notify.batch_size;
SELECT count(*) AS seq_got, count(DISTINCT id) AS distinct_ids,
	   array_agg(id ORDER BY n) = array_agg(id ORDER BY id) AS in_order,
	   max(id) - min(id) AS span
  FROM seq_log WHERE sub = 'seq';
SELECT count(*) AS odd_got, bool_and(id % 2 = 0) AS only_even,
	   array_agg(id ORDER BY n) = array_agg(id ORDER BY id) AS in_order
  FROM seq_log WHERE sub = 'odd';
SELECT count(*) AS dead_letters, bool_and(event_id % 2 = 1) AS only_odd
  FROM ddl_notify.dead_letter WHERE subscriber = 'odd';
-- together, the odd subscriber had exactly the events seq had
SELECT (SELECT array_agg(id ORDER BY id) FROM seq_log WHERE sub = 'seq') =
	   (SELECT array_agg(id ORDER BY id) FROM (
			SELECT id FROM seq_log WHERE sub = 'odd'
			UNION ALL SELECT event_id FROM ddl_notify.dead_letter WHERE subscriber = 'odd') u) AS same_events;
SELECT name, pending FROM ddl_notify.subscriber_status WHERE name IN ('seq', 'odd') ORDER BY name;
SELECT ddl_notify.unsubscribe('seq'), ddl_notify.unsubscribe('odd');
DO $$ BEGIN FOR i IN 1..11 LOOP EXECUTE format('DROP TABLE b%s', i); END LOOP; END $$;
CALL ddl_notify.deliver();
DROP TABLE seq_log;
DROP FUNCTION h_seq(ddl_notify.event), h_odd(ddl_notify.event);

DROP EXTENSION ddl_notify CASCADE;
DO $$ BEGIN FOR i IN 1..40 LOOP EXECUTE format('DROP TABLE n%s', i); END LOOP; END $$;
DROP TABLE once_log;
DROP SEQUENCE once_seq;
DROP TABLE handled, parent, child, picky_log, tidb_t1000, d1, d2, m1, m2, m3, m4, s1, e1, e1_audit, e2, e2_audit, w1, w2;
DROP OWNED BY ddln_alice;
DROP ROLE ddln_alice;
