-- Latency benchmark: the handler writes clock_timestamp() at its start,
-- with the event's xid; track_commit_timestamp gives the DDL's commit time.
CREATE EXTENSION ddl_notify;
CREATE TABLE public.bench_latency (event_id bigint, xid xid8, handler_start timestamptz);
CREATE FUNCTION public.bench_latency(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz := clock_timestamp();
BEGIN
	INSERT INTO public.bench_latency VALUES (e.id, e.xid, t);
END
$$;
SELECT ddl_notify.subscribe('bench_latency', 'public.bench_latency(ddl_notify.event)');
