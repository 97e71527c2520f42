--
-- 046_order_floor: the engine's walk of commit_order starts at a position
-- floor (src/fetch.c, DdlnOrderFloor; issue 38: delivered transactions
-- behind an old snapshot are not stepped over in every round), and that
-- floor never passes a transaction that may still commit.
--
-- G4: a prepared transaction draws its commit position at PREPARE, below
-- those of the transactions that commit after it.  Five rounds deliver
-- those meanwhile (enough for the floor to take a candidate and to pass
-- it, were it not held by the prepared transaction's xid); after COMMIT
-- PREPARED its event is delivered all the same, once, and nothing stays
-- pending.  Catches: the floor moved to the first visible position without
-- waiting for the transactions that were running when it was read
-- (test/mutations/order_floor_no_wait.patch).
--
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
SET client_min_messages = warning;
CREATE TABLE floor_log (n serial, ident text);
CREATE FUNCTION floor_h(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.floor_log (ident) VALUES (e.object_identity)
$$;
SELECT ddl_notify.subscribe('floor_sub', 'floor_h(ddl_notify.event)',
	command_tags => ARRAY['CREATE TABLE']) > 0 AS subscribed;

BEGIN;
CREATE TABLE floor_prep (a int);
PREPARE TRANSACTION 'regress_ddln_floor';

CREATE TABLE floor_1 (a int);
CALL ddl_notify.deliver();
CREATE TABLE floor_2 (a int);
CALL ddl_notify.deliver();
CREATE TABLE floor_3 (a int);
CALL ddl_notify.deliver();
CREATE TABLE floor_4 (a int);
CALL ddl_notify.deliver();
CREATE TABLE floor_5 (a int);
CALL ddl_notify.deliver();
SELECT ident FROM floor_log ORDER BY n;

COMMIT PREPARED 'regress_ddln_floor';
CALL ddl_notify.deliver();
-- floor_prep once, after the others (its commit came last)
SELECT ident FROM floor_log ORDER BY n;
SELECT pending FROM ddl_notify.subscriber_status WHERE name = 'floor_sub';

SELECT ddl_notify.unsubscribe('floor_sub');
DROP FUNCTION floor_h(ddl_notify.event);
DROP TABLE floor_log, floor_prep, floor_1, floor_2, floor_3, floor_4, floor_5;
