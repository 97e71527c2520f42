--
-- 035_engine_refusals: the delivery engine's refusals that no other test
-- reaches (found by test/tools/coverage.sh, see test/COVERAGE.md)
--
-- Proves, with the code change each part catches:
-- 1. G13, G7: a subscriber restored (as pg_restore inserts it) whose owner
--    role does not exist here: the restore names the missing role in
--    last_error at once (42704); CALL deliver() calls no handler, records
--    42704 with the role's name as a failed attempt, and the event stays
--    pending; once a role of that name exists, the event is delivered, once.
--    A restored row without a handler or an owner name is refused (23502);
--    one whose handler signature names a missing type names no function
--    (42883 in last_error, not an error of the restore); the 65th restored
--    subscriber of a database is refused (53400).  (lifecycle.c)
--    Caught (checked): DdlnHandlerByName() re-throwing to_regprocedure()'s
--    error (the restore itself then fails, 42704); DdlnRestoreSlot() without
--    its limit (the row then fails the slot CHECK, 23514).
--    Caught (checked): DdlnRunBatch() without its refusal that names the
--    missing role (deliver.c; the attempt then records "role 0 ...", which
--    tells the user nothing).
-- 2. Bad input: ddl_notify's tables changed by hand (a column added to
--    ddl_notify.commit_order): CALL deliver() refuses with 55000 before it
--    reads anything; no handler runs, no failure is recorded, the event
--    stays pending.  Caught (checked): DdlnFetch() without its shape check
--    (deliver() then delivered through a table it does not know).
-- Errors are shown with their SQLSTATE only; nothing prints an OID, an id,
-- a transaction id or a timestamp.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;
SET client_min_messages = warning;
\set status 'SELECT name, pending, attempts, last_error_sqlstate, last_error FROM ddl_notify.subscriber_status ORDER BY name'

CREATE TABLE rlog (n serial, who name, ident text);
GRANT INSERT ON rlog TO PUBLIC;
GRANT USAGE ON SEQUENCE rlog_n_seq TO PUBLIC;
CREATE FUNCTION r_log(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.rlog (who, ident) VALUES (current_user, e.object_identity)
$$;

--
-- 1. A restored subscriber whose owner does not exist here
--
-- as pg_restore inserts the row: names, no OIDs of this database
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('restored_orphan', 'public.r_log(ddl_notify.event)', 'regress_ddln_r_gone');
:status;
-- a row that names no handler, or no owner, is refused
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('restored_nohandler', NULL, 'regress_ddln_r_gone');
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('restored_noowner', 'public.r_log(ddl_notify.event)', NULL);
-- a signature naming a type that does not exist here names no function
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('restored_badsig', 'public.r_log(public.no_such_type)', current_user);
SELECT name, last_error_sqlstate, last_error FROM ddl_notify.subscriber_status
WHERE name = 'restored_badsig';
SELECT ddl_notify.unsubscribe('restored_badsig');
CREATE TABLE orphan_t ();
CALL ddl_notify.deliver();
-- no handler ran; the missing role is named; the event waits
SELECT count(*) AS handled FROM rlog;
:status;
-- the hint: create the role
CREATE ROLE regress_ddln_r_gone;
CALL ddl_notify.deliver();
SELECT who, ident FROM rlog ORDER BY n;
:status;
SELECT ddl_notify.unsubscribe('restored_orphan');
TRUNCATE rlog;
-- a restore past the 64 subscribers of a database is refused (53400)
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
SELECT 'restored_' || g, 'public.r_log(ddl_notify.event)', current_user
FROM generate_series(1, 64) g;
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
VALUES ('restored_65', 'public.r_log(ddl_notify.event)', current_user);
SELECT count(*) AS subscribers, count(DISTINCT slot) AS slots FROM ddl_notify.subscriber;
SELECT count(ddl_notify.unsubscribe(name)) AS unsubscribed FROM ddl_notify.subscriber;

--
-- 2. The extension's tables changed by hand
--
SELECT ddl_notify.subscribe('su_log', 'r_log(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE shape_t ();
ALTER TABLE ddl_notify.commit_order ADD COLUMN junk int;
CALL ddl_notify.deliver();
-- nothing read, nothing handled, nothing recorded
SELECT count(*) AS handled FROM rlog;
:status;

--
-- Clean up (the altered table goes with the extension)
--
SELECT ddl_notify.unsubscribe('su_log');
DROP FUNCTION r_log(ddl_notify.event);
DROP EXTENSION ddl_notify;
DROP TABLE rlog, orphan_t, shape_t;
DROP ROLE regress_ddln_r_gone;
