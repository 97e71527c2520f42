
# Copyright (c) 2026, the ddl_notify authors

# SoakGen: the seeded random workload of test/replication/020_soak.pl, DDL
# mixed with rows, in schema "app".
#
# A step is a list of items, each { ddl => SQL, kind => KIND } or
# { dml => SQL }, run on the publisher either one autocommit statement each
# or, for some steps, as one transaction (txn => 'COMMIT' or 'ROLLBACK').
# Before each step the caller reads the schema (state_query, one JSON value)
# and the generator draws from it; inside a step it keeps its own copy of
# the model up to date, so a row in the same transaction can use a column
# added just before it, or a table created just before it.
#
# Every table has a primary key column "id" (serial, bigserial, or an
# identity column ALWAYS or BY DEFAULT) that no DDL touches, so UPDATE and
# DELETE always have a replica identity, and rows are addressed by id.
# The DDL is drawn so that it cannot fail on the data the workload writes
# (NOT NULL only with a DEFAULT, type changes only where every value
# converts, UNIQUE only with id in it): a failing statement would make the
# harness check mode (DDLN_REPL_MANUAL=1) diverge by itself.
#
# Everything is decided by a Park-Miller generator seeded from the seed and
# by the catalog read at each step (names sorted), so a seed gives the same
# workload on every machine and version.

package SoakGen;

use strict;
use warnings FATAL => 'all';

use constant MODULUS => 2147483647;

my @TYPES = ('integer', 'bigint', 'text', 'character varying(30)', 'numeric(10,2)', 'boolean', 'date');

# what ALTER COLUMN TYPE may make of a type: every value the workload
# writes converts (text values are short, numbers are integral or small)
my %RETYPE = (
	'integer'               => [ 'bigint', 'text', 'numeric(12,0)' ],
	'bigint'                => [ 'numeric(20,0)', 'text' ],
	'text'                  => [ 'character varying(60)' ],
	'character varying(30)' => [ 'text', 'character varying(60)' ],
	'character varying(60)' => [ 'text' ],
	'numeric(10,2)'         => [ 'numeric(12,3)', 'text' ],
	'numeric(12,3)'         => [ 'text' ],
	'numeric(12,0)'         => [ 'bigint' ],
	'numeric(20,0)'         => [ 'text' ],
	'boolean'               => [ 'text' ],
	'date'                  => [ 'timestamp without time zone', 'text' ],
	'timestamp without time zone' => [ 'date' ]);

my %DEFAULTS = (
	'integer'               => [ '0', '42' ],
	'bigint'                => [ '7' ],
	'text'                  => [ q{'x'}, q{'it''s'} ],
	'character varying(30)' => [ q{'v'} ],
	'numeric(10,2)'         => [ '1.5' ],
	'boolean'               => [ 'false' ],
	'date'                  => [ q{'2020-01-01'} ]);

# new(seed => N)
sub new
{
	my ($class, %o) = @_;
	my $state = ($o{seed} * 1000003 + 17) % MODULUS;
	$state = 1 if $state == 0;
	return bless { state => $state, n => 0, stats => {} }, $class;
}

sub rand_int
{
	my ($self, $n) = @_;
	$self->{state} = ($self->{state} * 48271) % MODULUS;
	return $self->{state} % $n;
}

sub pick
{
	my ($self, @from) = @_;
	return $from[ $self->rand_int(scalar @from) ];
}

sub chance
{
	my ($self, $percent) = @_;
	return $self->rand_int(100) < $percent;
}

# The query whose one JSON value is the model: app's tables, each with its
# columns (name, type, identity, default, not null), the CHECK and UNIQUE
# constraints the workload made, and the indexes no constraint owns.
sub state_query
{
	return q{
SELECT coalesce(json_object_agg(c.relname, json_build_object(
     'cols', (SELECT json_agg(json_build_object(
                'n', a.attname, 't', pg_catalog.format_type(a.atttypid, a.atttypmod),
                'id', a.attidentity <> '' OR a.attname = 'id', 'nn', a.attnotnull) ORDER BY a.attnum)
              FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
     'cons', (SELECT coalesce(json_agg(k.conname ORDER BY k.conname), '[]')
              FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid AND k.contype IN ('c', 'u')),
     'idx', (SELECT coalesce(json_agg(i.relname ORDER BY i.relname), '[]')
             FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
             WHERE x.indrelid = c.oid
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint k WHERE k.conindid = i.oid)))
   ORDER BY c.relname), '{}')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'app' AND c.relkind = 'r'};
}

sub name
{
	my ($self, $prefix) = @_;
	return "${prefix}$self->{n}_" . $self->rand_int(1000);
}

# a literal of TYPE, or NULL now and then
sub value
{
	my ($self, $type, $nn) = @_;
	return 'NULL' if !$nn && $self->chance(15);
	my $i = $self->rand_int(1000);
	return $i if $type =~ /^(integer|bigint|numeric\(\d+,0\))$/;
	return $i / 4 if $type =~ /^numeric/;
	return $self->chance(50) ? 'true' : 'false' if $type eq 'boolean';
	return "DATE '2024-01-01' + $i" if $type eq 'date';
	return "TIMESTAMP '2024-01-01 00:00:00' + interval '$i hours'" if $type =~ /^timestamp/;
	return "'v$i'" . ($self->chance(10) ? q{ || ' it''s'} : '');
}

sub column_def
{
	my ($self) = @_;
	my $name = $self->name('c');
	my $type = $self->pick(@TYPES);
	my $def = "$name $type";
	my $nn = 0;
	if ($self->chance(35))
	{
		$def .= ' DEFAULT ' . $self->pick(@{ $DEFAULTS{$type} });
		if ($self->chance(50))
		{
			$def .= ' NOT NULL';
			$nn = 1;
		}
	}
	return ({ n => $name, t => $type, id => 0, nn => $nn }, $def);
}

# the table's key column and the table's definition
sub create_table
{
	my ($self, $m) = @_;
	my $name = $self->name('t');
	my $key = $self->pick(
		'id serial PRIMARY KEY',
		'id bigserial PRIMARY KEY',
		'id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
		'id bigint GENERATED BY DEFAULT AS IDENTITY (START WITH 100 INCREMENT BY 3), PRIMARY KEY (id)');
	my @cols = ({ n => 'id', t => 'integer', id => 1, nn => 1 });
	my @defs;
	for (0 .. $self->rand_int(4))
	{
		my ($c, $d) = $self->column_def;
		push @cols, $c;
		push @defs, $d;
	}
	$m->{$name} = { cols => \@cols, cons => [], idx => [] };
	return ('create table', "CREATE TABLE app.$name (" . join(', ', $key, @defs) . ')');
}

# the table's columns no DDL may touch (id) left out
sub plain_cols
{
	my ($t) = @_;
	return grep { !$_->{id} } @{ $t->{cols} };
}

# one DDL statement on the model M: (kind, SQL), or () when the draw found
# nothing to do
sub ddl
{
	my ($self, $m) = @_;
	my @tables = sort keys %$m;
	my $r = $self->rand_int(100);
	return $self->create_table($m) if $r < 12 || @tables < 2;
	my $tn = $self->pick(@tables);
	my $t = $m->{$tn};
	my @plain = plain_cols($t);
	my $qt = "app.$tn";
	if ($r < 28)
	{
		my ($c, $d) = $self->column_def;
		push @{ $t->{cols} }, $c;
		return ('add column', "ALTER TABLE $qt ADD COLUMN $d");
	}
	if ($r < 36 && @plain)
	{
		my $c = $self->pick(@plain);
		$t->{cols} = [ grep { $_ != $c } @{ $t->{cols} } ];
		# a constraint or index on it goes with it: forget them all, the
		# next step reads the catalog again
		$t->{cons} = [];
		$t->{idx} = [];
		return ('drop column', "ALTER TABLE $qt DROP COLUMN $c->{n}");
	}
	if ($r < 44 && @plain)
	{
		my $c = $self->pick(@plain);
		my $new = $self->name('c');
		my $old = $c->{n};
		$c->{n} = $new;
		return ('rename column', "ALTER TABLE $qt RENAME COLUMN $old TO $new");
	}
	if ($r < 54 && @plain)
	{
		my @typed = grep { $RETYPE{ $_->{t} } } @plain;
		return () unless @typed;
		my $c = $self->pick(@typed);
		my $to = $self->pick(@{ $RETYPE{ $c->{t} } });
		$c->{t} = $to;
		# now and then with its default and NOT NULL dropped at once
		my $nn = $c->{nn};
		$c->{nn} = 0;
		return ('alter column type',
			"ALTER TABLE $qt ALTER COLUMN $c->{n} DROP DEFAULT, ALTER COLUMN $c->{n} TYPE $to USING $c->{n}::$to"
			  . ($nn ? ", ALTER COLUMN $c->{n} DROP NOT NULL" : ''))
		  if $nn || $self->chance(50);
		return ('alter column type', "ALTER TABLE $qt ALTER COLUMN $c->{n} TYPE $to USING $c->{n}::$to");
	}
	if ($r < 64)
	{
		if (@{ $t->{cons} } && $self->chance(40))
		{
			my $k = $self->pick(@{ $t->{cons} });
			$t->{cons} = [ grep { $_ ne $k } @{ $t->{cons} } ];
			return ('drop constraint', "ALTER TABLE $qt DROP CONSTRAINT $k");
		}
		my $k = $self->name('k');
		push @{ $t->{cons} }, $k;
		return ('add constraint', "ALTER TABLE $qt ADD CONSTRAINT $k CHECK (id > 0)")
		  if !@plain || $self->chance(40);
		return ('add constraint', "ALTER TABLE $qt ADD CONSTRAINT $k UNIQUE (id, " . $self->pick(@plain)->{n} . ')');
	}
	if ($r < 76)
	{
		if (@{ $t->{idx} } && $self->chance(40))
		{
			my $i = $self->pick(@{ $t->{idx} });
			$t->{idx} = [ grep { $_ ne $i } @{ $t->{idx} } ];
			return ('drop index', "DROP INDEX app.$i");
		}
		return () unless @plain;
		my $i = $self->name('i');
		push @{ $t->{idx} }, $i;
		return ('create index', "CREATE INDEX $i ON $qt (" . $self->pick(@plain)->{n} . ')');
	}
	if ($r < 84)
	{
		my $new = $self->name('t');
		$m->{$new} = delete $m->{$tn};
		return ('rename table', "ALTER TABLE $qt RENAME TO $new");
	}
	if ($r < 90 && @tables > 3)
	{
		delete $m->{$tn};
		return ('drop table', "DROP TABLE $qt");
	}
	return ();
}

# rows for table TN: a few INSERTs, then now and then an UPDATE and a DELETE
sub dml
{
	my ($self, $m, $tn) = @_;
	my $t = $m->{$tn};
	my @plain = plain_cols($t);
	my @sql;
	for (0 .. $self->rand_int(2))
	{
		if (!@plain)
		{
			push @sql, "INSERT INTO app.$tn DEFAULT VALUES";
			next;
		}
		my @c = grep { $self->chance(80) } @plain;
		@c = ($plain[0]) unless @c;
		push @sql, "INSERT INTO app.$tn (" . join(', ', map { $_->{n} } @c) . ') VALUES ('
		  . join(', ', map { $self->value($_->{t}, $_->{nn}) } @c) . ')';
	}
	if (@plain && $self->chance(40))
	{
		my $c = $self->pick(@plain);
		push @sql, "UPDATE app.$tn SET $c->{n} = " . $self->value($c->{t}, $c->{nn})
		  . ' WHERE id % 5 = ' . $self->rand_int(5);
	}
	push @sql, "DELETE FROM app.$tn WHERE id % 13 = " . $self->rand_int(13) if $self->chance(25);
	return map { { dml => $_ } } @sql;
}

# next_step(MODEL): the next step, { items => [...], txn => undef |
# 'COMMIT' | 'ROLLBACK' }.  MODEL is the decoded state_query; it is changed.
sub next_step
{
	my ($self, $m) = @_;
	$self->{n}++;
	my $one = sub {
		for (1 .. 20)
		{
			my ($kind, $sql) = $self->ddl($m);
			if (defined $kind)
			{
				$self->{stats}{$kind}++;
				return { ddl => $sql, kind => $kind };
			}
		}
		my ($kind, $sql) = $self->create_table($m);
		$self->{stats}{$kind}++;
		return { ddl => $sql, kind => $kind };
	};
	my @items;
	my $r = $self->rand_int(100);
	my $txn;
	if ($r < 10)
	{
		# CREATE TABLE and its first rows in one transaction
		my ($kind, $sql) = $self->create_table($m);
		$self->{stats}{'create table and insert'}++;
		my ($tn) = $sql =~ /^CREATE TABLE app\.(\w+)/;
		@items = ({ ddl => $sql, kind => $kind }, $self->dml($m, $tn));
		$txn = 'COMMIT';
	}
	elsif ($r < 22)
	{
		# DDL and rows mixed in one transaction, rows of a changed table
		# after its change
		for (1 .. 2)
		{
			my $d = $one->();
			push @items, $d;
			my @live = sort keys %$m;
			my ($tn) = $d->{ddl} =~ /app\.(\w+)/;
			# the table as it is called now
			($tn) = $d->{ddl} =~ /RENAME TO (\w+)/ if $d->{ddl} =~ /RENAME TO/;
			next unless @live;
			$tn = $self->pick(@live) unless defined $tn && $m->{$tn};
			push @items, $self->dml($m, $tn);
		}
		$txn = $self->chance(20) ? 'ROLLBACK' : 'COMMIT';
		$self->{stats}{"transaction $txn"}++;
	}
	else
	{
		@items = ($one->());
	}
	return { items => \@items, txn => $txn };
}

# rows(MODEL): rows for every live table, autocommit statements
sub rows
{
	my ($self, $m) = @_;
	return map { $self->dml($m, $_) } sort keys %$m;
}

# sql(ITEMS, TXN, DDL_ONLY): the text to run
sub sql
{
	my ($items, $txn, $ddl_only) = @_;
	my @s = map { $_->{ddl} // ($ddl_only ? () : $_->{dml}) } @$items;
	return '' unless @s;
	my $body = join('', map { "$_;\n" } @s);
	return $txn ? "BEGIN;\n$body$txn;\n" : $body;
}

1;
