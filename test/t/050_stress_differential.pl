
# Copyright (c) 2026, the ddl_notify authors

# 050_stress_differential.pl: randomised differential stress test.
#
# G1, G2: what every subscriber receives equals, object for object, what a
#     reference recorder saw: nothing missing, nothing extra.  The reference
#     is a set of plain PL/pgSQL event triggers (ddl_command_end, sql_drop,
#     table_rewrite) writing public.ref_log in the DDL's own transaction, so
#     rolled-back DDL (ROLLBACK, ROLLBACK TO SAVEPOINT, failed statements,
#     a deferred constraint failing at COMMIT, a DO block's exception
#     handler, a failed multi-statement string) is in neither.
# G3, G8: nothing twice: the handlers count repeats of an event id (the
#     background worker and CALL ddl_notify.deliver() from the load sessions
#     deliver at the same time), and subscriber_status.delivered equals the
#     handler calls that committed.
# G4: several sessions commit out of id order all the time; nothing missing
#     covers it.
# G5: per subscriber, the events of one transaction arrive in statement
#     order, and a transaction that committed (a margin of 1 s) before
#     another began is handled before it.
# G7: a subscriber that fails on ~10% of events (chosen by a hash of the
#     event id and the seed, and then on every other attempt) is retried and
#     still gets everything once; filtered subscribers get exactly the
#     filtered reference; the healthy subscribers never fail.
# G12 (and G10): subscriber "echo", subscribed by role stress_echo, runs
#     DDL in its handler now and then (as stress_echo, inside the delivery
#     transaction); the other subscribers receive it like any DDL, "echo"
#     itself does not.
# G9 (in part): no server process crashes, the worker and the launcher keep
#     their pids, and the event table drains to 0.
#
# How: StressGen.pm writes one psql script per session from a seed: DDL on
# many object kinds, in autocommit, transactions with savepoints, and
# multi-statement strings, with failing statements mixed in.  The sessions
# run concurrently while the worker delivers to six subscribers.  Then the
# failing subscriber is healed, wait_for_delivery() must return true and
# each subscriber's log is compared with ref_log as multisets of (xid,
# trigger_event, command_tag, object_type, schema_name, object_identity).
#
# The reference applies ddl_notify's documented rules (docs/reference.md "What is
# recorded"), written out here so that the comparison is exact:
#   R1 temporary objects are not recorded (schema pg_temp*/pg_toast_temp*,
#      or is_temporary for dropped objects);
#   R2 a GRANT/REVOKE is one row per named object (PostgreSQL reports one
#      command with no identity): the reference parses the statement and
#      asks pg_identify_object() about each object;
#   R3 of the objects a DROP takes with it, a view's _RETURN rule is left
#      out however the drop reached it, and the internal companions nobody
#      names (neither original nor reached through a normal dependency) are
#      left out when they are a type (row/array type), a TOAST table or
#      anything in pg_toast, or a foreign key's RI_ConstraintTrigger_*
#      trigger;
#   R4 table_rewrite gives one row for the table, before the ALTER's row;
#   R5 the extension's own objects are never recorded (objects in schema
#      ddl_notify, the schema, the extension; only the set-up's GRANTs touch
#      them);
#   R6 the steps PostgreSQL adds to an ALTER TABLE by itself are not rows of
#      their own in either recorder (they are subcommands of the same
#      collected command);
#   R7 a trigger, policy or rule has its table's schema as schema_name
#      (pg_temp for a temporary table's, so R1 leaves it out).
#
# Not covered here: the columns outside the compared key (query, details,
# role_name, addresses, timestamps); the subscription point (G6: every
# subscriber subscribes before the load; test/specs/subscription_race.spec);
# the lock-wait order of G5 (test/specs/order_lock_wait.spec); object kinds
# the generator does not make (policies, user rules, foreign data, text
# search, operators, casts, publications, column GRANTs, GRANT ... ON ALL
# ... IN SCHEMA, ALTER DEFAULT PRIVILEGES).
#
# Environment: DDLN_STRESS_SEED (default: from the clock) replays a run's
# statements (the sessions' interleaving differs); DDLN_STRESS_SCALE
# (default 1) multiplies the statements per session for soak runs.  The seed
# is printed at the start and again on failure.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use StressGen;

my $seed = $ENV{DDLN_STRESS_SEED};
$seed = (int(time * 1000) ^ ($$ << 12)) % 2147483646 + 1
  unless defined $seed && $seed =~ /^\d+$/;
my $scale = $ENV{DDLN_STRESS_SCALE} // 1;
$scale = 1 unless $scale =~ /^\d+(\.\d+)?$/ && $scale > 0;
my $sessions    = 4;
my $per_session = int(2000 * $scale);
my $replay      = "DDLN_STRESS_SEED=$seed"
  . ($scale != 1 ? " DDLN_STRESS_SCALE=$scale" : '')
  . ' prove -I /usr/lib/postgresql/15/lib/pgxs/src/test/perl -I test/t test/t/050_stress_differential.pl';
diag("seed=$seed scale=$scale ($sessions sessions x $per_session statements)");

my $t_start = time;

# --- the node ----------------------------------------------------------------

my $node = PostgreSQL::Test::Cluster->new('stress');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'ddl_notify'
ddl_notify.retry_initial_delay = '5ms'
ddl_notify.retry_max_delay = '20ms'
track_commit_timestamp = on
deadlock_timeout = '100ms'
# one worker for the whole run, so that its pid proves no crash restart
ddl_notify.worker_idle_timeout = '1h'
ddl_notify.max_workers_per_database = 1
log_statement = 'none'
log_min_duration_statement = -1
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE stress');

# --- reference recorder, subscribers -----------------------------------------

my $subscribers = {
	all_a  => { filter => 'true' },
	all_b  => { filter => 'true' },
	flaky  => { filter => 'true' },
	# subscribed by role stress_echo; its handler runs DDL now and then,
	# which everyone else receives and it does not (G12)
	echo   => { filter => q{r.role_name <> 'stress_echo'}, role => 'stress_echo' },
	tags   => {
		args   => q{command_tags => '{CREATE TABLE,DROP TABLE,ALTER TABLE,GRANT}'},
		filter => q{r.command_tag = ANY ('{CREATE TABLE,DROP TABLE,ALTER TABLE,GRANT}')},
	},
	scoped => {
		args   => q{object_types => '{table,index,view}', schemas => '{shared,s1}'},
		filter => q{coalesce(r.object_type = ANY ('{table,index,view}') AND r.schema_name = ANY ('{shared,s1}'), false)},
	},
};

my $setup = q{
CREATE EXTENSION ddl_notify;
CREATE ROLE stress_reader;
CREATE SCHEMA shared;
CREATE FUNCTION public.stress_trg() RETURNS trigger LANGUAGE plpgsql
AS $$BEGIN RETURN NEW; END$$;
CREATE TABLE public.defer_parent (id int PRIMARY KEY);
INSERT INTO public.defer_parent VALUES (1);
CREATE TABLE public.defer_child (p int REFERENCES public.defer_parent
	DEFERRABLE INITIALLY DEFERRED);

-- The reference recorder: rows of the DDL's own transaction, like
-- ddl_notify's, with the rules R1-R7 of the header.
CREATE TABLE public.ref_log (
	id				bigserial PRIMARY KEY,
	xid				xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(),
	xact_start		timestamptz NOT NULL DEFAULT pg_catalog.now(),
	role_name		name NOT NULL DEFAULT current_user,
	trigger_event	text NOT NULL,
	command_tag		text NOT NULL,
	object_type		text,
	schema_name		text,
	object_identity	text
);

CREATE FUNCTION public.ref_temp_schema(s text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT s LIKE 'pg\_temp%' OR s LIKE 'pg\_toast\_temp%'
$$;

CREATE FUNCTION public.ref_own_object(t text, s text, i text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(s = 'ddl_notify' OR (t IN ('schema', 'extension') AND i = 'ddl_notify'), false)
$$;

CREATE FUNCTION public.ref_ddl_command_end() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
	r		record;
	m		text[];
	item	text;
	o		record;
	cls		regclass;
	obj		oid;
	sch		text;
BEGIN
	FOR r IN SELECT * FROM pg_catalog.pg_event_trigger_ddl_commands() LOOP
		IF r.command_tag IN ('GRANT', 'REVOKE') THEN
			-- R2: one row per named object
			m := regexp_match(current_query(),
				'^\s*(?:GRANT|REVOKE)\s.*?\sON\s+(?:(TABLE|SEQUENCE|FUNCTION|SCHEMA|TYPE|DOMAIN)\s+)?(.*?)\s+(?:TO|FROM)\s+\w+\s*;?\s*$', 'i');
			IF m IS NULL THEN
				RAISE EXCEPTION 'reference recorder cannot parse %', current_query();
			END IF;
			-- commas inside a signature's parentheses do not separate objects
			FOREACH item IN ARRAY regexp_split_to_array(m[2], '\s*,\s*(?![^()]*\))') LOOP
				CASE upper(coalesce(m[1], 'TABLE'))
					WHEN 'TABLE', 'SEQUENCE' THEN cls := 'pg_class'; obj := item::regclass;
					WHEN 'FUNCTION' THEN cls := 'pg_proc'; obj := item::regprocedure;
					WHEN 'SCHEMA' THEN cls := 'pg_namespace'; obj := item::regnamespace;
					ELSE cls := 'pg_type'; obj := item::regtype;
				END CASE;
				SELECT * INTO o FROM pg_catalog.pg_identify_object(cls, obj, 0);
				IF public.ref_temp_schema(o.schema) THEN CONTINUE; END IF;	-- R1
				IF public.ref_own_object(o.type, o.schema, o.identity) THEN CONTINUE; END IF;	-- R5
				INSERT INTO public.ref_log (trigger_event, command_tag, object_type, schema_name, object_identity)
				VALUES ('ddl_command_end', r.command_tag, o.type, o.schema, o.identity);
			END LOOP;
			CONTINUE;
		END IF;
		sch := r.schema_name;
		IF sch IS NULL AND r.object_type IN ('trigger', 'policy', 'rule') THEN	-- R7
			SELECT CASE WHEN c.relpersistence = 't' THEN 'pg_temp' ELSE c.relnamespace::regnamespace::text END
			INTO sch
			FROM pg_catalog.pg_class c
			WHERE c.oid = CASE r.object_type
				WHEN 'trigger' THEN (SELECT t.tgrelid FROM pg_catalog.pg_trigger t WHERE t.oid = r.objid)
				WHEN 'policy' THEN (SELECT p.polrelid FROM pg_catalog.pg_policy p WHERE p.oid = r.objid)
				ELSE (SELECT w.ev_class FROM pg_catalog.pg_rewrite w WHERE w.oid = r.objid) END;
		END IF;
		IF public.ref_temp_schema(sch) THEN CONTINUE; END IF;	-- R1
		IF public.ref_own_object(r.object_type, sch, r.object_identity) THEN CONTINUE; END IF;	-- R5
		INSERT INTO public.ref_log (trigger_event, command_tag, object_type, schema_name, object_identity)
		VALUES ('ddl_command_end', r.command_tag, r.object_type, sch, r.object_identity);
	END LOOP;
END
$$;

CREATE FUNCTION public.ref_sql_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
	r	record;
	sch	text;
BEGIN
	FOR r IN SELECT * FROM pg_catalog.pg_event_trigger_dropped_objects() LOOP
		sch := r.schema_name;
		IF sch IS NULL AND r.object_type IN ('trigger', 'policy', 'rule') THEN
			sch := r.address_names[1];	-- R7
		END IF;
		IF r.is_temporary OR public.ref_temp_schema(sch) THEN CONTINUE; END IF;	-- R1
		IF public.ref_own_object(r.object_type, sch, r.object_identity) THEN CONTINUE; END IF;	-- R5
		IF r.object_type = 'rule' AND r.object_identity LIKE '"\_RETURN" on %' THEN
			CONTINUE;	-- R3
		END IF;
		IF NOT r.original AND NOT r.normal AND (	-- R3
			r.object_type IN ('type', 'toast table')
			OR sch = 'pg_toast'
			OR (r.object_type = 'trigger' AND r.object_identity LIKE '"RI\_ConstraintTrigger\_%')) THEN
			CONTINUE;
		END IF;
		INSERT INTO public.ref_log (trigger_event, command_tag, object_type, schema_name, object_identity)
		VALUES ('sql_drop', tg_tag, r.object_type, sch, r.object_identity);
	END LOOP;
END
$$;

CREATE FUNCTION public.ref_table_rewrite() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
	o	record;
	rel	oid := pg_catalog.pg_event_trigger_table_rewrite_oid();
BEGIN
	IF (SELECT c.relpersistence FROM pg_catalog.pg_class c WHERE c.oid = rel) = 't' THEN
		RETURN;		-- R1
	END IF;
	SELECT * INTO o FROM pg_catalog.pg_identify_object('pg_class'::regclass, rel, 0);
	INSERT INTO public.ref_log (trigger_event, command_tag, object_type, schema_name, object_identity)
	VALUES ('table_rewrite', tg_tag, o.type, o.schema, o.identity);	-- R4
END
$$;

CREATE EVENT TRIGGER ref_ddl_command_end ON ddl_command_end
	EXECUTE FUNCTION public.ref_ddl_command_end();
CREATE EVENT TRIGGER ref_sql_drop ON sql_drop
	EXECUTE FUNCTION public.ref_sql_drop();
CREATE EVENT TRIGGER ref_table_rewrite ON table_rewrite
	EXECUTE FUNCTION public.ref_table_rewrite();

-- What the subscribers received.  A repeated event id counts in "dups"
-- instead of failing, so that a repeat is reported, not retried for ever.
CREATE TABLE public.got (
	seq				bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	sub				text NOT NULL,
	event_id		bigint NOT NULL,
	xid				xid8 NOT NULL,
	trigger_event	text,
	command_tag		text,
	object_type		text,
	schema_name		text,
	object_identity	text,
	dups			integer NOT NULL DEFAULT 0,
	UNIQUE (sub, event_id)
);
CREATE FUNCTION public.stress_log(sub text, e ddl_notify.event) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO public.got AS g (sub, event_id, xid, trigger_event, command_tag,
								 object_type, schema_name, object_identity)
	VALUES (sub, e.id, e.xid, e.trigger_event, e.command_tag, e.object_type,
			e.schema_name, e.object_identity)
	ON CONFLICT (sub, event_id) DO UPDATE SET dups = g.dups + 1
$$;
CREATE TABLE public.stress_flags (flaky_on boolean NOT NULL);
INSERT INTO public.stress_flags VALUES (true);
CREATE SEQUENCE public.flaky_calls;

-- The echo subscriber's role: what docs/reference.md "Privileges" asks for, and what
-- its handler touches.
CREATE ROLE stress_echo;
GRANT USAGE ON SCHEMA ddl_notify TO stress_echo;
GRANT EXECUTE ON FUNCTION ddl_notify.subscribe(text, regprocedure, text[], text[], text[], integer, boolean)
	TO stress_echo;
GRANT INSERT, UPDATE, SELECT ON public.got TO stress_echo;
GRANT INSERT ON public.ref_log TO stress_echo;
GRANT USAGE ON SEQUENCE public.ref_log_id_seq TO stress_echo;
CREATE TABLE public.echo_target (x int);
ALTER TABLE public.echo_target OWNER TO stress_echo;
};
$setup .= "CREATE SCHEMA s$_;\n" for 1 .. $sessions;
for my $name (sort keys %$subscribers)
{
	my $fail = '';
	if ($name eq 'flaky')
	{
		my $mod = $seed % 1000003;
		$fail = qq{
	IF (SELECT f.flaky_on FROM public.stress_flags f)
	   AND abs(hashint8(e.id # $mod)) % 10 = 0
	   AND nextval('public.flaky_calls') % 2 = 0 THEN
		RAISE EXCEPTION 'flaky subscriber fails on event % (seed $seed)', e.id;
	END IF;};
	}
	my $ddl = '';
	if ($name eq 'echo')
	{
		$ddl = q{
	IF abs(hashint8(e.id # 77)) % 20 = 0 THEN
		EXECUTE format('COMMENT ON TABLE public.echo_target IS %L', 'echo of event ' || e.id);
	END IF;};
	}
	$setup .= qq{
CREATE FUNCTION public.h_$name(e ddl_notify.event) RETURNS void
LANGUAGE plpgsql AS \$\$
BEGIN$fail
	PERFORM public.stress_log('$name', e);$ddl
END
\$\$;
};
}
# No DDL between the subscriptions, so that all of them start at the same
# point.
for my $name (sort keys %$subscribers)
{
	my $args = $subscribers->{$name}{args} ? ", $subscribers->{$name}{args}" : '';
	my $role = $subscribers->{$name}{role};
	$setup .= "SET ROLE $role;\n" if $role;
	$setup .= "SELECT ddl_notify.subscribe('$name', 'public.h_$name(ddl_notify.event)'$args);\n";
	$setup .= "RESET ROLE;\n" if $role;
}
# Everything above was DDL before the subscriptions: not delivered, so not
# expected either.
$setup .= "TRUNCATE public.ref_log;\n";
$node->safe_psql('stress', $setup);

ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'ddl_notify worker' AND datname = 'stress'"
	),
	'the delivery worker runs in the test database');
my $pids_sql = q{
SELECT string_agg(backend_type || ':' || pid, ',' ORDER BY backend_type)
FROM pg_stat_activity WHERE backend_type IN ('ddl_notify launcher', 'ddl_notify worker')};
my $pids_before = $node->safe_psql('postgres', $pids_sql);
my $log_offset  = -s $node->logfile;

# --- the load ----------------------------------------------------------------

my $dir = $PostgreSQL::Test::Utils::log_path;
my (@runs, %stats, $total);
for my $k (1 .. $sessions)
{
	my $gen = StressGen->new(seed => $seed, session => $k, statements => $per_session);
	my ($sql, $st) = $gen->script;
	my $expect = $gen->expectations;
	$stats{$_} += $st->{$_} for keys %$st;
	my $file = "$dir/stress_s$k.sql";
	open my $fh, '>', $file or die "cannot write $file: $!";
	print $fh "\\set VERBOSITY verbose\n"
	  . "SET client_min_messages = warning;\n"
	  . "SET lock_timeout = '5s';\n"
	  . $sql;
	close $fh;
	push @runs, { k => $k, file => $file, out => "$dir/stress_s$k.out",
		err => "$dir/stress_s$k.err", expect => $expect, header => 3 };
}
$total = $stats{statements};
note("statements per run: $total");
note(join(', ', map { "$_: $stats{$_}" } grep { !/^(kind|alter) / } sort keys %stats));

my $t_load = time;
for my $r (@runs)
{
	$r->{h} = IPC::Run::start(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=0', '-d',
			$node->connstr('stress'), '-f', $r->{file} ],
		'<', \undef, '>', $r->{out}, '2>', $r->{err},
		IPC::Run::timeout(3 * $PostgreSQL::Test::Utils::timeout_default));
}
for my $r (@runs)
{
	eval { $r->{h}->finish; 1 } or do {
		diag("session s$r->{k}: $@");
		$r->{h}->kill_kill;
	};
	$r->{rc} = $r->{h}->result(0) // -1;
}
my $load_secs = time - $t_load;
note(sprintf('load: %.1f s', $load_secs));

# Errors the sessions saw, by SQLSTATE; those that involve ddl_notify or the
# reference recorder are not allowed.  Errors the generator did not plan
# come from collisions between the sessions in schema "shared" (a note
# only: the comparison below does not depend on the generator's model).
my (%by_state, @unplanned, $errors, $surprises);
for my $r (@runs)
{
	my $text = PostgreSQL::Test::Utils::slurp_file($r->{err});
	my @blocks = split /^(?=psql:)/m, $text;
	for my $b (@blocks)
	{
		next unless $b =~ /^psql:[^:]*:(\d+): (ERROR|FATAL|PANIC|WARNING):\s+(\w{5}):/;
		my ($line, $level, $state) = ($1, $2, $3);
		$by_state{$state}++;
		$errors++ if $level ne 'WARNING';
		$surprises++
		  if $level eq 'ERROR'
		  && ($r->{expect}[ $line - $r->{header} - 1 ] // '') eq '';
		# look at the message and its context only: the "psql:FILE:" prefix
		# names the test directory, which may itself contain "ddl_notify"
		my ($msg) = $b =~ /^psql:[^:]*:\d+: (.*)$/m;
		$msg .= "\n" . join("\n", $b =~ /^((?:DETAIL|HINT|CONTEXT|QUERY):.*)$/mg);
		push @unplanned, "s$r->{k}: $b"
		  if $level ne 'ERROR'
		  || $msg =~ /ddl_notify|ref_ddl_command_end|ref_sql_drop|ref_table_rewrite|ref_temp_schema|ref_own_object|stress_log/;
	}
	push @unplanned, "s$r->{k}: $1"
	  if $text =~ /^(.*(?:server closed the connection|connection to server was lost).*)$/m;
}
note('session errors by SQLSTATE: '
	  . join(', ', map { "$_: $by_state{$_}" } sort keys %by_state));
note('errors the generator did not plan (collisions between the sessions in '
	  . 'schema "shared"): ' . ($surprises // 0));
is(join(',', map { $_->{rc} } @runs), join(',', (0) x $sessions),
	'every load session ran to its end (psql exit status 0)');
ok(!@unplanned,
	'no session error came from ddl_notify or the reference recorder, no connection was lost')
  or diag(join("\n", @unplanned[ 0 .. ($#unplanned < 19 ? $#unplanned : 19) ]));
cmp_ok($errors // 0, '>', 0, 'the load had failing statements (they roll back)');

# --- drain -------------------------------------------------------------------

$node->safe_psql('stress', 'UPDATE public.stress_flags SET flaky_on = false');
# Wait in steps of 10 s, saying where delivery stands after each step that
# did not finish.
my $t_wait = time;
my $delivered = 'f';
while (time - $t_wait < 2 * $PostgreSQL::Test::Utils::timeout_default)
{
	$delivered = $node->safe_psql('stress',
		"SELECT ddl_notify.wait_for_delivery('10 s')");
	last if $delivered eq 't';
	note(sprintf('after %.0f s: ', time - $t_wait)
		  . $node->safe_psql(
			'stress', q{
SELECT string_agg(name || ' pending ' || pending || ' attempts ' || attempts
				  || coalesce(' error ' || last_error, ''), '; ' ORDER BY name)
FROM ddl_notify.subscriber_status}));
}
is($delivered, 't',
	'wait_for_delivery() returns true once the failing subscriber is healed');
note(sprintf('drain after the load: %.1f s', time - $t_wait));

# --- comparison --------------------------------------------------------------

my $ref_rows = $node->safe_psql('stress',
	'SELECT count(*) || \' rows in \' || count(DISTINCT xid) || \' transactions\' FROM public.ref_log');
note("reference: $ref_rows");
my ($nref) = $ref_rows =~ /^(\d+)/;
cmp_ok($nref, '>', 0.4 * $total, 'the reference recorded a substantial load');

my $key = 'row(xid, trigger_event, command_tag, object_type, schema_name, object_identity)::text';

for my $name (sort keys %$subscribers)
{
	my $filter = $subscribers->{$name}{filter};
	my $diff = $node->safe_psql(
		'stress', qq{
WITH e AS (
	SELECT $key AS k, count(*) AS n FROM public.ref_log r
	WHERE $filter GROUP BY 1),
g AS (
	SELECT $key AS k, count(*) AS n FROM public.got
	WHERE sub = '$name' GROUP BY 1)
SELECT CASE WHEN coalesce(e.n, 0) > coalesce(g.n, 0) THEN 'missing' ELSE 'extra  ' END
	   || ' ' || k || ' expected ' || coalesce(e.n, 0) || ' got ' || coalesce(g.n, 0)
FROM e FULL JOIN g USING (k)
WHERE coalesce(e.n, 0) <> coalesce(g.n, 0)
ORDER BY k});
	my @lines = grep { length } split /\n/, $diff;
	my $counts = $node->safe_psql(
		'stress', qq{
SELECT (SELECT count(*) FROM public.ref_log r WHERE $filter) || ' expected, '
	|| (SELECT count(*) FROM public.got WHERE sub = '$name') || ' received'});
	note("$name: $counts");
	my $g = 'G1/G2/G4' . ($name eq 'echo' ? '/G12' : '');
	ok(!@lines, "$g: $name received exactly the reference's objects ($counts)")
	  or diag("$name: "
		  . scalar(@lines)
		  . " differences (missing = recorded by the reference, not received; extra = received, not in the reference):\n"
		  . join("\n", @lines[ 0 .. ($#lines < 39 ? $#lines : 39) ])
		  . (@lines > 40 ? "\n..." : ''));

	is( $node->safe_psql(
			'stress',
			"SELECT coalesce(string_agg(event_id || ' x' || (dups + 1), ', '), '') FROM public.got WHERE sub = '$name' AND dups > 0"
		),
		'',
		"G3/G8: $name handled no event twice");

	# statement order inside each transaction
	my $order = $node->safe_psql(
		'stress', qq{
WITH e AS (
	SELECT xid, array_agg(row(trigger_event, command_tag, object_type, schema_name, object_identity)::text ORDER BY id) AS a
	FROM public.ref_log r WHERE $filter GROUP BY xid),
g AS (
	SELECT xid, array_agg(row(trigger_event, command_tag, object_type, schema_name, object_identity)::text ORDER BY seq) AS a
	FROM public.got WHERE sub = '$name' GROUP BY xid)
SELECT coalesce(string_agg(xid::text, ', ' ORDER BY xid), '') FROM e JOIN g USING (xid)
WHERE e.a <> g.a
  -- only where the same objects arrived (differences are reported above)
  AND (SELECT array_agg(x ORDER BY x) FROM unnest(e.a) x) = (SELECT array_agg(x ORDER BY x) FROM unnest(g.a) x)});
	is($order, '', "G5: $name got each transaction's events in statement order");

	# transactions committed well before another began come first
	my $cross = $node->safe_psql(
		'stress', qq{
WITH x AS (
	SELECT g.xid, min(g.seq) AS first, max(g.seq) AS last,
		   pg_xact_commit_timestamp(xid(g.xid)) AS committed,
		   (SELECT min(r.xact_start) FROM public.ref_log r WHERE r.xid = g.xid) AS began
	FROM public.got g WHERE g.sub = '$name' GROUP BY g.xid)
SELECT count(*) FROM x a JOIN x b
  ON a.committed + interval '1 s' < b.began AND a.last > b.first});
	is($cross, '0',
		"G5: $name handled no transaction before one that committed before it began");

	is( $node->safe_psql(
			'stress', qq{
SELECT s.delivered = (SELECT count(*) FROM public.got WHERE sub = '$name')
	   AND s.pending = 0 AND s.attempts = 0 AND s.dead_letters = 0
FROM ddl_notify.subscriber_status s WHERE s.name = '$name'}),
		't',
		"G3: $name: delivered counts exactly the committed handler calls; nothing pending, no error left");
}

is( $node->safe_psql(
		'stress', q{
SELECT count(DISTINCT delivered + filtered) FROM ddl_notify.subscriber_status}),
	'1',
	'G7: every subscriber handled (delivered or filtered) the same number of events');

# --- retries, crashes, drain ---------------------------------------------------

my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile, $log_offset);
my $flaky_failures = () = $log =~ /subscriber "flaky" failed on event/g;
note("flaky subscriber: $flaky_failures failed attempts, retried");
cmp_ok($flaky_failures, '>', 0, 'G7: the failing subscriber failed and was retried');
my @other = $log =~ /(subscriber "(?!flaky")[^"]*" failed on event[^\n]*)/g;
ok(!@other, 'G7: the healthy subscribers never failed')
  or diag(join("\n", @other[ 0 .. ($#other < 9 ? $#other : 9) ]));
my @races = $log =~ /(processed bit of subscriber "[^"]*" was already set[^\n]*)/g;
ok(!@races,
	'G8: no two deliverers ran a batch of the same subscriber at once (no "processed bit ... already set")')
  or diag(join("\n", @races[ 0 .. ($#races < 9 ? $#races : 9) ]));
my @crash = $log =~
  /^(.*(?:terminated by signal|terminating any other active server processes|PANIC:|TRAP:|exited with exit code [1-9]|server process .* exited).*)$/mg;
ok(!@crash, 'G9: no server process crashed or exited abnormally')
  or diag(join("\n", @crash[ 0 .. ($#crash < 9 ? $#crash : 9) ]));
is($node->safe_psql('postgres', $pids_sql),
	$pids_before, 'G9: the launcher and the worker kept their pids');
is($node->safe_psql('stress', 'SELECT count(*) FROM ddl_notify.event'),
	'0', 'the event table drained to 0');
is($node->safe_psql('stress', 'SELECT count(*) FROM ddl_notify.dead_letter'),
	'0', 'no dead letters');

$node->stop;
note(sprintf('total: %.1f s', time - $t_start));

if (!Test::More->builder->is_passing)
{
	diag("FAILED with seed=$seed; replay the same statements with:\n  $replay\n"
		  . "scripts and psql output of the sessions: $dir/stress_s*.{sql,out,err}");
}
done_testing();
