--
-- ddl_notify_check: the last test of the run with ddl_notify of
-- PostgreSQL's regression suite (test/pgregress/run.sh, G0, G3).
--
-- Every event recorded while the suite ran is delivered (the queue is
-- empty), the subscriber saw no error, skipped and dead-lettered nothing,
-- and handled each event exactly once.  The counts go to a file of the
-- output directory (they change with the suite), not to this output.
-- The counters are subscriber_status's: the subscriber row's own are
-- written from shared memory only now and then (src/progress.c).
-- Catches, seen once each: ddl_notify.event without a replica identity (the
-- suite's "publication" test creates a FOR ALL TABLES publication, and the
-- subscriber's last_error kept "cannot delete from table "event""); with
-- the run as a whole, the large-object GRANT failure and the lastval()
-- hijack (tests largeobject, privileges, sequence, alter_table differed).
--
SELECT ddl_notify.wait_for_delivery('10 minutes') AS all_delivered;
SELECT name, pending, attempts, failing_event, last_error, dead_letters, skipped
FROM ddl_notify.subscriber_status;
SELECT count(*) AS left_in_queue FROM ddl_notify.event;
SELECT s.delivered = (SELECT count(*) FROM ddl_notify.regress_seen) AS each_once,
	   s.delivered > 1000 AS many, s.filtered = 0 AS none_filtered
FROM ddl_notify.subscriber_status s WHERE s.name = 'regress';
\getenv outdir PG_ABS_BUILDDIR
\set counts :outdir '/ddl_notify_counts.txt'
SELECT 'events delivered: ' || (SELECT count(*) FROM ddl_notify.regress_seen)
	   || ', distinct command tags: ' || (SELECT count(DISTINCT command_tag) FROM ddl_notify.regress_seen)
	   AS counts \g (tuples_only=on format=unaligned) :counts
