-- Capture benchmark, the do-it-yourself baseline users write today: a PL/pgSQL
-- event trigger on ddl_command_end that inserts the rows of
-- pg_event_trigger_ddl_commands() into a table (no sql_drop, no consumer).
CREATE TABLE public.ddl_log (
	id				bigserial PRIMARY KEY,
	logged_at		timestamptz NOT NULL DEFAULT now(),
	xid				xid8 NOT NULL DEFAULT pg_current_xact_id(),
	command_tag		text,
	object_type		text,
	schema_name		text,
	object_identity	text,
	in_extension	boolean,
	role_name		name NOT NULL DEFAULT current_user,
	query			text
);
CREATE FUNCTION public.ddl_log_capture() RETURNS event_trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.ddl_log (command_tag, object_type, schema_name,
								object_identity, in_extension, query)
	SELECT c.command_tag, c.object_type, c.schema_name, c.object_identity,
		   c.in_extension, current_query()
	FROM pg_event_trigger_ddl_commands() c;
END
$$;
CREATE EVENT TRIGGER ddl_log_capture ON ddl_command_end
	EXECUTE FUNCTION public.ddl_log_capture();
