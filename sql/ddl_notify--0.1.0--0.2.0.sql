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

-- issue 16: the delivery worker pool, listed for monitoring
CREATE FUNCTION ddl_notify.worker_pool(
	OUT datid oid, OUT database name, OUT pid integer, OUT state text,
	OUT since timestamptz, OUT delivered bigint, OUT round_started timestamptz)
RETURNS SETOF record
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'worker_pool';

COMMENT ON FUNCTION ddl_notify.worker_pool() IS
	'the delivery worker pool, cluster-wide: one row per worker (starting, delivering, idle, exiting) and per database queued for one or waiting for a retry time';

REVOKE ALL ON FUNCTION ddl_notify.worker_pool() FROM PUBLIC;
