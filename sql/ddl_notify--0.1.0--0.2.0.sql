/*
 * ddl_notify upgrade script, 0.1.0 to 0.2.0 (ALTER EXTENSION ddl_notify UPDATE)
 *
 * Rules kept here:
 * - after it, a 0.1.0 database has exactly the objects of a fresh 0.2.0
 *   install (test/t/040_extension_update.pl compares the two);
 * - every name is schema-qualified, and nothing pending is lost: rows of
 *   ddl_notify.event, commit_order, subscriber and dead_letter are kept.
 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION ddl_notify UPDATE TO '0.2.0'" to load this file. \quit

-- issue 13: event_xid and commit_order_pos become unique and the replica
-- identity of their tables, so that the engine's UPDATE and DELETE work when
-- a publication FOR ALL TABLES publishes them.
DROP INDEX ddl_notify.event_xid;
CREATE UNIQUE INDEX event_xid ON ddl_notify.event (xid, id);
DROP INDEX ddl_notify.commit_order_pos;
CREATE UNIQUE INDEX commit_order_pos ON ddl_notify.commit_order (pos);
ALTER TABLE ddl_notify.event REPLICA IDENTITY USING INDEX event_xid;
ALTER TABLE ddl_notify.commit_order REPLICA IDENTITY USING INDEX commit_order_pos;
