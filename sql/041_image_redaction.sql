--
-- 041_image_redaction: a subscriber whose owner may not read event.query
-- gets no statement text in any column: the texts the relation images carry
-- in details (before, after, changes) are withheld too (issue 35, item 2).
--
-- Proves G10 (docs/security.md, "What a subscriber sees"): three
-- subscribers get the same DDL on relations in schema vault: "su" (a
-- superuser's), "reader" (a role granted SELECT (query) on ddl_notify.event,
-- no USAGE on vault) and "app" (a role with the subscriber API only, no
-- USAGE on vault).  Each handler stores its argument e (query, details).
-- Every image key that holds a text is given its own secret, in each place
-- it can stand: a column's default and generated expression, a CHECK
-- constraint's and an index's definition, a view's and a materialized
-- view's query, a partition key and bound, a foreign table's options, a
-- domain's default and CHECK (its own image, issue 36), in
-- "after" (the CREATE), in "before" (a later ALTER) and in "changes" (set
-- default, drop default, drop expression, add column with a default and with
-- a generated expression, add constraint, add index, set definition; set
-- expression on PostgreSQL 17 and later).
-- - su and reader get every secret in the place named (su_has, reader_has);
-- - app gets none of them anywhere in its row (app_has), query NULL, and
--   details says texts_withheld: true; the names in its images are the
--   same as su's (only texts are withheld).
-- And fail closed: a key the list of src/imagetexts.c does not know, a
-- scalar where it expects objects and the old/new of an unknown op, put
-- into a pending event by hand, are withheld too (SECRET_FUTURE_*).
-- Catches: details handed over as stored (test/mutations/
-- image_texts_not_withheld.patch: every app_has true), and the old and new
-- values of changes kept whatever the op (image_texts_change_values.patch:
-- the set default, drop default, drop expression and set definition
-- secrets reach app), and keys the list does not know kept
-- (image_texts_unknown_kept.patch: SECRET_FUTURE_KEY reaches app).
--
-- (quiet: whether it is there already depends on the files run before)
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
SET client_min_messages = warning;
CREATE ROLE regress_ddln_ir_app;
CREATE ROLE regress_ddln_ir_reader;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_ir_app, regress_ddln_ir_reader;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
						  ddl_notify.unsubscribe(text) TO regress_ddln_ir_app, regress_ddln_ir_reader;
GRANT SELECT (query) ON ddl_notify.event TO regress_ddln_ir_reader;
CREATE SCHEMA ir_app AUTHORIZATION regress_ddln_ir_app;
CREATE SCHEMA ir_reader AUTHORIZATION regress_ddln_ir_reader;
CREATE SCHEMA vault;
CREATE FOREIGN DATA WRAPPER regress_ddln_ir_fdw;
CREATE SERVER ir_srv FOREIGN DATA WRAPPER regress_ddln_ir_fdw;

-- what each handler got
CREATE TABLE public.ir_got (n serial, sub text, id bigint, query text, details jsonb);
GRANT INSERT ON public.ir_got TO PUBLIC;
GRANT USAGE ON SEQUENCE public.ir_got_n_seq TO PUBLIC;
CREATE FUNCTION public.ir_su(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.ir_got (sub, id, query, details) VALUES ('su', e.id, e.query, e.details) $$;
SELECT ddl_notify.subscribe('ir_su', 'public.ir_su(ddl_notify.event)') > 0 AS subscribed;
SET ROLE regress_ddln_ir_app;
CREATE FUNCTION ir_app.h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.ir_got (sub, id, query, details) VALUES ('app', e.id, e.query, e.details) $$;
SELECT ddl_notify.subscribe('ir_app', 'ir_app.h(ddl_notify.event)') > 0 AS subscribed;
SET ROLE regress_ddln_ir_reader;
CREATE FUNCTION ir_reader.h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.ir_got (sub, id, query, details) VALUES ('reader', e.id, e.query, e.details) $$;
SELECT ddl_notify.subscribe('ir_reader', 'ir_reader.h(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
RESET client_min_messages;
SELECT has_schema_privilege('regress_ddln_ir_app', 'vault', 'USAGE') AS app_sees_vault,
	   has_schema_privilege('regress_ddln_ir_reader', 'vault', 'USAGE') AS reader_sees_vault;

-- the DDL, as a superuser, in vault
CREATE TABLE vault.t (
	id int PRIMARY KEY,
	k text DEFAULT 'SECRET_DEFAULT' CHECK (k <> 'SECRET_CHECK'),
	g text GENERATED ALWAYS AS (k || 'SECRET_GENERATED') STORED);
CREATE INDEX t_k ON vault.t (k) WHERE k <> 'SECRET_INDEX';
ALTER TABLE vault.t ALTER COLUMN k SET DEFAULT 'SECRET_SETDEFAULT';
ALTER TABLE vault.t ALTER COLUMN k DROP DEFAULT;
ALTER TABLE vault.t ALTER COLUMN g DROP EXPRESSION;
ALTER TABLE vault.t ADD COLUMN k2 text DEFAULT 'SECRET_ADDCOLUMN';
ALTER TABLE vault.t ADD COLUMN k3 text GENERATED ALWAYS AS (k || 'SECRET_ADDGENERATED') STORED;
ALTER TABLE vault.t ADD CONSTRAINT t_c2 CHECK (k2 <> 'SECRET_ADDCHECK');
CREATE VIEW vault.v AS SELECT id FROM vault.t WHERE k = 'SECRET_VIEW';
CREATE OR REPLACE VIEW vault.v AS SELECT id FROM vault.t WHERE k = 'SECRET_REPLACEVIEW';
CREATE MATERIALIZED VIEW vault.mv AS SELECT id FROM vault.t WHERE k = 'SECRET_MATVIEW' WITH NO DATA;
ALTER MATERIALIZED VIEW vault.mv RENAME TO mv2;
CREATE TABLE vault.p (id int, k text) PARTITION BY LIST ((k || 'SECRET_PARTKEY'));
ALTER TABLE vault.p ADD COLUMN a int;
CREATE TABLE vault.p1 PARTITION OF vault.p FOR VALUES IN ('SECRET_BOUND');
ALTER TABLE vault.p1 RENAME TO p1b;
CREATE FOREIGN TABLE vault.f (a int) SERVER ir_srv OPTIONS (tbl 'SECRET_OPTION');
ALTER FOREIGN TABLE vault.f ADD COLUMN b int;
-- a domain's default and CHECK are texts; a sequence's parameters, a domain's
-- type and an enum's labels are not
CREATE DOMAIN vault.dom AS text DEFAULT 'SECRET_DOMDEFAULT' CHECK (VALUE <> 'SECRET_DOMCHECK');
ALTER DOMAIN vault.dom SET DEFAULT 'SECRET_DOMSETDEFAULT';
CREATE SEQUENCE vault.s START 42 INCREMENT 7;
CREATE TYPE vault.e AS ENUM ('red', 'green');
-- SET EXPRESSION exists since PostgreSQL 17
SELECT current_setting('server_version_num')::int >= 170000 AS has_set_expression \gset
\if :has_set_expression
ALTER TABLE vault.t ALTER COLUMN k3 SET EXPRESSION AS (k || 'SECRET_SETEXPRESSION');
\endif
-- keys a later relimage.c might write, put into a pending event by hand: a
-- key the list does not know, a scalar where it expects objects, a change
-- whose op it does not know
UPDATE ddl_notify.event
SET details = jsonb_set(jsonb_set(jsonb_set(details,
		'{after,future_key}', '"SECRET_FUTURE_KEY"'),
		'{after,columns}', (details -> 'after' -> 'columns') || '["SECRET_FUTURE_SCALAR"]'),
		'{changes}', (details -> 'changes') || '[{"op": "future op", "old": "SECRET_FUTURE_OLD", "new": "SECRET_FUTURE_NEW"}]')
WHERE id = (SELECT max(id) FROM ddl_notify.event
			WHERE object_identity = 'vault.f' AND details ? 'changes');
CALL ddl_notify.deliver();

-- each secret, in the place it stands, per subscriber
CREATE TEMPORARY TABLE secrets (secret text, pos text);
INSERT INTO secrets VALUES
	('SECRET_DEFAULT', 'after'), ('SECRET_DEFAULT', 'before'), ('SECRET_DEFAULT', 'changes'),
	('SECRET_SETDEFAULT', 'changes'), ('SECRET_SETDEFAULT', 'before'),
	('SECRET_CHECK', 'after'), ('SECRET_CHECK', 'before'),
	('SECRET_GENERATED', 'after'), ('SECRET_GENERATED', 'before'), ('SECRET_GENERATED', 'changes'),
	('SECRET_INDEX', 'changes'), ('SECRET_INDEX', 'after'), ('SECRET_INDEX', 'before'),
	('SECRET_ADDCOLUMN', 'changes'), ('SECRET_ADDGENERATED', 'changes'),
	('SECRET_ADDCHECK', 'changes'), ('SECRET_ADDCHECK', 'after'),
	('SECRET_VIEW', 'after'), ('SECRET_VIEW', 'before'), ('SECRET_VIEW', 'changes'),
	('SECRET_REPLACEVIEW', 'after'), ('SECRET_REPLACEVIEW', 'changes'),
	('SECRET_MATVIEW', 'after'), ('SECRET_MATVIEW', 'before'),
	('SECRET_PARTKEY', 'after'), ('SECRET_PARTKEY', 'before'),
	('SECRET_BOUND', 'after'), ('SECRET_BOUND', 'before'),
	('SECRET_OPTION', 'after'), ('SECRET_OPTION', 'before'),
	('SECRET_DOMDEFAULT', 'after'), ('SECRET_DOMCHECK', 'after'), ('SECRET_DOMSETDEFAULT', 'after'),
	('SECRET_FUTURE_KEY', 'after'), ('SECRET_FUTURE_SCALAR', 'after'),
	('SECRET_FUTURE_OLD', 'changes'), ('SECRET_FUTURE_NEW', 'changes');
SELECT s.secret, s.pos,
	   bool_or(g.sub = 'su' AND strpos((g.details -> s.pos)::text, s.secret) > 0) AS su_has,
	   bool_or(g.sub = 'reader' AND strpos((g.details -> s.pos)::text, s.secret) > 0) AS reader_has,
	   bool_or(g.sub = 'app' AND strpos(g::text, s.secret) > 0) AS app_has
FROM secrets s CROSS JOIN public.ir_got g
GROUP BY s.secret, s.pos ORDER BY s.secret, s.pos;
-- SET EXPRESSION's new value (17 and later): su has it, app does not
SELECT NOT :'has_set_expression'::bool OR
	   bool_or(g.sub = 'su' AND strpos((g.details -> 'changes')::text, 'SECRET_SETEXPRESSION') > 0) AS su_has_set_expression
FROM public.ir_got g;

-- app: no secret anywhere, no query, texts_withheld where there are images
SELECT count(*) FILTER (WHERE strpos(g::text, 'SECRET_') > 0) AS rows_with_a_secret,
	   count(*) FILTER (WHERE query IS NOT NULL) AS rows_with_query,
	   count(*) FILTER (WHERE details ?| '{before,after,changes}') >= 17 AS images_seen,
	   count(*) FILTER (WHERE details ?| '{before,after,changes}')
		 = count(*) FILTER (WHERE details -> 'texts_withheld' = 'true') AS each_said_withheld
FROM public.ir_got g WHERE sub = 'app';
-- su and reader: the queries, no texts_withheld
SELECT sub, count(*) FILTER (WHERE query IS NULL) AS rows_without_query,
	   count(*) FILTER (WHERE details ? 'texts_withheld') AS said_withheld
FROM public.ir_got WHERE sub IN ('su', 'reader') GROUP BY sub ORDER BY sub;
-- the same events, and the same names and kinds in app's images as in su's
SELECT count(*) >= 24 AS events_seen,
	   count(*) = count(*) FILTER (WHERE jsonb_path_query_array(a.details, 'strict $.**.name')
							IS NOT DISTINCT FROM jsonb_path_query_array(s.details, 'strict $.**.name')
						 AND jsonb_path_query_array(a.details, 'strict $.**.kind')
							IS NOT DISTINCT FROM jsonb_path_query_array(s.details, 'strict $.**.kind')
						 AND jsonb_path_query_array(a.details, 'strict $.**.op')
							IS NOT DISTINCT FROM jsonb_path_query_array(s.details, 'strict $.**.op')) AS all_same_names
FROM public.ir_got a JOIN public.ir_got s USING (id)
WHERE a.sub = 'app' AND s.sub = 'su';
-- kept for app: a sequence's parameters, a domain's type, an enum's labels
SELECT details->'after'->>'kind' AS kind, details->'after'->'start' AS start,
	   details->'after'->'increment' AS increment, details->'after'->>'type' AS type,
	   details->'after'->'default' AS default_withheld, details->'after'->'labels' AS labels
FROM public.ir_got WHERE sub = 'app' AND details->'after'->>'kind' IN ('sequence', 'domain', 'enum')
ORDER BY id;
-- what app got for the view's CREATE OR REPLACE: the change, no texts
SELECT a.details -> 'changes' AS app_changes, a.details -> 'after' -> 'definition' AS app_definition
FROM public.ir_got a JOIN public.ir_got s USING (id)
WHERE a.sub = 'app' AND s.sub = 'su'
  AND strpos((s.details -> 'changes')::text, 'SECRET_REPLACEVIEW') > 0;

-- the whole of what app got for CREATE TABLE vault.t (its "statement" key,
-- which holds no text and which app gets as it is, names the role that ran
-- the tests: shown as a list of its keys)
SELECT jsonb_pretty(details - 'statement') AS app_details,
	   (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(details -> 'statement') k) AS app_statement_keys
FROM public.ir_got
WHERE sub = 'app' AND strpos(details::text, '"name": "t"') > 0 ORDER BY id LIMIT 1;

-- clean up
SELECT ddl_notify.unsubscribe('ir_su'), ddl_notify.unsubscribe('ir_app'), ddl_notify.unsubscribe('ir_reader');
SET client_min_messages = warning;
DROP SCHEMA vault CASCADE;
DROP SCHEMA ir_app CASCADE;
DROP SCHEMA ir_reader CASCADE;
DROP SERVER ir_srv;
DROP FOREIGN DATA WRAPPER regress_ddln_ir_fdw;
DROP TABLE public.ir_got;
DROP FUNCTION public.ir_su(ddl_notify.event);
REVOKE ALL ON SCHEMA ddl_notify FROM regress_ddln_ir_app, regress_ddln_ir_reader;
REVOKE ALL ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
					   ddl_notify.unsubscribe(text) FROM regress_ddln_ir_app, regress_ddln_ir_reader;
REVOKE ALL ON ddl_notify.event FROM regress_ddln_ir_reader;
DROP ROLE regress_ddln_ir_app, regress_ddln_ir_reader;
RESET client_min_messages;
