--
-- 050_storage_images: G2 and G15 (their payload) for what a relation's
-- storage settings, CLUSTER ON, an index's storage parameters and ATTACH /
-- DETACH PARTITION do (issue 36: the stream rebuilds a real schema, typed;
-- docs/reference.md, "The payload"), and G10 for them (what a subscriber
-- that may not read statement texts gets).
--
-- - A column's STORAGE ("storage", only when it is not its type's
--   typstorage), COMPRESSION ("compression", only when set) and statistics
--   target ("statistics", only when set) are in the images, and ALTER
--   COLUMN ... SET STORAGE / SET COMPRESSION / SET STATISTICS are "set
--   storage", "set compression", "set statistics"; a column whose type
--   changes takes its new type's storage: no "set storage" of its own; a
--   plain table's image has none of the keys (the images of the other
--   tests do not change).
-- - CLUSTER ON marks the index ("clustered": true) and is "cluster on";
--   SET WITHOUT CLUSTER is "set without cluster".
-- - ALTER INDEX ... SET (...) / RESET (...): the index's definition
--   (pg_get_indexdef) shows WITH (...); the table's images come with the
--   index's row, and the change is "set index reloptions" (not a drop and
--   add of the index, which keeps its OID).
-- - ALTER TABLE ... ATTACH PARTITION / DETACH PARTITION: the partitioned
--   table's row has "attach partition" (the partition's name and bound) or
--   "detach partition"; DETACH ... CONCURRENTLY commits on its way: no
--   images (as before), only its subcommand.
-- - A subscriber whose owner may not read statement texts gets the new
--   keys and ops (names, keywords, numbers, flags) but not an attached
--   partition's bound.
-- Catches: the storage keys not read or not diffed
-- (test/mutations/images_no_column_storage.patch: no "storage" in the
-- images, no "set storage"), ALTER INDEX without images
-- (images_alter_index_unread.patch: no "set index reloptions"), and an
-- index's definition reused from "before" after ALTER INDEX ... SET (the
-- "after" without its WITH (...): images_index_options_reused.patch).
--
-- (quiet: whether it is there already depends on the files run before)
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
RESET client_min_messages;

CREATE SCHEMA si_s;
SET search_path = si_s, public;

-- one change per line
CREATE FUNCTION pg_temp.ops(since bigint)
RETURNS TABLE (command_tag text, object_identity text, op jsonb)
LANGUAGE sql AS $$
	SELECT e.command_tag, e.object_identity, c
	FROM ddl_notify.event e, jsonb_array_elements(e.details->'changes') WITH ORDINALITY AS a(c, n)
	WHERE e.id > since AND e.trigger_event = 'ddl_command_end'
	ORDER BY e.id, a.n
$$;
-- a column's storage keys in the last "after" of a table
CREATE FUNCTION pg_temp.storage(tbl text)
RETURNS TABLE (name text, storage text, compression text, statistics int)
LANGUAGE sql AS $$
	SELECT c->>'name', c->>'storage', c->>'compression', (c->>'statistics')::int
	FROM (SELECT details->'after' AS img FROM ddl_notify.event
		  WHERE object_identity = tbl AND details ? 'after' ORDER BY id DESC LIMIT 1) e,
		 jsonb_array_elements(e.img->'columns') c
	ORDER BY (c->>'attnum')::int
$$;

--
-- 1. a column's STORAGE, COMPRESSION and statistics target
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE st (id int, t text, b bytea COMPRESSION pglz, n numeric, v varchar(10));
-- CREATE: only what is not the default
SELECT * FROM pg_temp.storage('si_s.st');
ALTER TABLE st ALTER COLUMN t SET STORAGE main, ALTER COLUMN n SET STATISTICS 500,
	ALTER COLUMN v SET COMPRESSION pglz;
ALTER TABLE st ALTER COLUMN b SET STORAGE external, ALTER COLUMN b SET COMPRESSION default;
ALTER TABLE st ALTER COLUMN id SET STORAGE plain;
ALTER TABLE st ALTER COLUMN n SET STATISTICS -1, ALTER COLUMN id SET STATISTICS 0;
-- a new type: the column takes that type's storage, no change of its own
ALTER TABLE st ALTER COLUMN t TYPE varchar(20);
ALTER TABLE st ADD COLUMN w text COMPRESSION pglz;
SELECT * FROM pg_temp.ops(:last);
SELECT * FROM pg_temp.storage('si_s.st');
-- a plain table: none of the keys
CREATE TABLE st_plain (a int, b text);
SELECT count(*) AS storage_keys
FROM ddl_notify.event e, jsonb_array_elements(e.details->'after'->'columns') c
WHERE e.object_identity = 'si_s.st_plain'
  AND c ?| '{storage,compression,statistics}';

-- the targets an "after" takes from its "before" (where a target costs a
-- catalog read, 17 on: those of the columns no invalidation touched),
-- looks up (a new column, a few changed) or reads again (more than 8
-- changed): each statement's "after" shows every target as it is
CREATE TABLE stw (c1 int, c2 int, c3 int, c4 int, c5 int, c6 int, c7 int,
	c8 int, c9 int, c10 int, c11 int, c12 int);
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE stw ALTER COLUMN c1 SET STATISTICS 11, ALTER COLUMN c12 SET STATISTICS 112;
ALTER TABLE stw ADD COLUMN c13 int, ALTER COLUMN c13 SET STATISTICS 113,
	ALTER COLUMN c2 SET STATISTICS 12;
ALTER TABLE stw DROP COLUMN c3;
ALTER TABLE stw ALTER COLUMN c4 SET STATISTICS 14, ALTER COLUMN c5 SET STATISTICS 15,
	ALTER COLUMN c6 SET STATISTICS 16, ALTER COLUMN c7 SET STATISTICS 17,
	ALTER COLUMN c8 SET STATISTICS 18, ALTER COLUMN c9 SET STATISTICS 19,
	ALTER COLUMN c10 SET STATISTICS 110, ALTER COLUMN c11 SET STATISTICS 111,
	ALTER COLUMN c12 SET STATISTICS -1, ALTER COLUMN c1 SET STATISTICS 21;
ALTER TABLE stw ADD COLUMN c14 int;
SELECT op FROM pg_temp.ops(:last) WHERE op->>'op' = 'set statistics';
SELECT e.id - :last AS n, string_agg(c->>'name' || '=' || coalesce(c->>'statistics', '-'), ' '
	ORDER BY (c->>'attnum')::int) AS targets
FROM ddl_notify.event e, jsonb_array_elements(e.details->'after'->'columns') c
WHERE e.id > :last AND e.object_identity = 'si_s.stw'
GROUP BY e.id ORDER BY e.id;
-- more pg_attribute rows changed than the list of invalidations holds (a
-- SET STATISTICS that recurses to 300 partitions after the parent's own):
-- the parent's "after" reads its targets again, the parent's change is not
-- lost with the list
SET ddl_notify.capture_changes = off;
CREATE TABLE stp (a int, b int) PARTITION BY RANGE (a);
DO $$
BEGIN
	FOR i IN 1..300 LOOP
		EXECUTE format('CREATE TABLE si_s.stp_%s PARTITION OF si_s.stp FOR VALUES FROM (%s) TO (%s)',
					   i, i, i + 1);
	END LOOP;
END $$;
RESET ddl_notify.capture_changes;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE stp ALTER COLUMN b SET STATISTICS 7;
SELECT op FROM pg_temp.ops(:last) WHERE op->>'op' = 'set statistics';
SELECT * FROM pg_temp.storage('si_s.stp');
SET client_min_messages = warning;
DROP TABLE stp;
RESET client_min_messages;

--
-- 2. CLUSTER ON, SET WITHOUT CLUSTER
--
CREATE TABLE cl (id int PRIMARY KEY, a int);
CREATE INDEX cl_a ON cl (a);
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE cl CLUSTER ON cl_a;
ALTER TABLE cl CLUSTER ON cl_pkey;
ALTER TABLE cl SET WITHOUT CLUSTER;
ALTER TABLE cl CLUSTER ON cl_a;
-- renamed while clustered: a rename, not another CLUSTER ON
ALTER INDEX cl_a RENAME TO cl_a2;
SELECT * FROM pg_temp.ops(:last);
SELECT i->>'name' AS name, i->'clustered' AS clustered
FROM (SELECT details->'after' AS img FROM ddl_notify.event
	  WHERE id > :last ORDER BY id DESC LIMIT 1) e, jsonb_array_elements(e.img->'indexes') i
ORDER BY 1;

--
-- 3. ALTER INDEX ... SET (...) / RESET (...)
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER INDEX cl_a2 SET (fillfactor = 60);
ALTER INDEX cl_a2 SET (fillfactor = 70, deduplicate_items = off);
ALTER INDEX cl_a2 RESET (fillfactor);
SELECT * FROM pg_temp.ops(:last);
-- the index's definition shows its storage parameters, in "after"
SELECT e.id - :last AS n, i->>'definition' AS definition
FROM ddl_notify.event e, jsonb_array_elements(e.details->'after'->'indexes') i
WHERE e.id > :last AND i->>'name' = 'cl_a2' ORDER BY e.id;
-- ALTER INDEX ... ALTER COLUMN ... SET STATISTICS: images, no change
CREATE INDEX cl_expr ON cl ((a + 1));
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER INDEX cl_expr ALTER COLUMN 1 SET STATISTICS 100;
SELECT command_tag, object_identity, details ? 'before' AS has_before, details->'changes' AS changes
FROM ddl_notify.event WHERE id > :last ORDER BY id;

--
-- 4. ATTACH PARTITION, DETACH PARTITION [CONCURRENTLY]
--
-- (an integer key: a date's bound is printed in the session's DateStyle)
CREATE TABLE meas (city int, yr int) PARTITION BY RANGE (yr);
CREATE INDEX meas_city ON meas (city);
CREATE TABLE meas_2024 PARTITION OF meas FOR VALUES FROM (2024) TO (2025);
CREATE TABLE meas_2025 (city int, yr int);
CREATE TABLE meas_2026 PARTITION OF meas FOR VALUES FROM (2026) TO (2027);
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE meas ATTACH PARTITION meas_2025 FOR VALUES FROM (2025) TO (2026);
ALTER TABLE meas DETACH PARTITION meas_2024;
ALTER TABLE meas DETACH PARTITION meas_2026 CONCURRENTLY;
SELECT * FROM pg_temp.ops(:last);
SELECT command_tag, object_identity, details ?| '{before,after,changes}' AS has_images,
	   details->'subcommands'->0->>'kind' AS subcommand
FROM ddl_notify.event WHERE id > :last ORDER BY id;
-- the partition attached: its next image says so
ALTER TABLE meas_2025 ALTER COLUMN city SET STATISTICS 10;
SELECT details->'after'->'partition_of' AS partition_of, details->'after'->>'partition_bound' AS bound
FROM ddl_notify.event WHERE object_identity = 'si_s.meas_2025' ORDER BY id DESC LIMIT 1;

--
-- 5. What a subscriber that may not read statement texts gets: every new
--    key and op, but not an attached partition's bound
--
SET client_min_messages = warning;
CREATE ROLE regress_ddln_si_app;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_si_app;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
						  ddl_notify.unsubscribe(text) TO regress_ddln_si_app;
CREATE SCHEMA si_app AUTHORIZATION regress_ddln_si_app;
CREATE TABLE public.si_got (n serial, sub text, id bigint, details jsonb);
GRANT INSERT ON public.si_got TO PUBLIC;
GRANT USAGE ON SEQUENCE public.si_got_n_seq TO PUBLIC;
CREATE FUNCTION public.si_su(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.si_got (sub, id, details) VALUES ('su', e.id, e.details) $$;
SELECT ddl_notify.subscribe('si_su', 'public.si_su(ddl_notify.event)') > 0 AS subscribed;
SET ROLE regress_ddln_si_app;
CREATE FUNCTION si_app.h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.si_got (sub, id, details) VALUES ('app', e.id, e.details) $$;
SELECT ddl_notify.subscribe('si_app', 'si_app.h(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
RESET client_min_messages;
CREATE TABLE si_t (id int PRIMARY KEY, t text);
CREATE TABLE si_p (k int, t text) PARTITION BY LIST (k);
CREATE TABLE si_p1 (k int, t text);
ALTER TABLE si_t ALTER COLUMN t SET STORAGE external, ALTER COLUMN t SET COMPRESSION pglz,
	ALTER COLUMN t SET STATISTICS 42, CLUSTER ON si_t_pkey;
ALTER INDEX si_t_pkey SET (fillfactor = 80);
ALTER TABLE si_p ATTACH PARTITION si_p1 FOR VALUES IN (4242);
CALL ddl_notify.deliver();
-- app: the same changes but the bound; the same keys in "after"
SELECT s.details->'after'->>'name' AS rel, a.details->'changes' AS app_changes,
	   a.details->'changes' = s.details->'changes' AS same_as_su,
	   a.details->'after'->'columns' = s.details->'after'->'columns' AS same_columns,
	   a.details->'after'->'indexes'->0->'clustered' AS app_clustered
FROM public.si_got a JOIN public.si_got s USING (id)
WHERE a.sub = 'app' AND s.sub = 'su' AND s.details->'changes' <> '[]'
ORDER BY s.id;
SELECT bool_or(strpos(details::text, '4242') > 0) AS app_has_bound
FROM public.si_got WHERE sub = 'app';

-- clean up
SELECT ddl_notify.unsubscribe('si_su'), ddl_notify.unsubscribe('si_app');
SET client_min_messages = warning;
DROP SCHEMA si_s CASCADE;
DROP SCHEMA si_app CASCADE;
DROP TABLE public.si_got;
DROP FUNCTION public.si_su(ddl_notify.event);
REVOKE ALL ON SCHEMA ddl_notify FROM regress_ddln_si_app;
REVOKE ALL ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
					   ddl_notify.unsubscribe(text) FROM regress_ddln_si_app;
DROP ROLE regress_ddln_si_app;
RESET client_min_messages;
