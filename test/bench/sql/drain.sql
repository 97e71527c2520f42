-- Drain and memory benchmarks: a handler that does nothing (PL/pgSQL
-- "BEGIN NULL; END") and one that always fails.
-- (Quiet: on the cluster without worker CREATE EXTENSION warns that delivery
-- is manual, which is the point there.)
SET client_min_messages = error;
CREATE EXTENSION ddl_notify;
CREATE FUNCTION public.bench_noop(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$BEGIN NULL; END$$;
CREATE FUNCTION public.bench_fail(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'bench: this handler always fails'; END$$;
CREATE TABLE public.bench_target (id int);
