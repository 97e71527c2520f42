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
--     ddl_notify.max_chain_length = 2, 2 calls and C's loop_suppressed = 1.
--     Catches: capture writing origin_chain as {origin} only (the ring goes
--     round as long as delivery runs: 3 calls a round, 9 in the test's
--     three; chain_not_extended), and no hop limit (3 calls at
--     max_chain_length = 2; chain_no_hop_limit).
-- G12 echo => true: a handler commenting on its own table gets its own
--     DDL's event once (2 calls), never its echo's echo (loop_suppressed =
--     1); with echo => false, 1 call and loop_suppressed = 1.
--     Catches: echo => true letting every echo through (one call a round:
--     3 in the test's three rounds; chain_echo_loops).
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
-- the hop limit: no event caused through 2 subscribers is delivered
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

-- nothing is left behind
SELECT count(*) AS events_left FROM ddl_notify.event;
DROP TABLE calls, ta, tb, tself;
DROP TABLE sa.t, sb.t, sc.t;
DROP SCHEMA sa, sb, sc;
DROP FUNCTION h_comment(text, text, ddl_notify.event), h_a(ddl_notify.event), h_b(ddl_notify.event),
	h_ra(ddl_notify.event), h_rb(ddl_notify.event), h_rc(ddl_notify.event), h_self(ddl_notify.event);
