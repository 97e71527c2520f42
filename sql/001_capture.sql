--
-- 001_capture: G1 (transactional capture) and G2 (complete capture) for the
-- DDL corpus of a plain database.
--
-- G2: every command that fires event triggers becomes rows of
--     ddl_notify.event: ddl_command_end rows for CREATE/ALTER/COMMENT/GRANT/...
--     of tables (serial, identity, constraints, LIKE, INHERITS, CREATE TABLE
--     AS, SELECT INTO, partitions with ATTACH and DETACH [CONCURRENTLY]),
--     indexes (CONCURRENTLY too), views, materialized views (REFRESH),
--     functions, procedures, aggregates, operators, casts, types, domains,
--     schemas (with schema elements), sequences, statistics, collations, text
--     search, foreign-data wrappers, servers, foreign tables, user mappings,
--     triggers, rules, policies, publications and default privileges;
--     GRANT/REVOKE as one row per object with details (grant, privileges,
--     grantees, ...); COMMENT; RENAME; SET SCHEMA; OWNER TO; ALTER TABLE with
--     its subcommands (kind, name) in details; table_rewrite rows with their
--     reasons; sql_drop rows for what the user dropped and what came with it
--     (details original/cascaded), without the companions nobody names (row
--     and array types, TOAST tables, a view's _RETURN rule).  The query column
--     holds the statement that ran the DDL: its own text in a multi-statement
--     query string, the inner statement in PL/pgSQL, DO and SQL functions.
--     Roles and event triggers fire no event trigger (out of scope): nothing.
-- G1: rows are written by the DDL's own transaction, in statement order (ids
--     ascending); ROLLBACK, ROLLBACK TO SAVEPOINT, a failed statement, an
--     exception caught in PL/pgSQL, ROLLBACK inside a procedure and ROLLBACK
--     PREPARED leave nothing; RELEASE SAVEPOINT and COMMIT PREPARED keep.
-- Catches, on 17+: ATTACH/DETACH PARTITION recorded with no subcommand
-- (capture's filter of steps repeated on children taking them for one).
--
-- Only the rows a block produced are shown: "last" is the highest id before
-- the block (\gset).  Ids, xids, timestamps and OIDs vary and are never
-- printed.  Delivery is never run here (no subscriber, max_workers = 0), so
-- rows stay in ddl_notify.event.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
-- the extension's own objects are not recorded
SELECT count(*) AS events_after_create_extension FROM ddl_notify.event;

-- the rows since a mark, in id order (a temporary function: not recorded)
CREATE FUNCTION pg_temp.ev(since bigint)
RETURNS TABLE (trigger_event text, command_tag text, object_type text, schema_name text,
			   object_identity text, objsubid int, in_extension bool, query text, details jsonb)
LANGUAGE sql AS $$
	SELECT trigger_event, command_tag, object_type, schema_name, object_identity, objsubid,
		   in_extension, query, nullif(details - '{before,after,changes,statement}'::text[], '{}')
	FROM ddl_notify.event WHERE id > since
	-- the relation images ("before", "after", "changes") are left out:
	-- 040_relation_images shows them
	-- NOT NULL constraints, catalogued from PostgreSQL 18 on (each dropped
	-- one is a row, as any constraint), are left out: 003_not_null shows them
	  AND NOT (object_type = 'table constraint' AND object_identity LIKE '%\_not\_null on %')
	ORDER BY id
$$;
SELECT count(*) AS events_after_temp_function FROM ddl_notify.event;

--
-- Out of scope: roles and event triggers fire no event trigger
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE ROLE regress_ddln_capture NOLOGIN;
ALTER ROLE regress_ddln_capture CONNECTION LIMIT 3;
CREATE FUNCTION et_fn() RETURNS event_trigger LANGUAGE plpgsql AS $$BEGIN END$$;
CREATE EVENT TRIGGER regress_ddln_et ON ddl_command_start EXECUTE FUNCTION et_fn();
ALTER EVENT TRIGGER regress_ddln_et DISABLE;
DROP EVENT TRIGGER regress_ddln_et;
-- only the function is recorded
SELECT * FROM pg_temp.ev(:last);

--
-- Tables: serial, identity, constraints, LIKE, INHERITS, CREATE TABLE AS
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE t1 (id serial PRIMARY KEY, b int GENERATED ALWAYS AS IDENTITY, c text NOT NULL CHECK (c <> ''), d int UNIQUE);
CREATE TABLE t2 (id int PRIMARY KEY, t1_id int REFERENCES t1 (id) ON DELETE CASCADE, note text DEFAULT 'x');
CREATE TABLE t3 AS SELECT 1 AS one;
SELECT 1 AS a INTO t3_into;
CREATE UNLOGGED TABLE t4 (a int, b int, EXCLUDE USING btree (a WITH =));
CREATE TABLE t5 (LIKE t2 INCLUDING ALL) INHERITS (t1);
SELECT * FROM pg_temp.ev(:last);
-- who ran the DDL, and in which transaction
SELECT bool_and(role_name = current_user) AS role_ok,
	   bool_and(occurred_at BETWEEN now() - interval '1 hour' AND now() + interval '1 hour') AS time_ok,
	   count(DISTINCT xid) AS transactions,
	   bool_and(classid IS NOT NULL AND objid IS NOT NULL) AS has_address,
	   bool_and(origin IS NULL AND processed = 0) AS not_delivered
FROM ddl_notify.event WHERE id > :last;

--
-- Partitions: PARTITION OF, ATTACH, DETACH, DETACH CONCURRENTLY (which
-- commits on its way), an index on the partitioned table
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE meas (city int, logdate date) PARTITION BY RANGE (logdate);
CREATE TABLE meas_2024 PARTITION OF meas FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE meas_2025 (city int, logdate date);
ALTER TABLE meas ATTACH PARTITION meas_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
ALTER TABLE meas DETACH PARTITION meas_2024;
CREATE INDEX meas_city_idx ON meas (city);
CREATE TABLE meas_2026 PARTITION OF meas FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
ALTER TABLE meas DETACH PARTITION meas_2026 CONCURRENTLY;
SELECT * FROM pg_temp.ev(:last);

--
-- Indexes
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE INDEX t1_c_idx ON t1 (lower(c)) WHERE d > 0;
CREATE INDEX CONCURRENTLY t2_note_idx ON t2 (note);
ALTER INDEX t1_c_idx RENAME TO t1_lower_c_idx;
ALTER INDEX t1_lower_c_idx SET (fillfactor = 80);
DROP INDEX t1_lower_c_idx;
DROP INDEX CONCURRENTLY t2_note_idx;
SELECT * FROM pg_temp.ev(:last);

--
-- Views and materialized views
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE VIEW v1 AS SELECT id, c FROM t1;
CREATE OR REPLACE VIEW v1 AS SELECT id, c, d FROM t1;
ALTER VIEW v1 ALTER COLUMN c SET DEFAULT 'v';
CREATE MATERIALIZED VIEW mv1 AS SELECT id, d FROM t1;
REFRESH MATERIALIZED VIEW mv1;
CREATE UNIQUE INDEX mv1_id_idx ON mv1 (id);
REFRESH MATERIALIZED VIEW CONCURRENTLY mv1;
SELECT * FROM pg_temp.ev(:last);

--
-- Functions, procedures, aggregates, operators, casts
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE FUNCTION add1(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1';
CREATE OR REPLACE FUNCTION add1(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1';
ALTER FUNCTION add1(int) STRICT;
CREATE PROCEDURE proc1(a int) LANGUAGE sql AS 'SELECT a';
ALTER PROCEDURE proc1(int) RENAME TO proc2;
CREATE AGGREGATE sum1(int) (sfunc = int4pl, stype = int, initcond = '0');
CREATE OPERATOR === (leftarg = int, rightarg = int, function = int4eq);
CREATE FUNCTION text_to_t3(text) RETURNS t3 LANGUAGE sql AS 'SELECT ROW(length($1))::t3';
CREATE CAST (text AS t3) WITH FUNCTION text_to_t3(text);
SELECT * FROM pg_temp.ev(:last);

--
-- Types and domains
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TYPE mood AS ENUM ('sad', 'ok');
ALTER TYPE mood ADD VALUE 'happy';
CREATE TYPE pair AS (a int, b text);
ALTER TYPE pair ADD ATTRIBUTE c date;
CREATE TYPE floatrange AS RANGE (subtype = float8);
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
ALTER DOMAIN posint ADD CONSTRAINT posint_small CHECK (VALUE < 1000);
SELECT * FROM pg_temp.ev(:last);

--
-- Schemas (with schema elements), sequences, and other catalog objects
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE SCHEMA s1;
CREATE SCHEMA s2 CREATE TABLE s2t (a int) CREATE VIEW s2v AS SELECT a FROM s2t;
ALTER SCHEMA s1 RENAME TO s1r;
CREATE SEQUENCE seq1;
ALTER SEQUENCE seq1 INCREMENT 5;
ALTER SEQUENCE seq1 OWNED BY t1.d;
CREATE STATISTICS t1_stats (ndistinct) ON c, d FROM t1;
CREATE COLLATION coll1 FROM "C";
CREATE TEXT SEARCH CONFIGURATION tscfg1 (COPY = pg_catalog.simple);
CREATE FOREIGN DATA WRAPPER regress_ddln_fdw;
CREATE SERVER regress_ddln_srv FOREIGN DATA WRAPPER regress_ddln_fdw;
CREATE FOREIGN TABLE ft1 (a int) SERVER regress_ddln_srv;
CREATE USER MAPPING FOR regress_ddln_capture SERVER regress_ddln_srv;
SELECT * FROM pg_temp.ev(:last);

--
-- Triggers, rules, policies, publications
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE FUNCTION trg_fn() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
CREATE TRIGGER t1_trg BEFORE INSERT ON t1 FOR EACH ROW EXECUTE FUNCTION trg_fn();
ALTER TRIGGER t1_trg ON t1 RENAME TO t1_trg2;
ALTER TABLE t1 DISABLE TRIGGER t1_trg2;
CREATE RULE t4_rule AS ON INSERT TO t4 DO ALSO NOTIFY t4_insert;
ALTER TABLE t1 ENABLE ROW LEVEL SECURITY;
CREATE POLICY t1_pol ON t1 USING (d > 0);
ALTER POLICY t1_pol ON t1 RENAME TO t1_pol2;
-- (its warning about wal_level, worded differently from 17 on, is not shown)
SET client_min_messages = error;
CREATE PUBLICATION pub1 FOR TABLE t1;
RESET client_min_messages;
ALTER PUBLICATION pub1 ADD TABLE t2;
ALTER PUBLICATION pub1 ADD TABLES IN SCHEMA s1r;
SELECT * FROM pg_temp.ev(:last);

--
-- GRANT and REVOKE: one row per object, with the privileges and grantees
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
GRANT SELECT, INSERT ON t1, v1 TO regress_ddln_capture WITH GRANT OPTION;
-- (a column privilege is listed with the others, "columns" says it is one)
GRANT UPDATE (c, d) ON t1 TO regress_ddln_capture, PUBLIC;
GRANT ALL ON SEQUENCE seq1 TO regress_ddln_capture;
GRANT EXECUTE ON FUNCTION add1(int) TO regress_ddln_capture;
GRANT USAGE, CREATE ON SCHEMA s1r TO regress_ddln_capture;
GRANT USAGE ON TYPE mood TO regress_ddln_capture;
GRANT SELECT ON ALL TABLES IN SCHEMA s2 TO regress_ddln_capture;
GRANT USAGE ON FOREIGN SERVER regress_ddln_srv TO regress_ddln_capture;
GRANT USAGE ON LANGUAGE plpgsql TO regress_ddln_capture;
REVOKE INSERT ON t1 FROM regress_ddln_capture CASCADE;
REVOKE ALL ON t1, v1 FROM regress_ddln_capture;
REVOKE EXECUTE ON FUNCTION add1(int) FROM PUBLIC;
ALTER DEFAULT PRIVILEGES FOR ROLE regress_ddln_capture IN SCHEMA s2 GRANT SELECT ON TABLES TO PUBLIC;
SELECT * FROM pg_temp.ev(:last);

--
-- COMMENT, RENAME, SET SCHEMA, OWNER TO
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
COMMENT ON TABLE t1 IS 'table one';
COMMENT ON COLUMN t1.c IS 'column c';
COMMENT ON FUNCTION add1(int) IS 'adds one';
ALTER TABLE t3 RENAME TO t3r;
ALTER TABLE t2 RENAME COLUMN note TO remark;
ALTER TABLE t1 RENAME CONSTRAINT t1_c_check TO t1_c_nonempty;
ALTER TABLE t3r SET SCHEMA s1r;
ALTER FUNCTION add1(int) SET SCHEMA s1r;
ALTER TYPE pair SET SCHEMA s1r;
ALTER TABLE t4 OWNER TO regress_ddln_capture;
ALTER TABLE t4 OWNER TO CURRENT_USER;
SELECT * FROM pg_temp.ev(:last);

--
-- ALTER TABLE: subcommands (kind, name) in details
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE t2 ADD COLUMN x int, ADD CONSTRAINT t2_x_pos CHECK (x > 0), ALTER COLUMN remark SET NOT NULL;
ALTER TABLE t2 ALTER COLUMN x SET DEFAULT 7, ALTER COLUMN x SET STATISTICS 200, DROP CONSTRAINT t2_x_pos;
ALTER TABLE t2 ADD COLUMN y int DEFAULT 0;
ALTER TABLE t1 REPLICA IDENTITY FULL, SET (fillfactor = 90);
ALTER TABLE t2 DROP COLUMN x;
SELECT * FROM pg_temp.ev(:last);
-- a command that recurses to inheritance children or partitions lists each
-- subcommand the user wrote once
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE t1 ALTER COLUMN c SET DEFAULT 'c', ALTER COLUMN b SET GENERATED BY DEFAULT, ALTER COLUMN c DROP NOT NULL;
ALTER TABLE meas ADD COLUMN v int, ALTER COLUMN city SET NOT NULL;
SELECT * FROM pg_temp.ev(:last);

--
-- Table rewrites: a table_rewrite row (before the command's own row) with
-- the reasons
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
ALTER TABLE t2 ALTER COLUMN y TYPE bigint;
ALTER TABLE t2 ADD COLUMN z float8 DEFAULT random();
ALTER TABLE t4 SET LOGGED;
ALTER TABLE t4 ALTER COLUMN a TYPE bigint, SET UNLOGGED;
-- the index and constraints PostgreSQL rebuilds are not subcommands of their own
ALTER TABLE t2 ALTER COLUMN t1_id TYPE bigint, ALTER COLUMN id TYPE bigint;
SELECT * FROM pg_temp.ev(:last);

--
-- DDL inside PL/pgSQL, DO and SQL functions: the query is the statement that
-- ran the DDL
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE FUNCTION make_tables(n int) RETURNS void LANGUAGE plpgsql AS $$BEGIN CREATE TABLE plt_static (a int); EXECUTE format('CREATE TABLE %I (a int)', 'plt_' || n); END$$;
SELECT make_tables(1);
DO $$BEGIN CREATE TABLE do_static (a int); EXECUTE 'ALTER TABLE do_static ADD COLUMN b int'; END$$;
CREATE FUNCTION sql_ddl() RETURNS void LANGUAGE sql AS 'CREATE TABLE sqlf1 (a int); COMMENT ON TABLE sqlf1 IS ''f''';
SELECT sql_ddl();
SELECT * FROM pg_temp.ev(:last);

--
-- Several statements in one query string: each row has its own statement's
-- text, without the surrounding blanks
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE multi1 (a int) \; COMMENT ON TABLE multi1 IS 'm' \; SELECT 1 AS between_statements \; DROP TABLE multi1;
SELECT trigger_event, command_tag, object_identity, quote_literal(query) AS query
FROM ddl_notify.event WHERE id > :last ORDER BY id;

--
-- Drops: what the user named (original) and what came with it; no row,
-- array or TOAST types, no _RETURN rule
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DROP VIEW v1;
SELECT * FROM pg_temp.ev(:last);
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE VIEW v2 AS SELECT id FROM t2;
CREATE TABLE t6 (a int, big text);
DROP TABLE t6, t2 CASCADE;
SELECT * FROM pg_temp.ev(:last);
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DROP SCHEMA s2 CASCADE;
SELECT * FROM pg_temp.ev(:last);
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DROP TYPE mood;
DROP DOMAIN posint;
DROP FUNCTION s1r.add1(int);
DROP PROCEDURE proc2(int);
DROP PUBLICATION pub1;
DROP POLICY t1_pol2 ON t1;
DROP TRIGGER t1_trg2 ON t1;
DROP RULE t4_rule ON t4;
DROP SEQUENCE seq1;
DROP MATERIALIZED VIEW mv1;
DROP TYPE floatrange;
DROP FOREIGN TABLE ft1;
DROP SERVER regress_ddln_srv CASCADE;
SELECT * FROM pg_temp.ev(:last);
-- serial and identity sequences, constraints, indexes, statistics, a child table
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DROP TABLE t1 CASCADE;
SELECT * FROM pg_temp.ev(:last);
-- none of the unnamed companions anywhere in this file: array types, row
-- types (a "type" row named like a relation dropped with it), TOAST, _RETURN
SELECT count(*) AS companions FROM ddl_notify.event e
WHERE e.trigger_event = 'sql_drop'
  AND ((e.object_type = 'type' AND e.object_identity LIKE '%[]')
	   OR (e.object_type = 'type' AND EXISTS (
			   SELECT FROM ddl_notify.event r
			   WHERE r.xid = e.xid AND r.trigger_event = 'sql_drop'
				 AND r.object_identity = e.object_identity AND r.object_type <> 'type'))
	   OR e.object_type = 'toast table' OR e.schema_name = 'pg_toast'
	   OR e.object_identity LIKE '"\_RETURN" on %');

--
-- G1: the rows are the DDL's own transaction's, in statement order
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
BEGIN;
CREATE TABLE ord_c (a int);
CREATE TABLE ord_a (a int);
ALTER TABLE ord_c ADD COLUMN b int;
CREATE TABLE ord_b (a int);
DROP TABLE ord_a;
SELECT count(*) AS rows_in_xact, bool_and(xid = pg_current_xact_id()) AS own_xid
FROM ddl_notify.event WHERE id > :last;
COMMIT;
SELECT * FROM pg_temp.ev(:last);
-- ids ascend in statement order
SELECT array_agg(command_tag || ' ' || object_identity ORDER BY id) AS by_id
FROM ddl_notify.event WHERE id > :last;

-- ROLLBACK leaves nothing
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
BEGIN;
CREATE TABLE rb1 (a int);
ALTER TABLE t4 ADD COLUMN rb int;
DROP TABLE meas;
SELECT count(*) AS rows_before_rollback FROM ddl_notify.event WHERE id > :last
  AND NOT (object_type = 'table constraint' AND object_identity LIKE '%\_not\_null on %');
ROLLBACK;
SELECT count(*) AS rows_after_rollback FROM ddl_notify.event WHERE id > :last;
SELECT to_regclass('rb1') AS rb1, to_regclass('meas') AS meas;

-- ROLLBACK TO SAVEPOINT leaves nothing of the savepoint; RELEASE keeps
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
BEGIN;
CREATE TABLE sp_kept1 (a int);
SAVEPOINT s;
CREATE TABLE sp_gone1 (a int);
DROP TABLE meas;
SAVEPOINT s_inner;
CREATE TABLE sp_gone2 (a int);
RELEASE SAVEPOINT s_inner;
ROLLBACK TO SAVEPOINT s;
CREATE TABLE sp_kept2 (a int);
SAVEPOINT r;
CREATE TABLE sp_kept3 (a int);
SAVEPOINT r_inner;
COMMENT ON TABLE sp_kept3 IS 'kept';
RELEASE SAVEPOINT r_inner;
RELEASE SAVEPOINT r;
SAVEPOINT x;
ALTER TABLE sp_kept1 ADD COLUMN gone int;
ROLLBACK TO SAVEPOINT x;
COMMIT;
SELECT * FROM pg_temp.ev(:last);

-- a failed statement, an exception caught in PL/pgSQL, an aborted
-- transaction and a procedure's own ROLLBACK leave nothing
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE t4 (a int);
CREATE TABLE fails (a int, CHECK (nosuchcol > 0));
DO $$
BEGIN
	BEGIN
		CREATE TABLE exc_gone (a int);
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN raise_exception THEN
		CREATE TABLE exc_kept (a int);
	END;
END
$$;
BEGIN;
CREATE TABLE aborted_xact (a int);
SELECT 1/0;
COMMIT;
CREATE PROCEDURE xact_proc() LANGUAGE plpgsql AS $$BEGIN CREATE TABLE proc_kept (a int); COMMIT; CREATE TABLE proc_gone (a int); ROLLBACK; END$$;
CALL xact_proc();
SELECT * FROM pg_temp.ev(:last);

-- a prepared transaction: nothing visible until COMMIT PREPARED, nothing
-- after ROLLBACK PREPARED
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
BEGIN;
CREATE TABLE prep_gone (a int);
PREPARE TRANSACTION 'regress_ddln_gone';
BEGIN;
CREATE TABLE prep_kept (a int);
PREPARE TRANSACTION 'regress_ddln_kept';
SELECT count(*) AS visible_while_prepared FROM ddl_notify.event WHERE id > :last;
ROLLBACK PREPARED 'regress_ddln_gone';
COMMIT PREPARED 'regress_ddln_kept';
SELECT * FROM pg_temp.ev(:last);

--
-- Cleanup: the next file starts from scratch
--
DROP TABLE t3_into, t4, meas, meas_2024, meas_2026, ord_c, ord_b, sp_kept1, sp_kept2,
	sp_kept3, exc_kept, plt_static, plt_1, do_static, sqlf1, proc_kept, prep_kept;
DROP SCHEMA s1r CASCADE;
DROP FUNCTION make_tables(int), sql_ddl(), trg_fn(), et_fn();
DROP PROCEDURE xact_proc();
DROP AGGREGATE sum1(int);
DROP OPERATOR === (int, int);
DROP COLLATION coll1;
DROP TEXT SEARCH CONFIGURATION tscfg1;
DROP FOREIGN DATA WRAPPER regress_ddln_fdw;
DROP OWNED BY regress_ddln_capture;
DROP ROLE regress_ddln_capture;
DROP EXTENSION ddl_notify;
