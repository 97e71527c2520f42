--
-- 045_bookkeeping: the engine's own bookkeeping does not grow its tables
--
-- Proves (issue 31, docs/performance.md "At scale"; G7's counters):
--  1. batch after batch, the subscriber's row is not written: its delivery
--     counters (delivered, filtered, last_event_id, last_delivered_at) are
--     kept in shared memory between writes (src/progress.c), and
--     subscriber_status shows them at once.  So a session holding an old
--     snapshot does not make the row bloat with one version per batch.
--     Catches: the counters written to the row by every batch again
--     (test/mutations/progress_in_row.patch).
--  2. a batch after a failure writes the row anyway (attempts back to 0):
--     the counters held in memory go with it, and the view counts each
--     event once.
--  3. after DROP and CREATE EXTENSION the subscriber ids start at 1 again:
--     a new subscriber does not inherit the counts of the old one of its id
--     (entries are told apart by created_at).  Catches: entries keyed by id
--     alone (test/mutations/progress_by_id_only.patch).
-- Runs last: it drops and re-creates the extension (so that its ids start
-- at 1 whatever ran before).
--
SET client_min_messages = error;
DROP EXTENSION IF EXISTS ddl_notify CASCADE;
CREATE EXTENSION ddl_notify;
RESET client_min_messages;
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;

CREATE TABLE bk_target ();
CREATE TABLE bk_log (ident text);
CREATE TABLE bk_fail (fail boolean);
INSERT INTO bk_fail VALUES (false);
CREATE FUNCTION bk_h(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF (SELECT fail FROM public.bk_fail) THEN
		RAISE EXCEPTION 'bk_h fails on purpose';
	END IF;
	INSERT INTO public.bk_log VALUES (e.object_identity);
END $$;
SELECT ddl_notify.subscribe('bk', 'bk_h(ddl_notify.event)') > 0 AS subscribed;
SELECT ctid AS row_before, xmin::text AS xmin_before, delivered AS row_delivered_before
FROM ddl_notify.subscriber WHERE name = 'bk' \gset

-- 1. twenty batches of one event each
SELECT format('COMMENT ON TABLE bk_target IS %L', 'c' || i), 'CALL ddl_notify.deliver()'
FROM generate_series(1, 20) i \gexec
SELECT count(*) AS handled FROM bk_log;
SELECT delivered, last_event_id = (SELECT max(id) FROM ddl_notify.event) OR
	   (last_event_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ddl_notify.event)) AS last_known,
	   last_delivered_at IS NOT NULL AS when_known, pending, attempts
FROM ddl_notify.subscriber_status WHERE name = 'bk';
-- the row itself: the same version, counters not yet in it
SELECT ctid = :'row_before' AS same_version, xmin::text = :'xmin_before' AS same_xmin,
	   delivered = :row_delivered_before AS row_counters_unwritten
FROM ddl_notify.subscriber WHERE name = 'bk';

-- 2. a failure, then a success: the row is written, the counts move into it
UPDATE bk_fail SET fail = true;
COMMENT ON TABLE bk_target IS 'fails';
CALL ddl_notify.deliver();
SELECT delivered, attempts, state FROM ddl_notify.subscriber_status WHERE name = 'bk';
UPDATE bk_fail SET fail = false;
CALL ddl_notify.deliver();
SELECT delivered, attempts, state, pending FROM ddl_notify.subscriber_status WHERE name = 'bk';
SELECT s.delivered AS row_delivered, p.delivered AS held_in_memory
FROM ddl_notify.subscriber s LEFT JOIN ddl_notify.subscriber_progress() p USING (id)
WHERE s.name = 'bk';
SELECT count(*) AS handled FROM bk_log;

-- 3. the same id after DROP and CREATE EXTENSION starts from zero
COMMENT ON TABLE bk_target IS 'more';
CALL ddl_notify.deliver();
SELECT delivered AS old_delivered FROM ddl_notify.subscriber_status WHERE name = 'bk';
SELECT id AS old_id FROM ddl_notify.subscriber WHERE name = 'bk' \gset
DROP EXTENSION ddl_notify CASCADE;
SET client_min_messages = error;
CREATE EXTENSION ddl_notify;
RESET client_min_messages;
CREATE FUNCTION bk_h2(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT $$;
SELECT ddl_notify.subscribe('bk2', 'bk_h2(ddl_notify.event)') = :old_id AS same_id;
SELECT name, delivered, filtered, last_event_id, last_delivered_at FROM ddl_notify.subscriber_status;
COMMENT ON TABLE bk_target IS 'after';
CALL ddl_notify.deliver();
SELECT name, delivered FROM ddl_notify.subscriber_status;

SELECT ddl_notify.unsubscribe('bk2');
DROP FUNCTION bk_h2(ddl_notify.event);
DROP TABLE bk_target, bk_log, bk_fail;
