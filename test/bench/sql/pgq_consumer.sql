-- PgQ consumer for the delivery comparison: for one consumer, take every
-- ready batch (pgq.next_batch), call a no-op PL/pgSQL handler once per event
-- (pgq.get_batch_events), pgq.finish_batch, COMMIT.  The same work per event
-- as a ddl_notify subscriber with public.bench_noop, minus the per-event
-- bookkeeping.
CREATE FUNCTION public.pgq_noop(ev_type text, ev_data text) RETURNS void
LANGUAGE plpgsql AS $$BEGIN NULL; END$$;
CREATE PROCEDURE public.pgq_consume(consumer text)
LANGUAGE plpgsql AS $$
DECLARE
	b	bigint;
	ev	record;
BEGIN
	LOOP
		b := pgq.next_batch('ddl', consumer);
		EXIT WHEN b IS NULL;
		FOR ev IN SELECT * FROM pgq.get_batch_events(b) LOOP
			PERFORM public.pgq_noop(ev.ev_type, ev.ev_data);
		END LOOP;
		PERFORM pgq.finish_batch(b);
		COMMIT;
	END LOOP;
END
$$;
