-- Capture benchmark, database WITH ddl_notify: the extension, one subscriber
-- whose handler does nothing, delivered by the background worker.
CREATE EXTENSION ddl_notify;
CREATE FUNCTION public.bench_noop(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$BEGIN NULL; END$$;
SELECT ddl_notify.subscribe('bench_noop', 'public.bench_noop(ddl_notify.event)');
