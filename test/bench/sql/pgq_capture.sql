-- PgQ for comparison: queue "ddl", and event triggers that call
-- pgq.insert_event for every command (ddl_command_end) and every dropped
-- object (sql_drop), the same coverage as ddl_notify minus table_rewrite.
-- ev_type = command tag, ev_data = object identity, extra1..3 = object type,
-- schema, query.
CREATE EXTENSION IF NOT EXISTS pgq;
SELECT pgq.create_queue('ddl');
CREATE FUNCTION public.pgq_ddl_capture() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
		PERFORM pgq.insert_event('ddl', r.command_tag, r.object_identity,
								 r.object_type, r.schema_name, current_query(), NULL);
	END LOOP;
END
$$;
CREATE FUNCTION public.pgq_ddl_capture_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT * FROM pg_event_trigger_dropped_objects() LOOP
		PERFORM pgq.insert_event('ddl', tg_tag, r.object_identity,
								 r.object_type, r.schema_name, current_query(), NULL);
	END LOOP;
END
$$;
CREATE EVENT TRIGGER pgq_ddl_capture ON ddl_command_end
	EXECUTE FUNCTION public.pgq_ddl_capture();
CREATE EVENT TRIGGER pgq_ddl_capture_drop ON sql_drop
	EXECUTE FUNCTION public.pgq_ddl_capture_drop();
