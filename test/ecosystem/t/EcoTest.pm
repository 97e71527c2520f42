
# Copyright (c) 2026, the ddl_notify authors

# EcoTest: shared helpers of the ecosystem tests (test/ecosystem/t/NNN_*.pl),
# ddl_notify beside another extension.
#
# - need_extensions(NAME...): skip_all unless PostgreSQL's share directory
#   has NAME.control for each (test/ecosystem/run.sh installs them; a
#   machine without them skips, with the reason).
# - node(NAME, preload => 'lib,lib', conf => TEXT): DdlNotifyTest's node
#   (ddl_notify preloaded, short retry delays, one worker per database),
#   with the other extension's libraries preloaded before ddl_notify.
# - recorder(NODE, DB, NAME): the recording subscriber: public.rec_NAME logs
#   every event it handles (event id, trigger event, tag, object type and
#   identity, role_name, in_extension) with UNIQUE (event_id), so a second
#   delivery of one event fails loudly (23505) instead of hiding.
# - settled(NODE, DB, LABEL): wait_for_delivery true, and no subscriber of DB
#   with an error, attempts or pending events.
# - once(NODE, DB, NAME, WHERE): for the recorder's rows matching WHERE,
#   "tag|identity|role" with its count where the count is not 1, so '' means
#   every command was delivered once; see uses.
#
# Synchronisation on conditions only.

package EcoTest;

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

sub sharedir
{
	my $d = `pg_config --sharedir`;
	chomp $d;
	return $d;
}

sub need_extensions
{
	my @missing = grep { !-f sharedir() . "/extension/$_.control" } @_;
	plan skip_all => "not installed in this PostgreSQL: @missing (test/ecosystem/run.sh installs them as root)"
	  if @missing;
	return;
}

sub node
{
	my ($name, %opt) = @_;
	my $libs = $opt{preload} ? "$opt{preload},ddl_notify" : 'ddl_notify';
	return DdlNotifyTest::new_node($name,
		conf => "shared_preload_libraries = '$libs'\n" . ($opt{conf} // ''),
		allows_streaming => $opt{allows_streaming});
}

# The recording subscriber NAME in DB (ddl_notify must be installed there).
# Its handler and table live in schema rec, which the other extensions'
# bulk operations (add all tables of public, partition sets...) never see.
sub recorder
{
	my ($node, $db, $name) = @_;
	$node->safe_psql(
		$db, qq{
CREATE SCHEMA IF NOT EXISTS rec;
GRANT USAGE ON SCHEMA rec TO PUBLIC;
CREATE TABLE rec.log_$name (
	n bigserial PRIMARY KEY,
	event_id bigint NOT NULL UNIQUE,
	trigger_event text,
	command_tag text,
	object_type text,
	object_identity text,
	role_name name,
	in_extension boolean,
	handled_by name NOT NULL DEFAULT current_user);
CREATE FUNCTION rec.h_$name(e ddl_notify.event) RETURNS void
LANGUAGE sql AS \$f\$
	INSERT INTO rec.log_$name (event_id, trigger_event, command_tag, object_type,
							   object_identity, role_name, in_extension)
	VALUES (e.id, e.trigger_event, e.command_tag, e.object_type,
			e.object_identity, e.role_name, e.in_extension)
\$f\$;
SELECT ddl_notify.subscribe('$name', 'rec.h_$name(ddl_notify.event)');
});
	return;
}

# settled(NODE, DB): delivery caught up and nobody failing; a test assertion.
# With past_errors => 1, a last error from an attempt that has since
# succeeded (attempts back to 0) is allowed.
sub settled
{
	my ($node, $db, $label, %opt) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $ok = DdlNotifyTest::wait_for_delivery($node, $db);
	my $past = $opt{past_errors} ? 'false' : 'last_error IS NOT NULL';
	my $bad = $node->safe_psql($db,
		qq{SELECT coalesce(string_agg(name || ': pending ' || pending || ', attempts ' || attempts
			|| ', ' || coalesce(last_error, ''), '; '), '')
		  FROM ddl_notify.subscriber_status
		  WHERE pending > 0 OR attempts > 0 OR $past});
	is("$ok $bad", 't ', "$label: wait_for_delivery true, no subscriber pending or failing");
	return;
}

# rows(NODE, DB, NAME, WHERE): the recorder's rows matching WHERE in call
# order, as "tag|type|identity|role" lines.
sub rows
{
	my ($node, $db, $name, $where) = @_;
	return $node->safe_psql($db,
		"SELECT string_agg(concat_ws('|', command_tag, object_type, object_identity, role_name), E'\\n' ORDER BY n) "
		  . "FROM rec.log_$name WHERE " . ($where // 'true'));
}

# reference(NODE, DB): a reference recorder beside ddl_notify, made of
# PL/pgSQL event triggers (ddl_command_end, sql_drop, table_rewrite) writing
# what PostgreSQL's event trigger functions report into rec.ref, with
# command tag and identity; compare(...) checks ddl_notify delivered the same.
# It leaves out what ddl_notify documents it does not record (dropped
# companions nobody names).  Make it before the recorder, and empty rec.ref
# when the test starts.
sub reference
{
	my ($node, $db) = @_;
	$node->safe_psql(
		$db, q{
CREATE SCHEMA IF NOT EXISTS rec;
CREATE TABLE rec.ref (n bigserial PRIMARY KEY, trigger_event text, command_tag text, object_identity text);
CREATE FUNCTION rec.ref_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO rec.ref (trigger_event, command_tag, object_identity)
	SELECT 'ddl_command_end', c.command_tag, c.object_identity
	FROM pg_event_trigger_ddl_commands() c
	WHERE c.schema_name IS DISTINCT FROM 'ddl_notify' AND c.schema_name IS DISTINCT FROM 'rec'
	  AND c.schema_name IS DISTINCT FROM 'pg_temp';
END $f$;
CREATE FUNCTION rec.ref_drop() RETURNS event_trigger LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO rec.ref (trigger_event, command_tag, object_identity)
	SELECT 'sql_drop', tg_tag, d.object_identity
	FROM pg_event_trigger_dropped_objects() d
	WHERE NOT d.is_temporary AND d.schema_name IS DISTINCT FROM 'rec'
	  -- what ddl_notify documents it leaves out: a view's rule, and the
	  -- internal companions nobody names (row and array types, TOAST)
	  AND d.object_identity NOT LIKE '"_RETURN" on %'
	  AND NOT (NOT d.original AND NOT d.normal
			   AND (d.object_type IN ('type', 'toast table') OR d.schema_name IS NOT DISTINCT FROM 'pg_toast'
					OR (d.object_type = 'trigger' AND d.object_identity LIKE '"RI_ConstraintTrigger_%')));
END $f$;
CREATE FUNCTION rec.ref_rewrite() RETURNS event_trigger LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO rec.ref (trigger_event, command_tag, object_identity)
	SELECT 'table_rewrite', tg_tag, i.identity
	FROM pg_identify_object('pg_class'::regclass, pg_event_trigger_table_rewrite_oid(), 0) i;
END $f$;
CREATE EVENT TRIGGER zz_ref_ddl ON ddl_command_end EXECUTE FUNCTION rec.ref_ddl();
CREATE EVENT TRIGGER zz_ref_drop ON sql_drop EXECUTE FUNCTION rec.ref_drop();
CREATE EVENT TRIGGER zz_ref_rewrite ON table_rewrite EXECUTE FUNCTION rec.ref_rewrite();
ALTER EVENT TRIGGER zz_ref_ddl ENABLE ALWAYS;
ALTER EVENT TRIGGER zz_ref_drop ENABLE ALWAYS;
ALTER EVENT TRIGGER zz_ref_rewrite ENABLE ALWAYS;
});
	return;
}

# compare(NODE, DB, NAME, LABEL): the recorder NAME handled, command by
# command, what the reference saw (counts of trigger event, tag, identity
# compared as multisets: a command captured twice or lost shows), and the
# number of rows compared is returned.
sub compare
{
	my ($node, $db, $name, $label) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $diff = $node->safe_psql(
		$db, qq{
WITH r AS (SELECT trigger_event, command_tag, coalesce(object_identity, '') AS id, count(*) AS n
		   FROM rec.ref GROUP BY 1, 2, 3),
	 d AS (SELECT trigger_event, command_tag, coalesce(object_identity, '') AS id, count(*) AS n
		   FROM rec.log_$name GROUP BY 1, 2, 3)
SELECT coalesce(string_agg(concat_ws(' ', coalesce(r.trigger_event, d.trigger_event),
	coalesce(r.command_tag, d.command_tag), coalesce(r.id, d.id),
	'reference ' || coalesce(r.n, 0), 'delivered ' || coalesce(d.n, 0)), E'\n'), '')
FROM r FULL JOIN d USING (trigger_event, command_tag, id)
WHERE r.n IS DISTINCT FROM d.n
  -- GRANT/REVOKE: one command for PostgreSQL (no identity), one row per
  -- granted object for ddl_notify: compared below
  AND NOT (coalesce(r.command_tag, d.command_tag) IN ('GRANT', 'REVOKE'))});
	$diff .= $node->safe_psql(
		$db, qq{
SELECT coalesce(string_agg(tag || ': reference ' || r || ' commands, delivered ' || d || ' rows', E'\n'), '')
FROM (SELECT t.tag,
			 (SELECT count(*) FROM rec.ref WHERE command_tag = t.tag) AS r,
			 (SELECT count(*) FROM rec.log_$name WHERE command_tag = t.tag) AS d
	  FROM (VALUES ('GRANT'), ('REVOKE')) t(tag)) s
WHERE (r = 0) <> (d = 0) OR d < r});
	is($diff, '', "$label: ddl_notify delivered exactly what the reference event triggers saw");
	return $node->safe_psql($db, 'SELECT count(*) FROM rec.ref');
}

1;
