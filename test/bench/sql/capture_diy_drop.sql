-- Capture benchmark (callgrind.sh): the do-it-yourself baseline given the
-- coverage of ddl_notify.  Loaded after capture_diy.sql: a second PL/pgSQL
-- event trigger, on sql_drop, inserts the dropped objects into the same
-- table, leaving out the internal companions ddl_notify leaves out too
-- (row and array types, TOAST).
CREATE FUNCTION public.ddl_log_capture_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.ddl_log (command_tag, object_type, schema_name,
								object_identity, in_extension, query)
	SELECT tg_tag, d.object_type, d.schema_name, d.object_identity,
		   false, current_query()
	FROM pg_event_trigger_dropped_objects() d
	WHERE d.original OR d.normal
	   OR (d.object_type NOT IN ('type', 'toast table')
		   AND d.schema_name IS DISTINCT FROM 'pg_toast');
END
$$;
CREATE EVENT TRIGGER ddl_log_capture_drop ON sql_drop
	EXECUTE FUNCTION public.ddl_log_capture_drop();
