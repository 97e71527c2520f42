--
-- 036_hand_altered: the extension's own objects altered by hand, as a
-- superuser may.  DDL on the extension's own objects is not recorded, so the
-- alteration itself goes through; the next DDL that records an event meets
-- the refusal, with an SQLSTATE, and is rolled back whole (G1): nothing
-- half-done.  DROP EXTENSION still works, and DROP and CREATE EXTENSION
-- (or undoing the alteration) bring ddl_notify back.  Found by make
-- coverage: these refusals of capture.c, counter.c and common.c had never
-- run.
--
-- Proves, with the code change each part catches:
-- 1. A column added to ddl_notify.event: a DDL is refused (55000) and
--    rolled back.  Caught (checked): DdlnOpenEventTable() without its column
--    count check (the CREATE TABLE commits, its row written in a shape the
--    table does not have).
-- 2. ddl_notify.commit_order_pos_seq made to count by 2: a DDL is refused
--    (55000) and rolled back; counting by 1 again, DDL commits.  Caught
--    (checked): DdlnCounterNext() without the refusal (positions no longer
--    dense, the DDL commits).
-- 3. The same sequence at its maximum: a DDL is refused (2200H) and rolled
--    back; with the value put back, DDL commits.
-- 4. The sequence taken out of the extension and dropped: a DDL is refused
--    (42P01, the extension's relations looked up again) and rolled back;
--    DROP EXTENSION works.
--    A table in the sequence's place: a DDL is refused (42809).
-- 5. subscriber_id_seq renamed: subscribe() cannot draw an id (42P01) and
--    makes no subscriber; renamed back, subscribe() works.
-- 6. A capture function called from SQL: refused (39P03).
-- Errors are shown with their SQLSTATE only.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
SET client_min_messages = warning;

-- 1.
ALTER TABLE ddl_notify.event ADD COLUMN junk int;
CREATE TABLE ha_1 ();
SELECT to_regclass('ha_1') IS NULL AS rolled_back;
DROP EXTENSION ddl_notify;
CREATE EXTENSION ddl_notify;
CREATE TABLE ha_1 ();
SELECT count(*) AS recorded FROM ddl_notify.event WHERE object_identity = 'public.ha_1';
DROP TABLE ha_1;

-- 2.
ALTER SEQUENCE ddl_notify.commit_order_pos_seq INCREMENT 2;
CREATE TABLE ha_2 ();
SELECT to_regclass('ha_2') IS NULL AS rolled_back;
ALTER SEQUENCE ddl_notify.commit_order_pos_seq INCREMENT 1;
CREATE TABLE ha_2 ();
SELECT to_regclass('ha_2') IS NOT NULL AS created;
DROP TABLE ha_2;

-- 3.
SELECT last_value AS saved_pos FROM ddl_notify.commit_order_pos_seq \gset
SELECT setval('ddl_notify.commit_order_pos_seq', 9223372036854775807) > 0 AS at_max;
CREATE TABLE ha_3 ();
SELECT to_regclass('ha_3') IS NULL AS rolled_back;
SELECT setval('ddl_notify.commit_order_pos_seq', :saved_pos) > 0 AS put_back;
CREATE TABLE ha_3 ();
SELECT to_regclass('ha_3') IS NOT NULL AS created;
DROP TABLE ha_3;

-- 4.
ALTER EXTENSION ddl_notify DROP SEQUENCE ddl_notify.commit_order_pos_seq;
DROP SEQUENCE ddl_notify.commit_order_pos_seq;
CREATE TABLE ha_4 ();
SELECT to_regclass('ha_4') IS NULL AS rolled_back;
-- a table in the sequence's place
CREATE TABLE ddl_notify.commit_order_pos_seq ();
CREATE TABLE ha_4 ();
SELECT to_regclass('ha_4') IS NULL AS rolled_back;
DROP TABLE ddl_notify.commit_order_pos_seq;
DROP EXTENSION ddl_notify;
CREATE EXTENSION ddl_notify;

-- 5.
CREATE FUNCTION ha_noop(e ddl_notify.event) RETURNS void LANGUAGE sql AS '';
ALTER SEQUENCE ddl_notify.subscriber_id_seq RENAME TO subscriber_id_seq_moved;
SELECT ddl_notify.subscribe('ha_sub', 'ha_noop(ddl_notify.event)');
SELECT count(*) AS subscribers FROM ddl_notify.subscriber WHERE name = 'ha_sub';
ALTER SEQUENCE ddl_notify.subscriber_id_seq_moved RENAME TO subscriber_id_seq;
SELECT ddl_notify.subscribe('ha_sub', 'ha_noop(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.unsubscribe('ha_sub');

-- 6.
SELECT ddl_notify.capture_ddl_command_end();

--
-- Clean up
--
DROP FUNCTION ha_noop(ddl_notify.event);
DROP EXTENSION ddl_notify;
