--
-- ddl_notify_setup: the first test of the run with ddl_notify of
-- PostgreSQL's regression suite (test/pgregress/run.sh, G0).
--
-- pg_regress --load-extension has created ddl_notify in the regression
-- database.  A subscriber records every event it is handed, once (a primary
-- key on the event id makes a second delivery an error the subscriber would
-- show); ddl_notify_check, the last test, checks it.  Its table and handler
-- live in schema ddl_notify, whose objects capture never records and no test
-- of the suite looks at.
--
CREATE TABLE ddl_notify.regress_seen (
	id			bigint PRIMARY KEY,
	command_tag	text NOT NULL,
	object_type	text,
	identity	text
);
CREATE FUNCTION ddl_notify.regress_handler(e ddl_notify.event) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO ddl_notify.regress_seen VALUES (e.id, e.command_tag, e.object_type, e.object_identity)
$$;
SELECT ddl_notify.subscribe('regress', 'ddl_notify.regress_handler(ddl_notify.event)') > 0 AS subscribed;
