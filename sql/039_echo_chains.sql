--
-- 039_echo_chains: a loop between handlers ends (issue 29, item 7)
--
-- Proves:
-- G12 two subscribers whose handlers COMMENT on each other's table: one
--     user COMMENT gives exactly 4 handler calls (each handler once for the
--     user's event, once for the other's first echo) and 5 events; each
--     subscriber has loop_suppressed = 3 in subscriber_status (its own echo
--     twice, the loop back through it once), and the events carry their
--     chains (origin_chain, origin its last element).
--     Catches: no loop rule in fetch.c's DdlnChainRule (a subscriber found
--     earlier in the chain gets the event): 8 calls, the ping-pong ending
--     only at ddl_notify.max_chain_length (mutation chain_no_loop_rule).
-- G12 a chain of three (A's handler comments in B's schema, B's in C's, C's
--     in A's): 3 calls, A's loop_suppressed = 1; with
--     ddl_notify.max_chain_length = 2 the same 3 calls: C is not in the
--     chain {ra,rb}, so the limit does not keep it from C (issue 35).
--     Catches: capture writing origin_chain as {origin} only (the ring goes
--     round as long as delivery runs: 3 calls a round, 9 in the test's
--     three; chain_not_extended), and the limit applied to every
--     subscriber (2 calls at max_chain_length = 2; chain_hops_hide).
-- G12 echo => true: a handler commenting on its own table gets its own
--     DDL's event once (2 calls), never its echo's echo (loop_suppressed =
--     1); with ddl_notify.max_chain_length = 1 its echo is past the limit
--     (1 call, loop_suppressed = 1); with echo => false, 1 call and
--     loop_suppressed = 1.
--     Catches: echo => true letting every echo through (one call a round:
--     3 in the test's three rounds; chain_echo_loops), and no hop limit (2
--     calls at max_chain_length = 1; chain_no_hop_limit).
-- G12 the attack of issue 35: a role with the subscriber API subscribes
--     four handlers, each reacting to the previous one's DDL; the fourth
--     (chain {h1,h2,h3,h4}, as long as the default limit of 4) creates
--     appsch.hidden_table and grants it to another role.  A superuser's
--     audit subscriber, in no chain, receives every one of those events,
--     the CREATE TABLE and the GRANT of the fourth included.
--     Catches: the limit applied to every subscriber (the audit misses
--     both; chain_hops_hide).
-- (Mutations: test/mutations/NAME.patch.)
--
-- Every handler stops by itself after 10 calls, so a broken rule shows as
-- wrong counts instead of a delivery that never ends.  Each case runs three
-- rounds (CALL deliver()): a round ends when every subscriber is drained,
-- and DDL a later subscriber's handler ran in it waits for the next.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;
\set SHOW_CONTEXT never
SET ddl_notify.retry_initial_delay = 0;

CREATE TABLE calls (n serial, sub text, ident text, chain text[], origin text);
-- comment on "target" for every COMMENT event, at most 10 times in all
CREATE FUNCTION h_comment(sub text, target text, e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.calls (sub, ident, chain, origin)
		VALUES (sub, e.object_identity, e.origin_chain, e.origin);
	IF (SELECT count(*) FROM public.calls c WHERE c.sub = h_comment.sub) <= 10 THEN
		EXECUTE format('COMMENT ON TABLE %s IS %L', target, 'by ' || sub);
	END IF;
END
$$;

-- two subscribers feeding each other
CREATE TABLE ta (); CREATE TABLE tb ();
CREATE FUNCTION h_a(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ SELECT public.h_comment('a', 'public.tb', e) $$;
CREATE FUNCTION h_b(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ SELECT public.h_comment('b', 'public.ta', e) $$;
SELECT ddl_notify.subscribe('a', 'h_a(ddl_notify.event)', command_tags => '{COMMENT}') > 0 AS subscribed;
SELECT ddl_notify.subscribe('b', 'h_b(ddl_notify.event)', command_tags => '{COMMENT}') > 0 AS subscribed;
COMMENT ON TABLE ta IS 'by the user';
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT sub, ident, chain, origin FROM calls ORDER BY n;
SELECT name, pending, delivered, loop_suppressed, attempts
  FROM ddl_notify.subscriber_status WHERE name IN ('a', 'b') ORDER BY name;
SELECT ddl_notify.unsubscribe('a'), ddl_notify.unsubscribe('b');
TRUNCATE calls;

-- a chain of three, one schema each
CREATE SCHEMA sa; CREATE SCHEMA sb; CREATE SCHEMA sc;
CREATE TABLE sa.t (); CREATE TABLE sb.t (); CREATE TABLE sc.t ();
CREATE FUNCTION h_ra(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ SELECT public.h_comment('ra', 'sb.t', e) $$;
CREATE FUNCTION h_rb(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ SELECT public.h_comment('rb', 'sc.t', e) $$;
CREATE FUNCTION h_rc(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ SELECT public.h_comment('rc', 'sa.t', e) $$;
SELECT ddl_notify.subscribe('ra', 'h_ra(ddl_notify.event)', command_tags => '{COMMENT}', schemas => '{sa}') > 0 AS subscribed;
SELECT ddl_notify.subscribe('rb', 'h_rb(ddl_notify.event)', command_tags => '{COMMENT}', schemas => '{sb}') > 0 AS subscribed;
SELECT ddl_notify.subscribe('rc', 'h_rc(ddl_notify.event)', command_tags => '{COMMENT}', schemas => '{sc}') > 0 AS subscribed;
COMMENT ON TABLE sa.t IS 'by the user';
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT sub, ident, chain, origin FROM calls ORDER BY n;
SELECT name, pending, delivered, loop_suppressed
  FROM ddl_notify.subscriber_status WHERE name IN ('ra', 'rb', 'rc') ORDER BY name;
-- the hop limit stops calls along the chain only: rc is not in {ra,rb}
TRUNCATE calls;
SET ddl_notify.max_chain_length = 2;
COMMENT ON TABLE sa.t IS 'by the user, again';
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
RESET ddl_notify.max_chain_length;
SELECT sub, ident, chain, origin FROM calls ORDER BY n;
SELECT name, pending, delivered, loop_suppressed
  FROM ddl_notify.subscriber_status WHERE name IN ('ra', 'rb', 'rc') ORDER BY name;
SELECT ddl_notify.unsubscribe('ra'), ddl_notify.unsubscribe('rb'), ddl_notify.unsubscribe('rc');
TRUNCATE calls;

-- echo => true: its own DDL once, never the echo of its echo
CREATE TABLE tself ();
CREATE FUNCTION h_self(e ddl_notify.event) RETURNS void LANGUAGE sql
	AS $$ SELECT public.h_comment('self', 'public.tself', e) $$;
SELECT ddl_notify.subscribe('self', 'h_self(ddl_notify.event)', command_tags => '{COMMENT}', echo => true) > 0 AS subscribed;
COMMENT ON TABLE tself IS 'by the user';
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT sub, ident, chain, origin FROM calls ORDER BY n;
SELECT name, pending, delivered, loop_suppressed, echo
  FROM ddl_notify.subscriber_status WHERE name = 'self';
SELECT ddl_notify.unsubscribe('self');
TRUNCATE calls;
-- echo => true, its echo past the limit: the chain {self} is 1 long
SELECT ddl_notify.subscribe('self', 'h_self(ddl_notify.event)', command_tags => '{COMMENT}', echo => true) > 0 AS subscribed;
SET ddl_notify.max_chain_length = 1;
COMMENT ON TABLE tself IS 'by the user, at the limit';
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
RESET ddl_notify.max_chain_length;
SELECT sub, ident, chain, origin FROM calls ORDER BY n;
SELECT name, pending, delivered, loop_suppressed, echo
  FROM ddl_notify.subscriber_status WHERE name = 'self';
SELECT ddl_notify.unsubscribe('self');
TRUNCATE calls;
-- echo => false (the default): not even once
SELECT ddl_notify.subscribe('self', 'h_self(ddl_notify.event)', command_tags => '{COMMENT}') > 0 AS subscribed;
COMMENT ON TABLE tself IS 'by the user, again';
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
SELECT sub, ident, chain, origin FROM calls ORDER BY n;
SELECT name, pending, delivered, loop_suppressed, echo
  FROM ddl_notify.subscriber_status WHERE name = 'self';
SELECT ddl_notify.unsubscribe('self');

-- the attack of issue 35: a chain of four of one role's handlers
CREATE ROLE regress_ddln_chainer;
CREATE ROLE regress_ddln_victim;
CREATE SCHEMA appsch AUTHORIZATION regress_ddln_chainer;
GRANT USAGE ON SCHEMA ddl_notify TO regress_ddln_chainer;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
						  ddl_notify.unsubscribe(text) TO regress_ddln_chainer;
CREATE TABLE audit_log (n serial, command_tag text, ident text, chain text[]);
CREATE FUNCTION h_audit(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$
	INSERT INTO public.audit_log (command_tag, ident, chain)
		VALUES (e.command_tag, e.object_identity, e.origin_chain) $$;
SELECT ddl_notify.subscribe('audit', 'h_audit(ddl_notify.event)') > 0 AS subscribed;
SET ROLE regress_ddln_chainer;
-- step k reacts to the event of step k - 1 (the user's for step 1)
CREATE FUNCTION appsch.h_step(k int, e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	IF e.command_tag <> 'CREATE TABLE' OR
	   e.object_identity <> format('appsch.s%s', k - 1) THEN
		RETURN;
	END IF;
	IF k < 4 THEN
		EXECUTE format('CREATE TABLE appsch.s%s ()', k);
	ELSE
		CREATE TABLE appsch.hidden_table (secret text);
		GRANT ALL ON appsch.hidden_table TO regress_ddln_victim;
	END IF;
END
$$;
CREATE FUNCTION appsch.h1(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT appsch.h_step(1, e) $$;
CREATE FUNCTION appsch.h2(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT appsch.h_step(2, e) $$;
CREATE FUNCTION appsch.h3(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT appsch.h_step(3, e) $$;
CREATE FUNCTION appsch.h4(e ddl_notify.event) RETURNS void LANGUAGE sql AS $$ SELECT appsch.h_step(4, e) $$;
SELECT ddl_notify.subscribe('h1', 'appsch.h1(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('h2', 'appsch.h2(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('h3', 'appsch.h3(ddl_notify.event)') > 0 AS subscribed;
SELECT ddl_notify.subscribe('h4', 'appsch.h4(ddl_notify.event)') > 0 AS subscribed;
CREATE TABLE appsch.s0 ();
RESET ROLE;
SHOW ddl_notify.max_chain_length;
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
CALL ddl_notify.deliver();
-- the audit subscriber saw every DDL that committed, the fourth's too
SELECT command_tag, ident, chain FROM audit_log ORDER BY n;
SELECT has_table_privilege('regress_ddln_victim', 'appsch.hidden_table', 'SELECT') AS victim_granted;
SELECT name, pending, loop_suppressed
  FROM ddl_notify.subscriber_status WHERE name IN ('audit', 'h1', 'h2', 'h3', 'h4') ORDER BY name;
SELECT ddl_notify.unsubscribe('h1'), ddl_notify.unsubscribe('h2'),
	   ddl_notify.unsubscribe('h3'), ddl_notify.unsubscribe('h4'),
	   ddl_notify.unsubscribe('audit');

-- nothing is left behind
SELECT count(*) AS events_left FROM ddl_notify.event;
SET client_min_messages = warning;
DROP SCHEMA appsch CASCADE;
RESET client_min_messages;
DROP TABLE audit_log;
DROP FUNCTION h_audit(ddl_notify.event);
REVOKE ALL ON SCHEMA ddl_notify FROM regress_ddln_chainer;
REVOKE ALL ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean),
					   ddl_notify.unsubscribe(text) FROM regress_ddln_chainer;
DROP ROLE regress_ddln_chainer, regress_ddln_victim;
DROP TABLE calls, ta, tb, tself;
DROP TABLE sa.t, sb.t, sc.t;
DROP SCHEMA sa, sb, sc;
DROP FUNCTION h_comment(text, text, ddl_notify.event), h_a(ddl_notify.event), h_b(ddl_notify.event),
	h_ra(ddl_notify.event), h_rb(ddl_notify.event), h_rc(ddl_notify.event), h_self(ddl_notify.event);
