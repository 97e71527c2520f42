--
-- 048_statement_key: G2 (complete capture), the "statement" key of every
-- event's details: which top-level statement of its transaction the event
-- belongs to, the search_path and role it ran under, whether "query" is its
-- exact text (src/statementkey.c; docs/reference.md, "The payload").
--
-- Shown: the events of one statement (a serial table: sequence, table,
-- index, ALTER SEQUENCE) share an id; two statements of one transaction,
-- and of one multi-statement query string, get 1 and 2; a statement rolled
-- back to a savepoint leaves a gap; each DDL statement of a DO block and of
-- a function is top-level (its own id, its own text, the function's
-- search_path); the objects of CREATE EXTENSION's script share
-- CREATE EXTENSION's id, "nested", never "exact"; a statement whose text
-- redaction changed, one cut by max_query_length and one captured with
-- capture_query off are not "exact".
-- Catches: an id drawn per event or per trigger call rather than per
-- top-level statement (the serial table's or the extension's events would
-- get several), a count not restarted per transaction, a nested event
-- marked exact, "exact" left true when the text was redacted or cut.
--
-- Ids, xids and OIDs vary and are not printed; statement ids are ordinals
-- within a transaction and are.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
CREATE FUNCTION pg_temp.sk(since bigint)
RETURNS TABLE (command_tag text, object_identity text, stmt jsonb, exact jsonb, nested jsonb,
			   search_path text, own_role bool, query text)
LANGUAGE sql AS $$
	SELECT command_tag, object_identity, details->'statement'->'id', details->'statement'->'exact',
		   details->'statement'->'nested', details->'statement'->>'search_path',
		   details->'statement'->>'role' = current_user, left(query, 60)
	FROM ddl_notify.event WHERE id > since
	  AND NOT (object_type = 'table constraint' AND object_identity LIKE '%\_not\_null on %')
	ORDER BY id
$$;
CREATE SCHEMA sk;
SET search_path = sk, public;

-- one statement, several events: one id
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE t1 (id serial PRIMARY KEY, v text);
SELECT * FROM pg_temp.sk(:last);

-- two statements of one transaction; a savepoint rolled back leaves a gap
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
BEGIN;
CREATE TABLE t2 (a int);
SAVEPOINT s;
CREATE TABLE t_gone (a int);
ROLLBACK TO SAVEPOINT s;
CREATE INDEX t2_a ON t2 (a);
COMMIT;
SELECT * FROM pg_temp.sk(:last);

-- one query string of two statements: each its own id and slice
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE t3 (a int) \; COMMENT ON TABLE t3 IS 'three';
SELECT * FROM pg_temp.sk(:last);

-- a DO block: each DDL statement in it is top-level, with its own text
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DO $$
BEGIN
	CREATE TABLE t4 (a int);
	EXECUTE 'ALTER TABLE t4 ADD COLUMN b int';
END
$$;
SELECT * FROM pg_temp.sk(:last);

-- a function with its own search_path: its statement's
CREATE SCHEMA sk2;
CREATE FUNCTION sk.mk() RETURNS void LANGUAGE plpgsql SET search_path = sk2
AS $$ BEGIN CREATE TABLE t5 (a int); END $$;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
SELECT sk.mk();
SELECT * FROM pg_temp.sk(:last);

-- CREATE EXTENSION: its script's objects share its id, nested, not exact;
-- its own event is the exact one
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE EXTENSION citext SCHEMA sk;
SELECT stmt, nested, exact, command_tag = 'CREATE EXTENSION' AS is_create_extension,
	   count(*) > 0 AS some, left(min(query) FILTER (WHERE nested = 'false'), 40) AS own_query
FROM pg_temp.sk(:last) GROUP BY 1, 2, 3, 4 ORDER BY 4, 2;
DROP EXTENSION citext;

-- texts that are not the statement's exact text
CREATE FOREIGN DATA WRAPPER sk_fdw;
CREATE SERVER sk_srv FOREIGN DATA WRAPPER sk_fdw;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE USER MAPPING FOR PUBLIC SERVER sk_srv OPTIONS (user 'u', password 'hunter9');
SET ddl_notify.max_query_length = 20;
CREATE TABLE t6_with_a_long_name (a int);
RESET ddl_notify.max_query_length;
SET ddl_notify.capture_query = off;
CREATE TABLE t7 (a int);
RESET ddl_notify.capture_query;
SELECT * FROM pg_temp.sk(:last);

DROP USER MAPPING FOR PUBLIC SERVER sk_srv;
DROP SERVER sk_srv;
DROP FOREIGN DATA WRAPPER sk_fdw;
RESET search_path;
DROP SCHEMA sk, sk2 CASCADE;
