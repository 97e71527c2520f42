--
-- 032_search_path: objects a role plants on the search_path before and
-- after CREATE EXTENSION never run inside ddl_notify (G10)
--
-- A role that may create in public plants functions and operators that
-- shadow the built-ins ddl_notify's own SQL uses (=, <>, &, <<, +, count,
-- min, max, generate_series, pg_has_role, clock_timestamp, ...), each
-- recording that it ran and as whom; a superuser then calls every SQL entry
-- point of the extension, reads its view and runs a delivery round, with
-- the planted schema FIRST on its search_path (before pg_catalog).
-- Proves: nothing planted ever runs (planted_calls stays empty), whatever
-- the caller's search_path.  Catches: DdlnBeginSafe() without its
-- search_path (the API's and engine's statements then resolve the planted
-- operators, as the superuser); any unqualified operator or function in
-- the install script's is_pending() or view.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set VERBOSITY sqlstate
\set SHOW_CONTEXT never
SET client_min_messages = warning;
SET ddl_notify.retry_initial_delay = 0;

CREATE ROLE regress_ddln_planter;
CREATE SCHEMA planted AUTHORIZATION regress_ddln_planter;
CREATE TABLE public.planted_calls (what text, who name);
GRANT INSERT ON public.planted_calls TO PUBLIC;
SET ROLE regress_ddln_planter;
CREATE FUNCTION planted.note(w text) RETURNS void LANGUAGE sql
	AS $$ INSERT INTO public.planted_calls VALUES (w, current_user) $$;
-- operators the extension's statements use, for the types they use them on
CREATE FUNCTION planted.eq(a text, b text) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('=(text,text)'); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR planted.= (LEFTARG = text, RIGHTARG = text, FUNCTION = planted.eq);
CREATE FUNCTION planted.eq4(a integer, b integer) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('=(int,int)'); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR planted.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = planted.eq4);
CREATE FUNCTION planted.eq8(a bigint, b bigint) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('=(bigint,bigint)'); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR planted.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = planted.eq8);
CREATE FUNCTION planted.ne8(a xid8, b xid8) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('<>(xid8,xid8)'); RETURN a OPERATOR(pg_catalog.<>) b; END $$;
CREATE OPERATOR planted.<> (LEFTARG = xid8, RIGHTARG = xid8, FUNCTION = planted.ne8);
CREATE FUNCTION planted.band(a bigint, b bigint) RETURNS bigint LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('&(bigint,bigint)'); RETURN a OPERATOR(pg_catalog.&) b; END $$;
CREATE OPERATOR planted.& (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = planted.band);
CREATE FUNCTION planted.shl(a bigint, b integer) RETURNS bigint LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('<<(bigint,int)'); RETURN a OPERATOR(pg_catalog.<<) b; END $$;
CREATE OPERATOR planted.<< (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = planted.shl);
CREATE FUNCTION planted.plus(a bigint, b bigint) RETURNS bigint LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('+(bigint,bigint)'); RETURN a OPERATOR(pg_catalog.+) b; END $$;
CREATE OPERATOR planted.+ (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = planted.plus);
CREATE FUNCTION planted.gt4(a integer, b integer) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('>(int,int)'); RETURN a OPERATOR(pg_catalog.>) b; END $$;
CREATE OPERATOR planted.> (LEFTARG = integer, RIGHTARG = integer, FUNCTION = planted.gt4);
-- functions it calls
CREATE FUNCTION planted.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('clock_timestamp()'); RETURN pg_catalog.clock_timestamp(); END $$;
CREATE FUNCTION planted.pg_has_role(r oid, p text) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('pg_has_role()'); RETURN pg_catalog.pg_has_role(r, p); END $$;
CREATE FUNCTION planted.pg_visible_in_snapshot(x xid8, s pg_snapshot) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('pg_visible_in_snapshot()'); RETURN pg_catalog.pg_visible_in_snapshot(x, s); END $$;
CREATE FUNCTION planted.generate_series(a integer, b integer) RETURNS SETOF integer LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('generate_series()'); RETURN QUERY SELECT pg_catalog.generate_series(a, b); END $$;
CREATE FUNCTION planted.unnest(a bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('unnest(bigint[])'); RETURN QUERY SELECT pg_catalog.unnest(a); END $$;
CREATE FUNCTION planted.to_jsonb(e anyelement) RETURNS jsonb LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('to_jsonb()'); RETURN pg_catalog.to_jsonb(e); END $$;
CREATE FUNCTION planted.make_interval(secs float8) RETURNS interval LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('make_interval()'); RETURN pg_catalog.make_interval(secs => secs); END $$;
CREATE FUNCTION planted.now() RETURNS timestamptz LANGUAGE plpgsql
	AS $$ BEGIN PERFORM planted.note('now()'); RETURN pg_catalog.now(); END $$;
RESET ROLE;

-- a handler of the superuser's, and one that fails (dead letters, backoff)
CREATE TABLE sp_seen (ident text);
CREATE FUNCTION sp_h(e ddl_notify.event) RETURNS void LANGUAGE plpgsql
	AS $$ BEGIN INSERT INTO public.sp_seen VALUES (e.object_identity); END $$;
CREATE FUNCTION sp_fail(e ddl_notify.event) RETURNS void LANGUAGE plpgsql
	AS $$ BEGIN RAISE EXCEPTION 'no'; END $$;

-- every entry point, with the planted schema first on the path (the
-- statements below use no operator themselves: IS NOT NULL, not > 0)
SET search_path = planted, pg_catalog, public;
SELECT ddl_notify.subscribe('sp', 'public.sp_h(ddl_notify.event)',
							command_tags => '{CREATE TABLE, DROP TABLE}', object_types => '{table}',
							schemas => '{public}') IS NOT NULL AS subscribed;
SELECT ddl_notify.subscribe('spf', 'public.sp_fail(ddl_notify.event)', max_attempts => 2) IS NOT NULL AS subscribed;
SELECT ddl_notify.alter_subscriber('sp', max_attempts => 10, echo => false);
SELECT ddl_notify.pause('sp');
SELECT ddl_notify.resume('sp');
CREATE TABLE public.sp_t1 (a int);
DROP TABLE public.sp_t1;
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT ddl_notify.wait_for_delivery('0') IS NOT NULL AS waited;
SELECT name, state, pending, attempts, dead_letters FROM ddl_notify.subscriber_status ORDER BY name;
SELECT ddl_notify.delivery_status() IS NOT NULL AS status;
SELECT count(*) IS NOT NULL AS pool FROM ddl_notify.worker_pool();
CREATE TABLE public.sp_t2 (a int);
SELECT ddl_notify.skip('sp', (SELECT pg_catalog.max(id) FROM ddl_notify.event));
INSERT INTO ddl_notify.subscriber (name, handler, owner_name)
SELECT 'sp_restored', 'public.sp_h(ddl_notify.event)', current_user;
SELECT ddl_notify.unsubscribe('sp_restored');
SELECT ddl_notify.unsubscribe('spf');
SELECT ddl_notify.unsubscribe('sp');
RESET search_path;

-- nothing planted ran, as anybody
SELECT what, who FROM planted_calls;
SELECT ident FROM sp_seen ORDER BY ident;

-- clean up
DELETE FROM ddl_notify.dead_letter;
DROP SCHEMA planted CASCADE;
DROP TABLE planted_calls, sp_seen;
DROP FUNCTION sp_h(ddl_notify.event), sp_fail(ddl_notify.event);
DROP ROLE regress_ddln_planter;

-- leave the database as the next file expects it: without the extension
DROP EXTENSION ddl_notify;
