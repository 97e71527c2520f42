-- The demo that `make demo` runs (test/tools/demo.sh) on a throwaway cluster
-- with ddl_notify preloaded, so the background worker delivers by itself.
\pset footer off
\echo
\echo '== 1. Install the extension in database "demo"'
CREATE EXTENSION ddl_notify;

\echo
\echo '== 2. Two subscribers: SQL functions that take one ddl_notify.event'
\echo '   schema_cache: invalidates a (pretend) API schema cache on every change'
\echo '   table_audit:  keeps an audit trail of table creations and drops only'
CREATE TABLE schema_cache_log (at timestamptz DEFAULT clock_timestamp(), what text);
CREATE FUNCTION invalidate_cache(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.schema_cache_log (what)
	VALUES (format('%s %s %s', e.command_tag, e.object_type, e.object_identity))
$$;
CREATE TABLE table_audit (event_id bigint, tag text, tbl text, by_role name, query text);
CREATE FUNCTION audit_tables(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.table_audit VALUES (e.id, e.command_tag, e.object_identity, e.role_name, e.query)
$$;
SELECT ddl_notify.subscribe('schema_cache', 'invalidate_cache(ddl_notify.event)');
SELECT ddl_notify.subscribe('table_audit', 'audit_tables(ddl_notify.event)',
							command_tags => '{CREATE TABLE, DROP TABLE}',
							object_types => '{table}');

\echo
\echo '== 3. Some DDL. Inside its transaction, the events are already rows of ddl_notify.event:'
BEGIN;
CREATE TABLE customer (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL);
ALTER TABLE customer ADD COLUMN email text, ADD CONSTRAINT email_ok CHECK (email LIKE '%@%');
CREATE INDEX customer_email ON customer (email);
SELECT id, trigger_event, command_tag, object_type, object_identity, details
  FROM ddl_notify.event WHERE xid = pg_current_xact_id() ORDER BY id;
COMMIT;

\echo
\echo '== 4. A DDL that rolls back leaves nothing behind (it never reaches a subscriber):'
BEGIN;
CREATE TABLE oops (x int);
ROLLBACK;
CREATE TABLE invoice (id int PRIMARY KEY, customer_id bigint REFERENCES customer);
ALTER TABLE invoice ALTER COLUMN id TYPE bigint;
DROP TABLE invoice;

\echo
\echo '== 5. The worker delivers by itself; wait until everything committed so far is handled:'
SELECT ddl_notify.wait_for_delivery('30 seconds') AS all_delivered;

\echo
\echo '== 6. What the subscribers received'
SELECT what AS schema_cache_saw FROM schema_cache_log ORDER BY at;
SELECT tag, tbl, by_role, query FROM table_audit ORDER BY event_id;

\echo
\echo '== 7. Status, and the worker as pg_stat_activity shows it'
SELECT name, pending, delivered, filtered, attempts, last_error, delivery
  FROM ddl_notify.subscriber_status ORDER BY name;
SELECT backend_type, application_name FROM pg_stat_activity
 WHERE backend_type LIKE 'ddl_notify%' ORDER BY 1;
SELECT count(*) AS rows_left_in_ddl_notify_event FROM ddl_notify.event;
