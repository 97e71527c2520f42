--
-- 030_hostile: hostile handlers and hostile DDL (issue 18)
--
-- Roles: alice and bob have docs/reference.md's subscriber grants, nothing more.
-- Proves, with the code change each part catches:
-- 1. G7: a handler that RAISEs query_canceled or admin_shutdown fails like
--    any other handler (attempts, SQLSTATE, dead letter); the superuser's
--    CALL deliver() completes and the other subscriber is delivered.
--    Catches: DdlnErrorIsDeliverers() deciding by SQLSTATE alone (the
--    engine re-threw the handler's error and gave up on every subscriber).
-- 2. G7: a handler's 1 MB message, detail and hint are recorded cut to
--    8 kB each, in subscriber and dead_letter alike.  Catches: recording the
--    error uncapped (CopyErrorData() kept whole).
-- 3. ddl_notify.max_query_length cuts the stored text of every row of a
--    statement; ddl_notify.batch_memory ends a batch once its rows pass it
--    (the row that passes it still goes).  Catches: no cap (each row carries
--    the whole text); a batch bounded in rows only (one transaction).
-- 4. G10: a handler gets event.query only if its owner may SELECT it (the
--    table or the column); secrets in connection strings are redacted in
--    keyword = value and URI forms, also when escapes spell them; a comment
--    mentioning a password blanks nothing.  Catches: passing query to every
--    handler; redaction by searching words in token text that ran over
--    comments.
-- 6. subscriber_status shows another role's last_error only to its members,
--    superusers and pg_read_all_stats.  Catches: the view showing
--    s.last_error to every reader.
-- 7. ddl_notify.max_subscribers_per_role (53400); a session-level advisory
--    lock a handler takes is released after its call, failed or not, unless
--    the session calling deliver() holds advisory locks of its own.
--    Catches: no per-role count in subscribe(); no LockReleaseSession()
--    after the call.
-- (5, skip() left open must not stall the worker: test/t/032_hostile_worker.pl.)
-- Errors are shown with their SQLSTATE only; nothing prints an OID, an id,
-- a transaction id or a timestamp.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;
SET client_min_messages = warning;
\set status 'SELECT name, pending, attempts, last_error_sqlstate, octet_length(last_error) AS error_bytes FROM ddl_notify.subscriber_status ORDER BY name'

CREATE ROLE regress_ddln_h_alice;
CREATE ROLE regress_ddln_h_bob;
CREATE ROLE regress_ddln_h_carol;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_h_alice, regress_ddln_h_bob, regress_ddln_h_carol;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
						  ddl_notify.unsubscribe(text), ddl_notify.skip(text, bigint)
	TO regress_ddln_h_alice, regress_ddln_h_bob;
GRANT SELECT ON ddl_notify.subscriber_status TO regress_ddln_h_alice, regress_ddln_h_bob, regress_ddln_h_carol;
GRANT EXECUTE ON FUNCTION ddl_notify.delivery_status() TO regress_ddln_h_alice, regress_ddln_h_bob, regress_ddln_h_carol;

-- What handlers saw: who, which event, its query, in which transaction.
CREATE TABLE hlog (n serial, sub text, ident text, query text, xid xid8);
GRANT INSERT ON hlog TO PUBLIC;
GRANT USAGE ON SEQUENCE hlog_n_seq TO PUBLIC;
CREATE FUNCTION h_log(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.hlog (sub, ident, query, xid)
	SELECT CASE WHEN r.rolsuper THEN 'superuser' ELSE r.rolname::text END, e.object_identity,
		   e.query, pg_catalog.pg_current_xact_id()
	FROM pg_catalog.pg_roles r WHERE r.rolname = current_user
$$;
CREATE FUNCTION h_cancel(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'not a real cancel' USING ERRCODE = 'query_canceled'; END $$;
CREATE FUNCTION h_shutdown(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'not a real shutdown' USING ERRCODE = 'admin_shutdown'; END $$;
CREATE FUNCTION h_huge(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION USING MESSAGE = repeat('m', 1000000), DETAIL = repeat('d', 1000000),
						  HINT = repeat('h', 1000000);
END $$;

--
-- 1. A handler cannot pick the SQLSTATE that makes the engine give up
--
SET ROLE regress_ddln_h_alice;
SELECT ddl_notify.subscribe('a_cancel', 'h_cancel(ddl_notify.event)', max_attempts => 2) > 0 AS subscribed;
SELECT ddl_notify.subscribe('a_shutdown', 'h_shutdown(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
SET ROLE regress_ddln_h_bob;
SELECT ddl_notify.subscribe('b_log', 'h_log(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
CREATE TABLE fake_t ();
-- the superuser's round completes; bob gets his event
CALL ddl_notify.deliver();
:status;
CALL ddl_notify.deliver();
-- a second failure: a_cancel dead-letters (max_attempts 2), a_shutdown backs off
:status;
SELECT subscriber, attempts, sqlstate, error FROM ddl_notify.dead_letter ORDER BY id;
SELECT sub, ident FROM hlog ORDER BY n;
SELECT ddl_notify.unsubscribe('a_cancel'), ddl_notify.unsubscribe('a_shutdown');
TRUNCATE hlog, ddl_notify.dead_letter;

--
-- 2. A huge error is recorded cut, and delivery goes on
--
SET ROLE regress_ddln_h_alice;
SELECT ddl_notify.subscribe('a_huge', 'h_huge(ddl_notify.event)', max_attempts => 2) > 0 AS subscribed;
RESET ROLE;
CREATE TABLE huge_t ();
CALL ddl_notify.deliver();
:status;
SELECT regexp_replace(last_error, '([mdh])\1{20,}', '\1...', 'g') AS error_shape
FROM ddl_notify.subscriber WHERE name = 'a_huge';
CALL ddl_notify.deliver();
SELECT subscriber, attempts, octet_length(error) AS error_bytes FROM ddl_notify.dead_letter;
SELECT sub, ident FROM hlog ORDER BY n;
SELECT ddl_notify.unsubscribe('a_huge');
TRUNCATE hlog, ddl_notify.dead_letter;

--
-- 3. Statement texts are capped; batches are bounded in bytes
--
SELECT ddl_notify.subscribe('su_log', 'h_log(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE cap_t1 ();
CREATE TABLE cap_t2 ();
CREATE TABLE cap_t3 ();
SELECT format('DROP TABLE cap_t1, cap_t2, cap_t3 /* %s */', repeat('c', 200000)) AS dropsql \gset
SET ddl_notify.max_query_length = 1000;
:dropsql;
-- every row of the statement: 1000 bytes of it and a note
SELECT object_identity, octet_length(query) AS bytes, substr(query, 990) AS tail
FROM ddl_notify.event WHERE command_tag = 'DROP TABLE' ORDER BY id;
-- no cap: the text whole
SET ddl_notify.max_query_length = -1;
CREATE TABLE cap_t4 ();
SELECT format('DROP TABLE cap_t4 /* %s */', repeat('c', 200000)) AS dropsql \gset
:dropsql;
SELECT object_identity, octet_length(query) AS bytes FROM ddl_notify.event
WHERE command_tag = 'DROP TABLE' ORDER BY id;
-- only a superuser may change it
SET ROLE regress_ddln_h_alice;
SET ddl_notify.max_query_length = -1;
SET ddl_notify.batch_memory = '1GB';
RESET ROLE;
CALL ddl_notify.deliver();
SELECT ident, octet_length(query) AS bytes FROM hlog
WHERE sub = 'superuser' AND query LIKE 'DROP%' ORDER BY 1, 2;
TRUNCATE hlog;
-- batches: six events of 40 kB each (text that does not compress), at most
-- 64 kB of rows per batch: two events per transaction for the superuser's
-- subscriber (the second passes 64 kB and ends it); bob's events come
-- without their query (he may not read it), all six in one transaction
SET ddl_notify.batch_memory = 64;
SHOW ddl_notify.batch_memory;
SELECT string_agg(md5(g::text), '') AS noise FROM generate_series(1, 1250) g \gset
SELECT string_agg(format('CREATE TABLE bm_%s () /* %s */;', i, :'noise'), ' ')
	   AS bmsql FROM generate_series(1, 6) i \gset
:bmsql
CALL ddl_notify.deliver();
SELECT sub, count(*) AS events, count(DISTINCT xid) AS transactions FROM hlog GROUP BY sub ORDER BY sub;
SELECT count(*) AS batches_of_two FROM (SELECT xid FROM hlog WHERE sub = 'superuser' GROUP BY xid HAVING count(*) = 2) b;
-- a row bigger than the limit alone still goes, one per batch
SET ddl_notify.batch_memory = 64;
SELECT string_agg(format('COMMENT ON TABLE bm_%s IS %L;', i, repeat(:'noise', 3)), ' ')
	   AS bmsql2 FROM generate_series(1, 3) i \gset
TRUNCATE hlog;
:bmsql2
CALL ddl_notify.deliver();
SELECT sub, count(*) AS events, count(DISTINCT xid) AS transactions FROM hlog GROUP BY sub ORDER BY sub;
RESET ddl_notify.batch_memory;
RESET ddl_notify.max_query_length;
DROP TABLE bm_1, bm_2, bm_3, bm_4, bm_5, bm_6;
CALL ddl_notify.deliver();
SELECT ddl_notify.unsubscribe('su_log');
TRUNCATE hlog;

--
-- 4. Who may see query texts, and redaction by meaning
--
SET ROLE regress_ddln_h_alice;
SELECT ddl_notify.subscribe('a_log', 'h_log(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
SELECT ddl_notify.subscribe('su_log', 'h_log(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE vis_t ();
CALL ddl_notify.deliver();
-- alice may not read query: NULL; bob neither (yet); the superuser may
SELECT sub, ident, query FROM hlog ORDER BY sub;
TRUNCATE hlog;
-- the column privilege is enough, as is the table's
GRANT SELECT (query) ON ddl_notify.event TO regress_ddln_h_bob;
GRANT SELECT ON ddl_notify.event TO regress_ddln_h_alice;
DROP TABLE vis_t;
CALL ddl_notify.deliver();
SELECT sub, ident, query FROM hlog ORDER BY sub;
REVOKE SELECT (query) ON ddl_notify.event FROM regress_ddln_h_bob;
REVOKE SELECT ON ddl_notify.event FROM regress_ddln_h_alice;
SELECT ddl_notify.unsubscribe('a_log');
TRUNCATE hlog;

-- connection strings, however spelled
SET client_min_messages = error;
SELECT COALESCE(max(id), 0) AS before_secrets FROM ddl_notify.event \gset
CREATE SUBSCRIPTION regress_ddln_sub CONNECTION 'postgresql://repl:hunter1@db/x' PUBLICATION p
	WITH (connect = false);
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION 'host=h password=hunter2 user=u';
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION 'host=h password = ''hun ter3'' dbname=d';
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION E'host=h pass\x77ord=hunter4';
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION U&'host=h p\0061ssword=hunter5';
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION U&'host=h p!0061ssword=hunter6' UESCAPE '!';
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION 'postgres://u@h/db?sslmode=disable&p%61ssword=hunter7';
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION 'postgresql://u:hunter8@[::1]:5432/db?sslpassword=hunter9';
ALTER SUBSCRIPTION regress_ddln_sub CONNECTION 'host=h '
	'password=hunter10';
ALTER SUBSCRIPTION regress_ddln_sub SET (slot_name = NONE);
DROP SUBSCRIPTION regress_ddln_sub;
CREATE TABLE keep_t ();
-- a comment mentioning a password hides nothing around it
COMMENT ON TABLE keep_t IS 'keep me' /* password */;
COMMENT ON TABLE keep_t IS $x$keep me too$x$ -- the password
;
-- a string that only mentions a password is no secret
COMMENT ON TABLE keep_t IS 'password rotation is monthly';
-- an option named password, spelled with escapes
CREATE FOREIGN DATA WRAPPER regress_ddln_w;
CREATE SERVER regress_ddln_s FOREIGN DATA WRAPPER regress_ddln_w;
CREATE USER MAPPING FOR regress_ddln_h_alice SERVER regress_ddln_s OPTIONS (U&"p!0061ssword" UESCAPE '!' 'hunter11');
ALTER USER MAPPING FOR regress_ddln_h_alice SERVER regress_ddln_s OPTIONS (SET password U&'hun!0074er12' UESCAPE '!');
DROP SERVER regress_ddln_s CASCADE;
DROP FOREIGN DATA WRAPPER regress_ddln_w;
SET client_min_messages = warning;
SELECT command_tag, query FROM ddl_notify.event
WHERE id > :before_secrets AND command_tag NOT LIKE 'DROP%' ORDER BY id;
SELECT count(*) AS leaked FROM ddl_notify.event
WHERE id > :before_secrets AND query ~ 'hun.?ter';
CALL ddl_notify.deliver();
DROP TABLE keep_t;
CALL ddl_notify.deliver();
TRUNCATE hlog;

--
-- 6. subscriber_status: another role's error text is hidden
--
CREATE FUNCTION h_secret_error(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'Key (k)=(bob-api-key-123) already exists'; END $$;
SET ROLE regress_ddln_h_bob;
SELECT ddl_notify.subscribe('b_secret', 'h_secret_error(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
SET ROLE regress_ddln_h_alice;
SELECT ddl_notify.subscribe('a_secret', 'h_secret_error(ddl_notify.event)') > 0 AS subscribed;
RESET ROLE;
CREATE TABLE status_t ();
CALL ddl_notify.deliver();
\set errors 'SELECT name, owner, attempts, last_error_sqlstate, last_error FROM ddl_notify.subscriber_status WHERE name LIKE ''%_secret'' ORDER BY name'
SET ROLE regress_ddln_h_alice;
:errors;
RESET ROLE;
SET ROLE regress_ddln_h_bob;
:errors;
RESET ROLE;
-- carol: nothing of her own; with pg_read_all_stats she sees all
SET ROLE regress_ddln_h_carol;
:errors;
RESET ROLE;
GRANT pg_read_all_stats TO regress_ddln_h_carol;
SET ROLE regress_ddln_h_carol;
:errors;
RESET ROLE;
REVOKE pg_read_all_stats FROM regress_ddln_h_carol;
:errors;
SELECT ddl_notify.unsubscribe('a_secret'), ddl_notify.unsubscribe('b_secret');

--
-- 7. One role cannot take every slot; handlers' advisory locks do not stay
--
SET ddl_notify.max_subscribers_per_role = 2;
SET ROLE regress_ddln_h_alice;
SELECT ddl_notify.subscribe('a_1', 'h_log(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('a_2', 'h_log(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('a_3', 'h_log(ddl_notify.event)');
RESET ROLE;
-- bob has one (b_log), so one more
SET ROLE regress_ddln_h_bob;
SELECT ddl_notify.subscribe('b_2', 'h_log(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('b_3', 'h_log(ddl_notify.event)');
SET ddl_notify.max_subscribers_per_role = 64;
RESET ROLE;
-- the superuser is not limited
SELECT ddl_notify.subscribe('su_2', 'h_log(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('su_3', 'h_log(ddl_notify.event)') > 0 AS subscribed;
SELECT name, CASE WHEN owner::text LIKE 'regress%' THEN owner::text ELSE 'superuser' END AS owner
FROM ddl_notify.subscriber_status ORDER BY name;
SELECT count(ddl_notify.unsubscribe(name)) FROM ddl_notify.subscriber WHERE name <> 'b_log';
RESET ddl_notify.max_subscribers_per_role;
CALL ddl_notify.deliver();
TRUNCATE hlog;

CREATE FUNCTION h_lock(e ddl_notify.event) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_lock(4242);
	PERFORM pg_advisory_lock_shared(4243);
	IF e.object_identity LIKE '%fail%' THEN
		PERFORM pg_advisory_lock(4244);
		RAISE EXCEPTION 'failing with a lock';
	END IF;
END $$;
SET ROLE regress_ddln_h_alice;
SELECT ddl_notify.subscribe('a_lock', 'h_lock(ddl_notify.event)', max_attempts => 1) > 0 AS subscribed;
RESET ROLE;
\set mylocks 'SELECT objid, mode FROM pg_locks WHERE locktype = ''advisory'' AND pid = pg_backend_pid() ORDER BY objid, mode'
CREATE TABLE lock_ok ();
CREATE TABLE lock_fail ();
CALL ddl_notify.deliver();
-- none of the handler's locks outlived its call
:mylocks;
SELECT name, pending, dead_letters FROM ddl_notify.subscriber_status ORDER BY name;
-- a session that holds its own advisory lock keeps it (and then the handler's)
SELECT pg_advisory_lock(1);
CREATE TABLE lock_ok2 ();
CALL ddl_notify.deliver();
:mylocks;
SELECT pg_advisory_unlock_all();
SELECT ddl_notify.unsubscribe('a_lock');

--
-- Clean up
--
SELECT ddl_notify.unsubscribe('b_log');
DROP TABLE hlog, fake_t, huge_t, status_t, lock_ok, lock_fail, lock_ok2;
DROP FUNCTION h_log(ddl_notify.event), h_cancel(ddl_notify.event), h_shutdown(ddl_notify.event),
	h_huge(ddl_notify.event), h_secret_error(ddl_notify.event), h_lock(ddl_notify.event);
DROP EXTENSION ddl_notify;
DROP OWNED BY regress_ddln_h_alice, regress_ddln_h_bob, regress_ddln_h_carol;
DROP ROLE regress_ddln_h_alice, regress_ddln_h_bob, regress_ddln_h_carol;
