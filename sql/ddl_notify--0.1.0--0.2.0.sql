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
-- issue 18: subscriber_status shows another role's last_error only to its
-- members, superusers and pg_read_all_stats ('<insufficient privilege>').
CREATE OR REPLACE VIEW ddl_notify.subscriber_status AS
SELECT s.name,
	   s.handler,
	   s.owner::regrole AS owner,
	   p.pending,
	   p.oldest_pending_id,
	   p.oldest_pending_at,
	   s.delivered,
	   s.filtered,
	   s.last_event_id,
	   s.last_delivered_at,
	   s.attempts,
	   s.failing_event,
	   -- another role's error text only for its members, superusers and
	   -- pg_read_all_stats, as pg_stat_activity shows queries
	   CASE WHEN s.last_error IS NULL
				 OR pg_catalog.pg_has_role(s.owner, 'USAGE')
				 OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')
			THEN s.last_error ELSE '<insufficient privilege>' END AS last_error,
	   s.last_error_sqlstate,
	   s.last_error_at,
	   s.next_retry_at,
	   s.max_attempts,
	   s.dead_letters,
	   s.skipped,
	   s.command_tags,
	   s.object_types,
	   s.schemas,
	   s.echo,
	   s.created_at,
	   ddl_notify.delivery_status() AS delivery
FROM ddl_notify.subscriber s
CROSS JOIN LATERAL (
	SELECT pg_catalog.count(*) AS pending,
		   pg_catalog.min(e.id) AS oldest_pending_id,
		   pg_catalog.min(e.occurred_at) AS oldest_pending_at
	FROM ddl_notify.event e
	WHERE ddl_notify.is_pending(e.processed, e.xid, s.slot, s.start_snapshot, s.start_xid)
) p;
