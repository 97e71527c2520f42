
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
# - settled(NODE, DB): wait_for_delivery true, and no subscriber of DB with
#   an error, attempts or pending events.
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
sub settled
{
	my ($node, $db, $label) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $ok = DdlNotifyTest::wait_for_delivery($node, $db);
	my $bad = $node->safe_psql($db,
		q{SELECT coalesce(string_agg(name || ': pending ' || pending || ', attempts ' || attempts
			|| ', ' || coalesce(last_error, ''), '; '), '')
		  FROM ddl_notify.subscriber_status
		  WHERE pending > 0 OR attempts > 0 OR last_error IS NOT NULL});
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

# events(NODE, DB, WHERE): what ddl_notify.event still holds (undelivered).
sub count_events
{
	my ($node, $db) = @_;
	return $node->safe_psql($db, 'SELECT count(*) FROM ddl_notify.event');
}

1;
