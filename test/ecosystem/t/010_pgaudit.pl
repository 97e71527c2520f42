
# Copyright (c) 2026, the ddl_notify authors

# 010_pgaudit.pl: ddl_notify beside pgaudit (pgaudit.log = 'ddl, role'), both
# preloaded, both extensions in one database.
#
# G2, G0: a DDL workload run by an ordinary role (CREATE/ALTER/DROP of a
#      schema, table, index, view, function, a table rewrite, GRANT) is still
#      audited by pgaudit, and ddl_notify records and delivers the same
#      commands: every (command tag, object identity) pgaudit logs as DDL is
#      one ddl_notify delivered exactly once, and every command ddl_notify
#      records for a statement is one pgaudit audited.  Catches: ddl_notify's
#      event trigger failing or swallowing a command when another event
#      trigger (pgaudit's) runs on the same event, or pgaudit's log losing
#      lines (an error in ddl_notify's trigger aborts the DDL).
# G10: role_name is the DDL's author, the handler runs as the subscriber's
#      owner.  Catches: role_name taken from the session or the worker.
# G0, G7: pause(), resume() and alter_subscriber() work under pgaudit, whose
#      executor hook copies every parameter of every query, SPI's included.
#      Catches: a parameter passed as not NULL with no value (pause() and
#      resume() once passed the three filters that way: the backend crashed
#      in datumCopy() as soon as pgaudit was loaded).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;
use EcoTest;

EcoTest::need_extensions('pgaudit');

my $node = EcoTest::node('audit', preload => 'pgaudit',
	conf => "pgaudit.log = 'ddl, role'\npgaudit.log_relation = off\n");

$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql(
	'app', q{
CREATE EXTENSION pgaudit;
CREATE EXTENSION ddl_notify;
CREATE ROLE app_owner LOGIN;
GRANT CREATE ON DATABASE app TO app_owner;
GRANT CREATE ON SCHEMA public TO app_owner;
});
EcoTest::recorder($node, 'app', 'all');

my $offset = -s $node->logfile;
$node->safe_psql(
	'app', q{
SET ROLE app_owner;
CREATE SCHEMA billing;
CREATE TABLE billing.invoice (id int PRIMARY KEY, amount numeric);
CREATE INDEX invoice_amount ON billing.invoice (amount);
CREATE VIEW billing.big AS SELECT id FROM billing.invoice WHERE id > 100;
CREATE FUNCTION billing.total() RETURNS numeric LANGUAGE sql AS 'SELECT sum(amount) FROM billing.invoice';
ALTER TABLE billing.invoice ADD COLUMN note text;
ALTER TABLE billing.invoice ALTER COLUMN amount TYPE numeric(12,2);
COMMENT ON TABLE billing.invoice IS 'invoices';
GRANT SELECT ON billing.invoice TO PUBLIC;
DROP VIEW billing.big;
DROP FUNCTION billing.total();
});
EcoTest::settled($node, 'app', 'workload');

# pgaudit: "AUDIT: SESSION,stmt,substmt,DDL,TAG,TYPE,IDENTITY,STATEMENT,PARAMS"
my $log = slurp_file($node->logfile, $offset);
my %audit;
my $lines = 0;
for my $line (split /\n/, $log)
{
	next unless $line =~ /AUDIT: SESSION,\d+,\d+,(?:DDL|ROLE),([^,]+),([^,]*),([^,]*),/;
	$audit{"$1|$3"}++;
	$lines++;
	$audit{"$1|"}++;    # GRANT is audited without an object name
}
is($lines, 12, 'pgaudit still audits the DDL: 11 statements, 12 objects (the primary key index too)')
  or diag $log;

my %rec;
for my $l (split /\n/,
	$node->safe_psql('app',
		q{SELECT command_tag || '|' || coalesce(object_identity, '') || '|' || role_name || '|' || trigger_event
		  FROM rec.log_all ORDER BY n}))
{
	my ($tag, $id, $role, $ev) = split /\|/, $l;
	$rec{"$tag|$id"}{n}++;
	$rec{"$tag|$id"}{role}{$role}++;
	$rec{"$tag|$id"}{ev}{$ev}++;
}

# Every audited command was delivered once, by the DDL's author.
my @not_delivered = grep { !/\|$/ && !exists $rec{$_} } sort keys %audit;
is("@not_delivered", '', 'every command pgaudit audited was delivered by ddl_notify');
my @roles = map { join(',', sort keys %{ $rec{$_}{role} }) } sort keys %rec;
is(join(' ', sort { $a cmp $b } keys %{ { map { $_ => 1 } @roles } }),
	'app_owner', 'role_name is the DDL author (app_owner) for all of them');

# Every ddl_command_end command ddl_notify recorded was audited (sql_drop and
# table_rewrite rows are extra detail of an audited statement).
my @not_audited = grep {
	my $tag = (split /\|/)[0];
	exists $rec{$_}{ev}{ddl_command_end} && !exists $audit{$_} && !exists $audit{"$tag|"}
} sort keys %rec;
is("@not_audited", '', 'every command ddl_notify recorded was audited by pgaudit');
is($node->safe_psql('app', 'SELECT count(*) - count(DISTINCT event_id) FROM rec.log_all'),
	'0', 'no event delivered twice');
is( $node->safe_psql(
		'app',
		q{SELECT string_agg(DISTINCT command_tag || ':' || object_identity, ' ')
		  FROM rec.log_all WHERE trigger_event = 'table_rewrite'}),
	'ALTER TABLE:billing.invoice',
	'the ALTER COLUMN TYPE rewrite is recorded as table_rewrite');
is($node->safe_psql('app', 'SELECT DISTINCT handled_by FROM rec.log_all'),
	'postgres', 'the handler ran as the subscriber owner');

# The DROP of a table: both see it.
$offset = -s $node->logfile;
$node->safe_psql('app', 'SET ROLE app_owner; DROP TABLE billing.invoice;');
EcoTest::settled($node, 'app', 'drop');
$log = slurp_file($node->logfile, $offset);
like($log, qr/AUDIT: SESSION,\d+,\d+,DDL,DROP TABLE,TABLE,billing\.invoice,/,
	'pgaudit audits DROP TABLE');
is( $node->safe_psql(
		'app',
		q{SELECT count(*) FROM rec.log_all WHERE command_tag = 'DROP TABLE'
		  AND object_identity = 'billing.invoice' AND role_name = 'app_owner'}),
	'1',
	'ddl_notify delivered DROP TABLE billing.invoice once, by app_owner');

# The subscriber API under pgaudit's executor hook.
$node->safe_psql('app', q{SELECT ddl_notify.pause('all')});
$node->safe_psql('app', 'CREATE TABLE public.while_paused (id int)');
is($node->safe_psql('app', q{SELECT state || ' ' || pending FROM ddl_notify.subscriber_status WHERE name = 'all'}),
	'paused 1', 'pause() under pgaudit: the event waits');
$node->safe_psql('app', q{SELECT ddl_notify.resume('all')});
$node->safe_psql('app', q{SELECT ddl_notify.alter_subscriber('all', max_attempts => 5)});
EcoTest::settled($node, 'app', 'resume() and alter_subscriber() under pgaudit');
is( $node->safe_psql(
		'app', q{SELECT count(*) FROM rec.log_all WHERE object_identity = 'public.while_paused'}),
	'1', 'the event that waited was delivered once after resume()');

$node->stop;
done_testing();
