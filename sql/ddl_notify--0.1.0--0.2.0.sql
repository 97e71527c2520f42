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

/*
 * The schema must be safe before anything more goes into it.  CREATE EXTENSION
 * installs into an existing schema of the control file's name, and a role
 * that created that schema first, or may create objects in it, could plant
 * functions that callers of the API resolve instead of the extension's (an
 * overload of subscribe() taking text, say), run as a superuser.  So the
 * schema must be owned by a superuser, let no other role CREATE in it, and
 * hold nothing that is not this extension's.  A 0.1.0 installation
 * might have been made into such a schema: the update refuses it too.  Every name is
 * qualified: nothing in the schema is looked up.
 */
DO LANGUAGE plpgsql $$
DECLARE
	nsp pg_catalog.oid;
	who pg_catalog.name;
	what pg_catalog.text;
BEGIN
	SELECT n.oid, a.rolname INTO nsp, who
	  FROM pg_catalog.pg_namespace n
	  JOIN pg_catalog.pg_authid a ON a.oid OPERATOR(pg_catalog.=) n.nspowner
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'ddl_notify' AND NOT a.rolsuper;
	IF FOUND THEN
		RAISE EXCEPTION 'schema "ddl_notify" is owned by role "%", which is not a superuser', who
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'The owner of the extension''s schema could replace the extension''s functions with its own.',
				  HINT = 'Drop the schema and run the command again, or make a superuser its owner after checking what it holds.';
	END IF;

	SELECT n.oid, CASE WHEN x.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
					   ELSE pg_catalog.quote_ident(a.rolname) END
	  INTO nsp, who
	  FROM pg_catalog.pg_namespace n,
		   pg_catalog.aclexplode(n.nspacl) x
	  LEFT JOIN pg_catalog.pg_authid a ON a.oid OPERATOR(pg_catalog.=) x.grantee
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'ddl_notify'
	   AND x.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
	   AND NOT COALESCE(a.rolsuper, false)
	 LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'schema "ddl_notify" grants CREATE to %, which is not a superuser', who
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'A role that may create objects in the extension''s schema could plant functions that callers of the extension resolve.',
				  HINT = 'REVOKE CREATE ON SCHEMA ddl_notify from every role but superusers, then run the command again.';
	END IF;

	SELECT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) INTO what
	  FROM pg_catalog.pg_namespace n
	  JOIN pg_catalog.pg_depend d
		ON d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
	   AND d.refobjid OPERATOR(pg_catalog.=) n.oid
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'ddl_notify'
	   -- the extension itself, and its members
	   AND NOT (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
				AND d.objid OPERATOR(pg_catalog.=) (SELECT e.oid FROM pg_catalog.pg_extension e
												   WHERE e.extname OPERATOR(pg_catalog.=) 'ddl_notify'))
	   AND NOT EXISTS (
			SELECT 1 FROM pg_catalog.pg_depend m
			  JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) m.refobjid
			 WHERE m.classid OPERATOR(pg_catalog.=) d.classid
			   AND m.objid OPERATOR(pg_catalog.=) d.objid
			   AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
			   AND m.deptype OPERATOR(pg_catalog.=) 'e'
			   AND e.extname OPERATOR(pg_catalog.=) 'ddl_notify')
	 LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'schema "ddl_notify" holds % which is not part of extension ddl_notify', what
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The extension''s schema must hold only the extension''s objects: anything else could stand in for them.',
				  HINT = 'Move or drop the object (or the whole schema), then run the command again.';
	END IF;
END
$$;

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
-- members, superusers and pg_read_all_stats ('<insufficient privilege>'): in
-- the view's one new definition, in the issue 15 block below.

-- issue 15: subscribers survive pg_dump/pg_restore and pg_upgrade (G13).
-- The handler becomes its qualified signature (text) next to its OID (no
-- reg* column: pg_upgrade refuses those), the owner gets its name, and the
-- subscriber and dead-letter tables are dumped by pg_dump.
ALTER TABLE ddl_notify.subscriber
	ADD COLUMN handler_oid oid,
	ADD COLUMN owner_name name,
	ADD COLUMN resolved_in bigint,
	ADD COLUMN restored_at timestamptz,
	-- issue 26, 29: pause/resume, and restored rows waiting for confirmation
	ADD COLUMN enabled boolean NOT NULL DEFAULT true,
	ADD COLUMN confirmed boolean NOT NULL DEFAULT true;
UPDATE ddl_notify.subscriber s
   SET handler_oid = s.handler::pg_catalog.oid,
	   owner_name = COALESCE((SELECT a.rolname FROM pg_catalog.pg_authid a
							  WHERE a.oid OPERATOR(pg_catalog.=) s.owner), ''),
	   resolved_in = (pg_catalog.pg_control_system()).system_identifier;

-- issue 29 (G12): the chain of origins of an event caused by handlers, and
-- the count of events the chain rule kept from a subscriber
ALTER TABLE ddl_notify.event ADD COLUMN origin_chain text[];
COMMENT ON COLUMN ddl_notify.event.origin_chain IS
	'the subscribers whose handlers led to this event, in order (origin is the last), NULL for a user''s DDL; not delivered to a subscriber in it (see docs/echo-and-loops.md)';
ALTER TABLE ddl_notify.subscriber ADD COLUMN loop_suppressed bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN ddl_notify.subscriber.loop_suppressed IS
	'events handled without a call because handlers of subscribers in their origin_chain caused them (see docs/echo-and-loops.md)';

-- issue 31: the delivery counters between writes of the subscriber rows
CREATE FUNCTION ddl_notify.subscriber_progress(
	OUT id integer, OUT delivered bigint, OUT filtered bigint, OUT loop_suppressed bigint,
	OUT last_event_id bigint, OUT last_delivered_at timestamptz,
	OUT created_at timestamptz, OUT pending bigint, OUT oldest_pending_id bigint,
	OUT oldest_pending_at timestamptz, OUT pending_estimated boolean)
RETURNS SETOF record
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_subscriber_progress';

COMMENT ON FUNCTION ddl_notify.subscriber_progress() IS
	'per subscriber: delivery counters not yet written to its row (kept in shared memory between writes) and its pending events (estimated past the first 20,000 events and transactions of the queue), for subscriber_status; answers only roles that may read subscriber_status';

-- the view reads the OID from now on, so that "handler" can change type
CREATE OR REPLACE VIEW ddl_notify.subscriber_status AS
SELECT s.name,
	   s.handler_oid::pg_catalog.regprocedure AS handler,
	   s.owner::regrole AS owner,
	   c.pending,
	   c.oldest_pending_id,
	   c.oldest_pending_at,
	   s.delivered OPERATOR(pg_catalog.+) COALESCE(c.delivered, 0) AS delivered,
	   s.filtered OPERATOR(pg_catalog.+) COALESCE(c.filtered, 0) AS filtered,
	   -- the later of the row's and shared memory's (two deliverers may
	   -- take turns: one's count can arrive after the other's went to the row)
	   CASE WHEN c.last_delivered_at OPERATOR(pg_catalog.>) s.last_delivered_at
				 OR s.last_delivered_at IS NULL
			THEN COALESCE(c.last_event_id, s.last_event_id)
			ELSE s.last_event_id END AS last_event_id,
	   GREATEST(c.last_delivered_at, s.last_delivered_at) AS last_delivered_at,
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
	   ddl_notify.delivery_status() AS delivery,
	   s.restored_at,
	   s.id,
	   CASE WHEN NOT s.confirmed THEN 'unconfirmed'
			WHEN NOT s.enabled THEN 'paused'
			WHEN s.attempts OPERATOR(pg_catalog.>) 0 AND s.max_attempts IS NOT NULL THEN 'dead-lettering'
			WHEN s.attempts OPERATOR(pg_catalog.>) 0 THEN 'failing'
			ELSE 'active' END AS state,
	   pg_catalog.now() OPERATOR(pg_catalog.-) c.oldest_pending_at AS lag,
	   s.loop_suppressed OPERATOR(pg_catalog.+) COALESCE(c.loop_suppressed, 0) AS loop_suppressed,
	   c.pending_estimated
FROM ddl_notify.subscriber s
LEFT JOIN ddl_notify.subscriber_progress() c
	   ON c.id OPERATOR(pg_catalog.=) s.id AND c.created_at OPERATOR(pg_catalog.=) s.created_at;


-- the signature as format_procedure_qualified() spells it (a handler's only
-- argument is ddl_notify.event); a dropped handler keeps its OID's digits
ALTER TABLE ddl_notify.subscriber
	ALTER COLUMN handler TYPE text USING handler::pg_catalog.oid::pg_catalog.text;
UPDATE ddl_notify.subscriber s
   SET handler = pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.'
				 OPERATOR(pg_catalog.||) pg_catalog.quote_ident(p.proname)
				 OPERATOR(pg_catalog.||) '(ddl_notify.event)'
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
 WHERE p.oid OPERATOR(pg_catalog.=) s.handler_oid;
ALTER TABLE ddl_notify.subscriber
	ALTER COLUMN handler_oid SET NOT NULL,
	ALTER COLUMN owner_name SET NOT NULL;

COMMENT ON COLUMN ddl_notify.subscriber.handler IS
	'the handler''s qualified signature (regprocedure text); handler_oid is its OID in the cluster resolved_in';
COMMENT ON COLUMN ddl_notify.subscriber.resolved_in IS
	'system identifier of the cluster where handler_oid and owner are valid; elsewhere they are resolved by name';
COMMENT ON COLUMN ddl_notify.subscriber.restored_at IS
	'when the row was restored from a dump (pg_restore, psql), NULL for subscribe()';
COMMENT ON COLUMN ddl_notify.subscriber.enabled IS
	'false while the subscriber is paused: its events wait, it keeps its position';
COMMENT ON COLUMN ddl_notify.subscriber.confirmed IS
	'false for a restored subscriber whose handler binding waits for its owner''s or a superuser''s confirmation';
COMMENT ON VIEW ddl_notify.subscriber_status IS
	'one row per subscriber: state (active, paused, failing, dead-lettering, unconfirmed), pending events, delivery progress, last error, attempts and next retry';

CREATE FUNCTION ddl_notify.subscriber_restore() RETURNS trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_subscriber_restore';
CREATE TRIGGER subscriber_restore BEFORE INSERT ON ddl_notify.subscriber
	FOR EACH ROW EXECUTE FUNCTION ddl_notify.subscriber_restore();
ALTER TABLE ddl_notify.subscriber ENABLE ALWAYS TRIGGER subscriber_restore;
REVOKE ALL ON FUNCTION ddl_notify.subscriber_restore() FROM PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('ddl_notify.subscriber', '');
SELECT pg_catalog.pg_extension_config_dump('ddl_notify.subscriber_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('ddl_notify.dead_letter', '');
SELECT pg_catalog.pg_extension_config_dump('ddl_notify.dead_letter_id_seq', '');
-- issue 16: the delivery worker pool, listed for monitoring
CREATE FUNCTION ddl_notify.worker_pool(
	OUT datid oid, OUT database name, OUT pid integer, OUT state text,
	OUT since timestamptz, OUT delivered bigint, OUT round_started timestamptz)
RETURNS SETOF record
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_worker_pool';

COMMENT ON FUNCTION ddl_notify.worker_pool() IS
	'the delivery worker pool, cluster-wide: one row per worker (starting, delivering, idle, exiting) and per database queued for one or waiting for a retry time';

REVOKE ALL ON FUNCTION ddl_notify.worker_pool() FROM PUBLIC;

-- issue 26, 29: change a subscriber without losing its position
CREATE FUNCTION ddl_notify.alter_subscriber(name text,
											handler regprocedure DEFAULT NULL,
											command_tags text[] DEFAULT NULL,
											object_types text[] DEFAULT NULL,
											schemas text[] DEFAULT NULL,
											max_attempts integer DEFAULT NULL,
											echo boolean DEFAULT NULL,
											enabled boolean DEFAULT NULL)
RETURNS void
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_alter_subscriber';

COMMENT ON FUNCTION ddl_notify.alter_subscriber(text, regprocedure, text[], text[], text[], integer, boolean, boolean) IS
	'change a subscriber''s handler, filters, max_attempts, echo or enabled; NULL keeps a setting, an empty filter array receives every event, max_attempts 0 retries for ever';

CREATE FUNCTION ddl_notify.pause(name text)
RETURNS void
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_pause';

COMMENT ON FUNCTION ddl_notify.pause(text) IS
	'stop delivery to one subscriber; it keeps its position and its events wait';

CREATE FUNCTION ddl_notify.resume(name text)
RETURNS void
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_resume';

COMMENT ON FUNCTION ddl_notify.resume(text) IS
	'resume delivery to a paused subscriber, in order; confirms a restored subscriber';

REVOKE ALL ON FUNCTION ddl_notify.alter_subscriber(text, regprocedure, text[], text[], text[], integer, boolean, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.pause(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.resume(text) FROM PUBLIC;

-- issue 26: the delivery state as columns, for scripts
CREATE FUNCTION ddl_notify.delivery_state(
	OUT mode text, OUT automatic boolean, OUT worker_pids integer[],
	OUT queued_since timestamptz, OUT next_retry_at timestamptz, OUT detail text)
RETURNS record
LANGUAGE c STABLE AS 'MODULE_PATHNAME', 'ddl_notify_delivery_state';

COMMENT ON FUNCTION ddl_notify.delivery_state() IS
	'how events reach subscribers in this database, as columns: mode (manual, delivering, starting, waiting for a slot, queued, idle, idle, retry due), worker pids, since when queued, next retry; detail is delivery_status()';

REVOKE ALL ON FUNCTION ddl_notify.delivery_state() FROM PUBLIC;

-- issue 26: every C entry point carries the project's prefix.  The functions
-- keep their names, arguments, defaults, grants and comments; only the
-- library symbol they call changes (0.1.0's names stay exported as aliases
-- until this update has run, see src/legacy.c).
CREATE OR REPLACE FUNCTION ddl_notify.capture_ddl_command_end() RETURNS event_trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_capture_ddl_command_end';
CREATE OR REPLACE FUNCTION ddl_notify.capture_sql_drop() RETURNS event_trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_capture_sql_drop';
CREATE OR REPLACE FUNCTION ddl_notify.capture_table_rewrite() RETURNS event_trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_capture_table_rewrite';

CREATE OR REPLACE FUNCTION ddl_notify.subscribe(name text,
												handler regprocedure,
												command_tags text[] DEFAULT NULL,
												object_types text[] DEFAULT NULL,
												schemas text[] DEFAULT NULL,
												max_attempts integer DEFAULT NULL,
												echo boolean DEFAULT false)
RETURNS integer
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_subscribe';

CREATE OR REPLACE FUNCTION ddl_notify.unsubscribe(name text)
RETURNS boolean
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_unsubscribe';

CREATE OR REPLACE FUNCTION ddl_notify.skip(name text, event_id bigint)
RETURNS void
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_skip';

CREATE OR REPLACE PROCEDURE ddl_notify.deliver()
LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_deliver';

CREATE OR REPLACE FUNCTION ddl_notify.wait_for_delivery(timeout interval DEFAULT '30 seconds')
RETURNS boolean
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_wait_for_delivery';

CREATE OR REPLACE FUNCTION ddl_notify.delivery_status()
RETURNS text
LANGUAGE c STABLE AS 'MODULE_PATHNAME', 'ddl_notify_delivery_status';

-- issue 27: "before", "after" and "changes" of relations (src/imgcommand.c):
-- the "before" image of an ALTER is read at ddl_command_start
CREATE FUNCTION ddl_notify.capture_ddl_command_start() RETURNS event_trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_capture_ddl_command_start';
REVOKE ALL ON FUNCTION ddl_notify.capture_ddl_command_start() FROM PUBLIC;
CREATE EVENT TRIGGER ddl_notify_ddl_command_start ON ddl_command_start
	EXECUTE FUNCTION ddl_notify.capture_ddl_command_start();
ALTER EVENT TRIGGER ddl_notify_ddl_command_start ENABLE ALWAYS;

-- issue 38: an event's details live for milliseconds; compressing them with
-- pglz was a quarter of what the relation images cost (test/bench/
-- image_cost.sh).  lz4 compresses them for almost nothing, where the server
-- was built with it; elsewhere the column keeps the default.
DO LANGUAGE plpgsql $$
BEGIN
	ALTER TABLE ddl_notify.event ALTER COLUMN details SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
	NULL;
END
$$;

-- issue 37: DDL replication (G16)
/*
 * DDL replication (G16; docs/replication.md, src/outbox.c, src/replicate.c,
 * src/apply.c).  On a publisher, publish_ddl() names a publication in
 * ddl_publication; each DDL statement the publication covers then also
 * writes one row of ddl_outbox, in its own transaction, which logical
 * replication carries in commit order with the rows.  On a subscriber,
 * apply_ddl() names a subscription in ddl_apply; the apply worker's insert
 * of an outbox row runs apply_outbox(), which applies the statement and
 * checks the result against the publisher's images, and is not stored.
 * ddl_applied keeps what was applied (or skipped by hand), by the cluster
 * the DDL first ran in and its event id there, so that each DDL is applied
 * once however many ways it arrives.
 */
CREATE TABLE ddl_notify.ddl_publication (
	pubname			name PRIMARY KEY,
	published_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE ddl_notify.ddl_publication IS
	'publications whose DDL is replicated (publish_ddl())';

CREATE TABLE ddl_notify.ddl_outbox (
	id				bigint PRIMARY KEY,
	origin			bigint NOT NULL,
	origin_id		bigint NOT NULL,
	publications	name[] NOT NULL,
	role_name		name NOT NULL,
	search_path		text NOT NULL,
	command_tag		text NOT NULL,
	statement		text,
	objects			jsonb NOT NULL,
	created_at		timestamptz NOT NULL,
	action			text NOT NULL CHECK (action IN ('statement', 'create without data', 'check')),
	settings		jsonb NOT NULL DEFAULT '{}'
);
COMMENT ON TABLE ddl_notify.ddl_outbox IS
	'one row per replicated DDL statement, for logical replication to carry; emptied by the worker';
COMMENT ON COLUMN ddl_notify.ddl_outbox.origin IS
	'system identifier of the cluster where the statement first ran';
COMMENT ON COLUMN ddl_notify.ddl_outbox.statement IS
	'the statement''s text; NULL when it held a secret (docs/redaction.md), which stops applying';
COMMENT ON COLUMN ddl_notify.ddl_outbox.settings IS
	'DateStyle, IntervalStyle, TimeZone and standard_conforming_strings as the statement ran under them, set again to run it';
COMMENT ON COLUMN ddl_notify.ddl_outbox.action IS
	'statement: run it, then check; create without data: a CREATE TABLE AS or SELECT INTO, written before its rows, run WITH NO DATA; check: its images only, after those rows';

CREATE TABLE ddl_notify.ddl_apply (
	subid			oid PRIMARY KEY,
	subname			name NOT NULL,
	applier			oid NOT NULL,
	created_at		timestamptz NOT NULL DEFAULT pg_catalog.now(),
	applied			bigint NOT NULL DEFAULT 0,
	skipped			bigint NOT NULL DEFAULT 0,
	last_applied_event bigint,
	last_origin		bigint,
	last_published_at timestamptz,
	last_applied_at	timestamptz
);
COMMENT ON TABLE ddl_notify.ddl_apply IS
	'subscriptions that apply their publisher''s DDL (apply_ddl())';

CREATE TABLE ddl_notify.ddl_applied (
	origin			bigint NOT NULL,
	origin_id		bigint NOT NULL,
	subid			oid NOT NULL,
	skipped			boolean NOT NULL,
	applied_at		timestamptz NOT NULL DEFAULT pg_catalog.now(),
	PRIMARY KEY (origin, origin_id)
);
COMMENT ON TABLE ddl_notify.ddl_applied IS
	'DDL applied here (or skipped with skip_ddl()), by origin cluster and event id: each is applied once';

SELECT pg_catalog.pg_extension_config_dump('ddl_notify.ddl_publication', '');

CREATE FUNCTION ddl_notify.apply_outbox() RETURNS trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_apply_outbox';
CREATE TRIGGER apply_outbox BEFORE INSERT OR UPDATE OR DELETE ON ddl_notify.ddl_outbox
	FOR EACH ROW EXECUTE FUNCTION ddl_notify.apply_outbox();
ALTER TABLE ddl_notify.ddl_outbox ENABLE ALWAYS TRIGGER apply_outbox;

-- The publisher's bookkeeping never becomes the subscriber's: a row a
-- logical replication worker writes into these tables (FOR ALL TABLES
-- publications carry them) is dropped.
CREATE FUNCTION ddl_notify.not_replicated() RETURNS trigger
	LANGUAGE c AS 'MODULE_PATHNAME', 'ddl_notify_not_replicated';
DO LANGUAGE plpgsql $$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['event', 'commit_order', 'subscriber', 'dead_letter',
							 'ddl_publication', 'ddl_apply', 'ddl_applied'] LOOP
		EXECUTE pg_catalog.format('CREATE TRIGGER a_not_replicated BEFORE INSERT OR UPDATE OR DELETE ON ddl_notify.%I FOR EACH ROW EXECUTE FUNCTION ddl_notify.not_replicated()', t);
		EXECUTE pg_catalog.format('ALTER TABLE ddl_notify.%I ENABLE ALWAYS TRIGGER a_not_replicated', t);
	END LOOP;
END
$$;

CREATE FUNCTION ddl_notify.publish_ddl(publication name)
RETURNS void
LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'ddl_notify_publish_ddl';
COMMENT ON FUNCTION ddl_notify.publish_ddl(name) IS
	'replicate the DDL that publication covers to its subscribers (run on the publisher; see docs/replication.md)';

CREATE FUNCTION ddl_notify.unpublish_ddl(publication name)
RETURNS boolean
LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'ddl_notify_unpublish_ddl';
COMMENT ON FUNCTION ddl_notify.unpublish_ddl(name) IS
	'stop replicating the publication''s DDL; false if it was not';

CREATE FUNCTION ddl_notify.apply_ddl(subscription name)
RETURNS void
LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'ddl_notify_apply_ddl';
COMMENT ON FUNCTION ddl_notify.apply_ddl(name) IS
	'apply the DDL that subscription''s publisher replicates (run on the subscriber; see docs/replication.md)';

CREATE FUNCTION ddl_notify.stop_applying_ddl(subscription name)
RETURNS boolean
LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'ddl_notify_stop_applying_ddl';
COMMENT ON FUNCTION ddl_notify.stop_applying_ddl(name) IS
	'stop applying the subscription''s DDL; false if it did not';

CREATE FUNCTION ddl_notify.skip_ddl(subscription name, event bigint)
RETURNS void
LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'ddl_notify_skip_ddl';
COMMENT ON FUNCTION ddl_notify.skip_ddl(name, bigint) IS
	'count the event applying stopped at as applied by hand, so that applying goes on after it';

CREATE FUNCTION ddl_notify.ddl_apply_errors(
	OUT subid oid, OUT failed_event bigint, OUT failed_origin bigint,
	OUT last_error text, OUT last_error_at timestamptz)
RETURNS SETOF record
LANGUAGE c VOLATILE AS 'MODULE_PATHNAME', 'ddl_notify_ddl_apply_errors';
COMMENT ON FUNCTION ddl_notify.ddl_apply_errors() IS
	'per subscription of this database: the error that stopped applying its DDL (kept in shared memory), for ddl_apply_status';

/*
 * After a statement is applied, is the relation here what the publisher's
 * image ("published") says?  NULL if so, else the first difference.  What
 * the publisher defines must be equal (a column's attnum aside: dropped
 * columns leave holes that differ from cluster to cluster), and in the same
 * order for columns; columns, constraints and indexes the subscriber made
 * itself are not differences, unless the publisher just dropped one of that
 * name (it is in "before" and not in "published").
 */
CREATE FUNCTION ddl_notify.image_difference(published jsonb, before jsonb, here jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog AS $f$
	SELECT d FROM (
		SELECT 1 AS o, format('%s: publisher %s, here %s', k,
							  coalesce(published -> k, 'null'), coalesce(here -> k, 'null')) AS d
		FROM (SELECT jsonb_object_keys(published) UNION SELECT jsonb_object_keys(here)) AS keys(k)
		WHERE k <> ALL (ARRAY['columns', 'constraints', 'indexes'])
		  AND (published -> k) IS DISTINCT FROM (here -> k)
		UNION ALL
		SELECT 2, format('%s %s: publisher %s, here %s', k, p ->> 'name',
						 p - 'attnum', coalesce(h - 'attnum', 'null'))
		FROM unnest(ARRAY['columns', 'constraints', 'indexes']) AS k,
			 jsonb_array_elements(coalesce(published -> k, '[]')) AS p
			 LEFT JOIN LATERAL (
				SELECT e AS h FROM jsonb_array_elements(coalesce(here -> k, '[]')) AS e
				WHERE e ->> 'name' = p ->> 'name' LIMIT 1) AS x ON true
		WHERE (p - 'attnum') IS DISTINCT FROM (h - 'attnum')
		UNION ALL
		SELECT 3, format('%s %s: dropped on the publisher, still here', k, h ->> 'name')
		FROM unnest(ARRAY['columns', 'constraints', 'indexes']) AS k,
			 jsonb_array_elements(coalesce(here -> k, '[]')) AS h
		WHERE EXISTS (SELECT FROM jsonb_array_elements(coalesce(before -> k, '[]')) AS b
					  WHERE b ->> 'name' = h ->> 'name')
		  AND NOT EXISTS (SELECT FROM jsonb_array_elements(coalesce(published -> k, '[]')) AS p
						  WHERE p ->> 'name' = h ->> 'name')
		UNION ALL
		SELECT 4, format('column order: publisher %s, here %s', pc, hc)
		FROM (SELECT array_agg(p ->> 'name' ORDER BY n) AS pc
			  FROM jsonb_array_elements(coalesce(published -> 'columns', '[]')) WITH ORDINALITY AS a(p, n)) AS pa,
			 (SELECT array_agg(h ->> 'name' ORDER BY n) AS hc
			  FROM jsonb_array_elements(coalesce(here -> 'columns', '[]')) WITH ORDINALITY AS a(h, n)
			  WHERE EXISTS (SELECT FROM jsonb_array_elements(coalesce(published -> 'columns', '[]')) AS p
							WHERE p ->> 'name' = h ->> 'name')) AS ha
		WHERE pc IS DISTINCT FROM hc
	) AS diffs
	ORDER BY o
	LIMIT 1
$f$;
COMMENT ON FUNCTION ddl_notify.image_difference(jsonb, jsonb, jsonb) IS
	'the first difference between a publisher''s image of a relation and the same relation here, NULL if none (DDL replication''s check)';

CREATE VIEW ddl_notify.ddl_apply_status AS
SELECT a.subname AS subscription,
	   CASE WHEN e.last_error IS NOT NULL THEN 'stopped'
			WHEN s.oid IS NULL THEN 'dropped'
			WHEN NOT s.subenabled THEN 'disabled'
			ELSE 'applying' END AS state,
	   a.last_applied_event,
	   a.last_applied_at,
	   a.last_applied_at OPERATOR(pg_catalog.-) a.last_published_at AS lag,
	   a.applied,
	   a.skipped,
	   e.failed_event,
	   e.last_error,
	   e.last_error_at
FROM ddl_notify.ddl_apply a
LEFT JOIN pg_catalog.pg_subscription s ON s.oid OPERATOR(pg_catalog.=) a.subid
LEFT JOIN ddl_notify.ddl_apply_errors() e ON e.subid OPERATOR(pg_catalog.=) a.subid;
COMMENT ON VIEW ddl_notify.ddl_apply_status IS
	'one row per subscription that applies its publisher''s DDL: state (applying, stopped, disabled, dropped), last applied event, lag, last error';

REVOKE ALL ON FUNCTION ddl_notify.apply_outbox() FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.not_replicated() FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.publish_ddl(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.unpublish_ddl(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.apply_ddl(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.stop_applying_ddl(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.skip_ddl(name, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.ddl_apply_errors() FROM PUBLIC;
REVOKE ALL ON FUNCTION ddl_notify.image_difference(jsonb, jsonb, jsonb) FROM PUBLIC;
REVOKE ALL ON ddl_notify.ddl_publication, ddl_notify.ddl_outbox, ddl_notify.ddl_apply,
	ddl_notify.ddl_applied, ddl_notify.ddl_apply_status FROM PUBLIC;
