
# Copyright (c) 2026, the ddl_notify authors

# ReplayGen: the seeded random DDL run of test/t/044_replay.pl.
#
# Before each step it reads the shape of the schemas it works in (rs*) from
# the catalogs (one query, as JSON) and draws the next statement from it:
# CREATE TABLE (every column attribute the relation images carry: types
# with typmods, collations, NOT NULL, defaults, identity, generated columns,
# primary key, unique, check and foreign key constraints, names that need
# quoting), partitioned tables (RANGE, LIST, HASH) and partitions of
# those with one integer key column, INHERITS children of plain tables, foreign tables (server
# replay_srv, which the test makes, with options), CREATE TABLE AS, views
# (CREATE OR REPLACE VIEW too) and materialized views (their indexes, RENAME,
# RENAME COLUMN, SET SCHEMA, DROP), ALTER [FOREIGN] TABLE in every way a
# "changes" entry
# names (add/drop/rename column, type, collation, nullability, default,
# identity, constraints, replica identity, rename, SET SCHEMA, several
# subcommands at once, a column's STORAGE, COMPRESSION and statistics
# target, CLUSTER ON), CREATE/DROP/ALTER INDEX (RENAME, SET/RESET), DROP TABLE and DROP
# CONSTRAINT/COLUMN with and without CASCADE, CREATE/DROP SCHEMA CASCADE;
# some steps run two or
# three statements in an explicit transaction, with a savepoint rolled back
# or the whole transaction rolled back.  A statement may fail (a type that
# does not convert, a name taken): the run goes on, as the server left it.
#
# Everything is decided by a Park-Miller generator seeded from the seed and
# by the catalog read at each step (names sorted), so a seed gives the same
# run on every machine.

package ReplayGen;

use strict;
use warnings FATAL => 'all';

use JSON::PP;

use constant MODULUS => 2147483647;

# types a column is drawn from, and what ALTER COLUMN TYPE may make of them
my @TYPES = (
	'integer', 'bigint', 'smallint', 'text', 'character varying(20)',
	'numeric(10,2)', 'boolean', 'timestamp with time zone', 'date',
	'jsonb', 'integer[]', 'uuid');
my %RETYPE = (
	'integer'                  => [ 'bigint', 'text', 'numeric(12,0)' ],
	'bigint'                   => [ 'integer', 'numeric(20,0)' ],
	'smallint'                 => [ 'integer', 'bigint' ],
	'text'                     => [ 'character varying(40)', 'integer' ],
	'character varying(20)'    => [ 'text', 'character varying(30)' ],
	'character varying(30)'    => [ 'character varying(20)', 'text' ],
	'character varying(40)'    => [ 'text' ],
	'numeric(10,2)'            => [ 'numeric(12,3)', 'bigint' ],
	'numeric(12,3)'            => [ 'numeric(10,2)' ],
	'numeric(12,0)'            => [ 'integer' ],
	'numeric(20,0)'            => [ 'bigint' ],
	'boolean'                  => [ 'text' ],
	'timestamp with time zone' => [ 'date', 'timestamp without time zone' ],
	'timestamp without time zone' => [ 'timestamp with time zone' ],
	'date'                     => [ 'timestamp with time zone' ],
	'jsonb'                    => [ 'text' ],
	'integer[]'                => [ 'bigint[]' ],
	'bigint[]'                 => [ 'integer[]' ],
	'uuid'                     => [ 'text' ]);
my %DEFAULTS = (
	'integer'                  => [ '0', '42', '-1' ],
	'bigint'                   => [ '7', '(1 + 2)' ],
	'smallint'                 => [ '3' ],
	'text'                     => [ q{'x'}, q{'it''s'}, q{lower('ABC')} ],
	'character varying(20)'    => [ q{'v'} ],
	'numeric(10,2)'            => [ '1.5', '0' ],
	'boolean'                  => [ 'true', 'false' ],
	'timestamp with time zone' => [ 'now()', q{'2020-01-01 00:00:00+00'} ],
	'date'                     => [ 'CURRENT_DATE' ],
	'jsonb'                    => [ q{'{}'}, q{'{"a": 1}'} ],
	'integer[]'                => [ q{'{1,2}'} ]);
my @COLLATIONS = ('"C"', '"POSIX"');

# new(seed => N)
sub new
{
	my ($class, %o) = @_;
	my $state = ($o{seed} * 1000003 + 17) % MODULUS;
	$state = 1 if $state == 0;
	# a second stream for the INHERITS draws, so that they leave the
	# first one (every other choice) as it was before they were added
	return bless { state => $state, inh => $state, n => 0, stats => {} }, $class;
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

sub qi
{
	my ($name) = @_;
	return $name if $name =~ /^[a-z_][a-z0-9_]*$/;
	(my $q = $name) =~ s/"/""/g;
	return qq{"$q"};
}

sub qn
{
	my ($rel) = @_;
	return qi($rel->{s}) . '.' . qi($rel->{n});
}

# The query whose one JSON value describes the schemas the run works in.
sub state_query
{
	return q{
SELECT json_build_object(
 'schemas', (SELECT coalesce(json_agg(nspname ORDER BY nspname), '[]')
             FROM pg_catalog.pg_namespace WHERE nspname LIKE 'rs%'),
 'rels', (SELECT coalesce(json_agg(json_build_object(
     's', n.nspname, 'n', c.relname, 'k', c.relkind, 'ri', c.relreplident, 'ip', c.relispartition,
     'pk', CASE WHEN c.relkind = 'p' THEN pg_catalog.pg_get_partkeydef(c.oid) END,
     'cols', (SELECT coalesce(json_agg(json_build_object(
                'n', a.attname, 't', pg_catalog.format_type(a.atttypid, a.atttypmod),
                'nn', a.attnotnull, 'd', a.atthasdef, 'id', a.attidentity,
                'g', a.attgenerated, 'coll', a.attcollation <> 0) ORDER BY a.attnum), '[]')
              FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
     'cons', (SELECT coalesce(json_agg(json_build_object(
                'n', k.conname, 't', k.contype,
                'cols', (SELECT json_agg(a.attname ORDER BY a.attnum) FROM pg_catalog.pg_attribute a
                         WHERE a.attrelid = c.oid AND a.attnum = ANY (k.conkey))) ORDER BY k.conname), '[]')
              -- not NOT NULL (18 and later catalog it as a constraint): the
              -- images carry a column's nullability, not that constraint's
              -- name, so the run neither renames nor drops one by name
              FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid AND k.contype <> 'n'),
     'idx', (SELECT coalesce(json_agg(json_build_object(
                'n', i.relname, 'u', x.indisunique, 'c', EXISTS (
                   SELECT FROM pg_catalog.pg_constraint k WHERE k.conindid = i.oid AND k.conrelid = c.oid),
                'nn', NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid
                   AND a.attnum = ANY (x.indkey) AND NOT a.attnotnull),
                'expr', x.indexprs IS NOT NULL OR x.indpred IS NOT NULL) ORDER BY i.relname), '[]')
             FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
             WHERE x.indrelid = c.oid)
   ) ORDER BY n.nspname, c.relname), '[]')
   FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname LIKE 'rs%' AND c.relkind IN ('r', 'p', 'f', 'v', 'm'))
)};
}

# A fresh name for step N: sometimes one that needs quoting.
sub name
{
	my ($self, $prefix) = @_;
	my $n = "${prefix}$self->{n}_" . $self->rand_int(100);
	return $self->chance(10) ? ucfirst($n) . ' x' : $n;
}

sub column_def
{
	my ($self, $cols, %o) = @_;
	my $name = $self->name('c');
	my $type = $self->pick(@TYPES);
	my $def = qi($name) . " $type";
	my $int = $type =~ /^(integer|bigint|smallint)$/;
	my $r = $self->rand_int(100);
	if ($int && $r < 12)
	{
		$def .= ' GENERATED ' . $self->pick('ALWAYS', 'BY DEFAULT') . ' AS IDENTITY';
		# its sequence's options, from the same draw (no other draw)
		$def .= ' (START WITH ' . (7 * $r) . ' INCREMENT BY ' . (1 + $r % 4) . ')' if $r < 5;
		return ($name, $def, $type);
	}
	if ($int && $r < 17)
	{
		# a serial column: its sequence comes before its table in the stream
		$def = qi($name) . ($type eq 'bigint' ? ' bigserial' : $type eq 'smallint' ? ' smallserial' : ' serial');
		return ($name, $def, $type);
	}
	if ($int && $r < 30)
	{
		my @ints = grep { $_->{t} =~ /^(integer|bigint|smallint)$/ && !$_->{g} } @$cols;
		if (@ints)
		{
			$def .= ' GENERATED ALWAYS AS (' . qi($self->pick(@ints)->{n}) . ' * 2) STORED';
			return ($name, $def, $type);
		}
	}
	$def .= ' COLLATE ' . $self->pick(@COLLATIONS) if $type eq 'text' && $self->chance(25);
	$def .= ' DEFAULT ' . $self->pick(@{ $DEFAULTS{$type} })
	  if $DEFAULTS{$type} && $self->chance(35);
	$def .= ' NOT NULL' if $self->chance(30);
	$def .= ' UNIQUE' if $o{constraints} && $type !~ /\[\]|jsonb/ && $self->chance(8);
	$def .= ' CHECK (' . qi($name) . ' > 0)' if $o{constraints} && $int && $self->chance(10);
	return ($name, $def, $type);
}

# the relations ALTER TABLE / ALTER FOREIGN TABLE change: tables,
# partitioned tables, foreign tables
sub tables
{
	my ($st) = @_;
	return grep { $_->{k} =~ /^[rpf]$/ } @{ $st->{rels} };
}

# TABLE or FOREIGN TABLE, as ALTER and DROP name the relation
sub kw
{
	my ($rel) = @_;
	return $rel->{k} eq 'f' ? 'FOREIGN TABLE' : 'TABLE';
}

sub create_table
{
	my ($self, $st) = @_;
	return $self->create_schema if !@{ $st->{schemas} };
	my $schema = $self->pick(@{ $st->{schemas} });
	my $name   = $self->name('t');
	my $r      = $self->rand_int(100);
	my $kind   = $r < 10 ? 'partitioned' : $r < 20 ? 'foreign' : 'table';
	my (@cols, @defs);
	for (0 .. $self->rand_int(5))
	{
		my ($n, $d, $type) = $self->column_def(\@cols, constraints => $kind eq 'table');
		push @cols, { n => $n, t => $type };
		push @defs, $d;
	}
	my @keyable = grep { $_->{t} !~ /\[\]|jsonb/ } @cols;
	my $rel = 'CREATE TABLE ' . qi($schema) . '.' . qi($name);
	if ($kind eq 'foreign')
	{
		return "CREATE FOREIGN TABLE " . qi($schema) . '.' . qi($name) . ' (' . join(', ', @defs)
		  . ') SERVER replay_srv' . ($self->chance(60) ? q{ OPTIONS (table_name 'x', "Odd key" 'it''s')} : '');
	}
	if ($kind eq 'partitioned' && $self->chance(50))
	{
		# a partition of a partitioned table whose key is one integer column
		my @parents = grep { ($_->{pk} // '') =~ /^(RANGE|LIST|HASH) \(\S+\)$/ } @{ $st->{rels} };
		if (@parents)
		{
			my $p = $self->pick(@parents);
			my ($how) = $p->{pk} =~ /^(\w+)/;
			my ($col) = $p->{pk} =~ /\((.*)\)$/;
			my ($c) = grep { qi($_->{n}) eq $col } @{ $p->{cols} };
			if ($c && $c->{t} =~ /^(integer|bigint)$/)
			{
				my $n = $self->rand_int(20);
				my $bound =
				    $self->chance(10) && $how ne 'HASH' ? 'DEFAULT'
				  : $how eq 'RANGE' ? 'FOR VALUES FROM (' . ($n * 100) . ') TO (' . ($n * 100 + 100) . ')'
				  : $how eq 'LIST'  ? "FOR VALUES IN ($n, " . ($n + 100) . ')'
				  :                   'FOR VALUES WITH (MODULUS 4, REMAINDER ' . ($n % 4) . ')';
				return "$rel PARTITION OF " . qn($p) . " $bound";
			}
		}
	}
	if ($kind eq 'partitioned')
	{
		my @by = grep { $_->{t} =~ /^(integer|bigint|text|date)$/ } @cols;
		return undef unless @by;
		my $k = $self->pick(@by);
		# a primary key must contain the partition key
		push @defs, 'PRIMARY KEY (' . qi($k->{n}) . ')' if $self->chance(40);
		return "$rel (" . join(', ', @defs) . ') PARTITION BY ' . $self->pick('RANGE', 'LIST', 'HASH')
		  . ' (' . qi($k->{n}) . ')';
	}
	if (@keyable && $self->chance(60))
	{
		my $k = $self->pick(@keyable);
		push @defs, ($self->chance(50) ? 'CONSTRAINT ' . qi($self->name('pk')) . ' ' : '')
		  . 'PRIMARY KEY (' . qi($k->{n}) . ')';
	}
	# a foreign key to a table with a one-column primary key of a known type
	if ($self->chance(25))
	{
		my @targets = grep { my $r = $_; grep { $_->{t} eq 'p' && @{ $_->{cols} } == 1 } @{ $r->{cons} } } tables($st);
		if (@targets)
		{
			my $t = $self->pick(@targets);
			my ($pk) = grep { $_->{t} eq 'p' } @{ $t->{cons} };
			my ($pc) = grep { $_->{n} eq $pk->{cols}[0] } @{ $t->{cols} };
			my $fk = $self->name('f');
			push @defs, qi($fk) . " $pc->{t}";
			push @defs, 'FOREIGN KEY (' . qi($fk) . ') REFERENCES ' . qn($t)
			  . ($self->chance(50) ? ' ON DELETE CASCADE' : '');
		}
	}
	# an INHERITS child of a plain table: the parent's columns and check
	# constraints are inherited, and ALTERs of the parent recurse to it
	my $inherits = '';
	$self->{inh} = ($self->{inh} * 48271) % MODULUS;
	if ($self->{inh} % 100 < 10)
	{
		my @parents = grep { $_->{k} eq 'r' && !$_->{ip} } @{ $st->{rels} };
		$inherits = ' INHERITS (' . qn($parents[ $self->{inh} % @parents ]) . ')' if @parents;
	}
	return "$rel (" . join(', ', @defs) . ')' . $inherits;
}

sub create_schema
{
	my ($self) = @_;
	return 'CREATE SCHEMA ' . qi($self->name('rs'));
}

sub alter_column
{
	my ($self, $rel) = @_;
	my $t = qn($rel);
	my $k = kw($rel);
	my @cols = @{ $rel->{cols} };
	return undef unless @cols;
	# identity and generated columns are few: their own changes now and then
	my @special = grep { $_->{id} || $_->{g} } @cols;
	if (@special && $self->chance(35))
	{
		my $c = $self->pick(@special);
		my $cn = qi($c->{n});
		return "ALTER $k $t ALTER COLUMN $cn DROP EXPRESSION" if $c->{g};
		my $r = $self->rand_int(100);
		return "ALTER $k $t ALTER COLUMN $cn DROP IDENTITY" if $r < 35;
		# its sequence's options (the sequence's own event, "after" only)
		return "ALTER $k $t ALTER COLUMN $cn SET INCREMENT BY " . (2 + $r % 5) . ', SET START WITH ' . $r if $r < 55;
		return "ALTER $k $t ALTER COLUMN $cn SET GENERATED " . ($c->{id} eq 'a' ? 'BY DEFAULT' : 'ALWAYS');
	}
	my $c = $self->pick(@cols);
	my $cn = qi($c->{n});
	my $r = $self->rand_int(14);
	if ($r == 0)
	{
		my $to = $RETYPE{ $c->{t} } or return undef;
		my $new = $self->pick(@$to);
		return "ALTER $k $t ALTER COLUMN $cn TYPE $new USING ${cn}::$new";
	}
	if ($r == 1 && $c->{t} =~ /^(text|character varying)/)
	{
		return "ALTER $k $t ALTER COLUMN $cn TYPE $c->{t} COLLATE " . $self->pick(@COLLATIONS, '"default"');
	}
	return "ALTER $k $t ALTER COLUMN $cn " . ($c->{nn} ? 'DROP' : 'SET') . ' NOT NULL' if $r <= 3;
	if ($r <= 5)
	{
		return "ALTER $k $t ALTER COLUMN $cn DROP DEFAULT" if $c->{d} && $self->chance(50);
		my $d = $DEFAULTS{ $c->{t} } or return undef;
		return "ALTER $k $t ALTER COLUMN $cn SET DEFAULT " . $self->pick(@$d);
	}
	if ($r <= 7 && $c->{t} =~ /^(integer|bigint|smallint)$/)
	{
		return "ALTER $k $t ALTER COLUMN $cn DROP IDENTITY" if $c->{id} && $self->chance(40);
		return "ALTER $k $t ALTER COLUMN $cn SET GENERATED " . ($c->{id} eq 'a' ? 'BY DEFAULT' : 'ALWAYS')
		  if $c->{id};
		return "ALTER $k $t ALTER COLUMN $cn SET NOT NULL, ALTER COLUMN $cn ADD GENERATED "
		  . $self->pick('ALWAYS', 'BY DEFAULT') . ' AS IDENTITY';
	}
	return "ALTER $k $t RENAME COLUMN $cn TO " . qi($self->name('c')) if $r <= 9;
	return "ALTER $k $t DROP COLUMN $cn" . ($self->chance(40) ? ' CASCADE' : '') if $r <= 11;
	# a column's STORAGE or COMPRESSION (of a type stored out of line), or
	# its statistics target (a foreign table refuses COMPRESSION: the
	# statement fails, the run goes on)
	if ($r == 12 && $c->{t} !~ /^(integer|bigint|smallint|boolean|date|uuid|timestamp)/)
	{
		return "ALTER $k $t ALTER COLUMN $cn SET STORAGE " . $self->pick('MAIN', 'EXTERNAL', 'EXTENDED')
		  if $self->chance(50);
		return "ALTER $k $t ALTER COLUMN $cn SET COMPRESSION " . $self->pick('pglz', 'default');
	}
	return "ALTER $k $t ALTER COLUMN $cn SET STATISTICS " . $self->pick('0', '100', '500', '-1') if $r == 13;
	return undef;
}

sub alter_constraint
{
	my ($self, $st, $rel) = @_;
	my $t = qn($rel);
	my $k = kw($rel);
	my @cols = grep { $_->{t} !~ /\[\]|jsonb/ } @{ $rel->{cols} };
	my @cons = @{ $rel->{cons} };
	my $r = $self->rand_int(8);
	if ($r == 0 && @cons)
	{
		return "ALTER $k $t DROP CONSTRAINT " . qi($self->pick(@cons)->{n}) . ($self->chance(50) ? ' CASCADE' : '');
	}
	if ($r == 1 && @cons)
	{
		return "ALTER $k $t RENAME CONSTRAINT " . qi($self->pick(@cons)->{n}) . ' TO ' . qi($self->name('k'));
	}
	return undef unless @cols;
	my $c = $self->pick(@cols);
	my $name = $self->chance(50) ? 'CONSTRAINT ' . qi($self->name('k')) . ' ' : '';
	return "ALTER $k $t ADD ${name}PRIMARY KEY (" . qi($c->{n}) . ')' if $r <= 3;
	return "ALTER $k $t ADD ${name}UNIQUE (" . join(', ', map { qi($_->{n}) } $c, ($self->chance(30) ? $self->pick(@cols) : ())) . ')'
	  if $r == 4;
	return "ALTER $k $t ADD ${name}CHECK (" . qi($c->{n}) . ' IS NOT NULL)' if $r == 5;
	# a foreign key to a primary key or unique constraint of the same type
	my @targets;
	for my $o (tables($st))
	{
		for my $k (@{ $o->{cons} })
		{
			next unless ($k->{t} eq 'p' || $k->{t} eq 'u') && @{ $k->{cols} } == 1;
			my ($oc) = grep { $_->{n} eq $k->{cols}[0] } @{ $o->{cols} };
			push @targets, [ $o, $oc ] if $oc && $oc->{t} eq $c->{t};
		}
	}
	return undef unless @targets;
	my ($o, $oc) = @{ $self->pick(@targets) };
	return "ALTER $k $t ADD ${name}FOREIGN KEY (" . qi($c->{n}) . ') REFERENCES ' . qn($o) . ' (' . qi($oc->{n}) . ')';
}

sub alter_index
{
	my ($self, $rel) = @_;
	my $t = qn($rel);
	my @cols = grep { $_->{t} !~ /\[\]|jsonb/ } @{ $rel->{cols} };
	my @own = grep { !$_->{c} } @{ $rel->{idx} };
	my $r = $self->rand_int(6);
	if ($r == 0 && @own)
	{
		return 'DROP INDEX ' . qi($rel->{s}) . '.' . qi($self->pick(@own)->{n});
	}
	if ($r == 1 && @{ $rel->{idx} })
	{
		my @from = @own ? @own : @{ $rel->{idx} };
		return 'ALTER INDEX ' . qi($rel->{s}) . '.' . qi($self->pick(@from)->{n}) . ' RENAME TO ' . qi($self->name('i'));
	}
	# an index's storage parameters, the index the table is clustered on
	if ($r == 2 && @{ $rel->{idx} } && $self->chance(50))
	{
		my $i = qi($self->pick(@{ $rel->{idx} })->{n});
		my $k = kw($rel);
		my $w = $self->rand_int(4);
		return 'ALTER INDEX ' . qi($rel->{s}) . ".$i SET (fillfactor = " . (50 + $w * 10) . ')' if $w == 0;
		return 'ALTER INDEX ' . qi($rel->{s}) . ".$i RESET (fillfactor)" if $w == 1;
		return "ALTER $k $t CLUSTER ON $i" if $w == 2;
		return "ALTER $k $t SET WITHOUT CLUSTER";
	}
	return undef unless @cols;
	my $c = $self->pick(@cols);
	my $name = $self->chance(70) ? qi($self->name('i')) . ' ' : '';
	my $u = $self->chance(40) ? 'UNIQUE ' : '';
	my $what = $self->chance(20) ? '(lower(' . qi($c->{n}) . '::text))' : '(' . qi($c->{n}) . ($self->chance(20) ? ' DESC' : '') . ')';
	my $where = $self->chance(15) ? ' WHERE ' . qi($c->{n}) . ' IS NOT NULL' : '';
	return "CREATE ${u}INDEX ${name}ON $t $what$where";
}

sub replica_identity
{
	my ($self, $rel) = @_;
	my $t = qn($rel);
	my $k = kw($rel);
	my @ok = grep { $_->{u} && $_->{nn} && !$_->{expr} } @{ $rel->{idx} };
	my $r = $self->rand_int(4);
	return "ALTER $k $t REPLICA IDENTITY USING INDEX " . qi($self->pick(@ok)->{n}) if $r == 0 && @ok;
	return "ALTER $k $t REPLICA IDENTITY " . $self->pick('FULL', 'NOTHING', 'DEFAULT');
}

sub view
{
	my ($self, $st) = @_;
	my @views = grep { $_->{k} =~ /^[vm]$/ } @{ $st->{rels} };
	my $r = $self->rand_int(10);
	if ($r < 5 && @views)
	{
		my $v = $self->pick(@views);
		my $kind = $v->{k} eq 'm' ? 'MATERIALIZED VIEW' : 'VIEW';
		my @c = @{ $v->{cols} };
		return "ALTER $kind " . qn($v) . ' RENAME TO ' . qi($self->name('v')) if $r == 0;
		return "ALTER $kind " . qn($v) . ' RENAME COLUMN ' . qi($self->pick(@c)->{n}) . ' TO ' . qi($self->name('c'))
		  if $r == 1 && @c;
		return "ALTER $kind " . qn($v) . ' SET SCHEMA ' . qi($self->pick(@{ $st->{schemas} })) if $r == 2;
		return 'CREATE INDEX ON ' . qn($v) . ' (' . qi($self->pick(@c)->{n}) . ')'
		  if $r == 3 && $v->{k} eq 'm' && @c && $c[0]{t} !~ /jsonb|\[\]/;
		return "DROP $kind " . qn($v) . ($self->chance(50) ? ' CASCADE' : '');
	}
	my @t = grep { @{ $_->{cols} } } tables($st);
	return undef unless @t;
	my $t = $self->pick(@t);
	my @c = map { qi($_->{n}) } @{ $t->{cols} }[ 0 .. $self->rand_int(scalar @{ $t->{cols} }) ];
	my $where = $self->chance(30) ? " WHERE $c[0] IS NOT NULL" : '';
	my $name = qi($t->{s}) . '.' . qi($self->name('v'));
	if ($self->chance(30))
	{
		return "CREATE MATERIALIZED VIEW $name AS SELECT " . join(', ', @c) . ' FROM ' . qn($t) . "$where WITH NO DATA";
	}
	# a view, and sometimes at once a wider one in its place
	my $sql = "CREATE VIEW $name AS SELECT " . join(', ', @c) . ' FROM ' . qn($t) . $where;
	if ($self->chance(30) && @{ $t->{cols} } > @c)
	{
		$sql .= ";\nCREATE OR REPLACE VIEW $name AS SELECT " . join(', ', @c, qi($t->{cols}[ scalar @c ]{n}))
		  . ' FROM ' . qn($t) . $where;
	}
	return $sql;
}

# One statement drawn from the state; undef when the draw found nothing to
# do (the caller draws again).
sub statement
{
	my ($self, $st) = @_;
	my @t = tables($st);
	my $r = $self->rand_int(100);
	return $self->create_schema if $r < 3 || !@{ $st->{schemas} } || (@{ $st->{schemas} } < 3 && $r < 8);
	return $self->create_table($st) if $r < 15 || @t < 2;
	my $rel = $self->pick(@t);
	my $t = qn($rel);
	my $k = kw($rel);
	if ($r < 20)
	{
		return 'CREATE TABLE ' . qi($rel->{s}) . '.' . qi($self->name('t')) . ' AS SELECT * FROM ' . $t
		  if @{ $rel->{cols} };
		return undef;
	}
	if ($r < 32)
	{
		my ($n, $d) = $self->column_def($rel->{cols});
		return "ALTER $k $t ADD COLUMN $d";
	}
	return $self->alter_column($rel) if $r < 55;
	return $self->alter_constraint($st, $rel) if $r < 67;
	return $self->alter_index($rel) if $r < 75;
	return $self->replica_identity($rel) if $r < 79;
	return "ALTER $k $t RENAME TO " . qi($self->name('t')) if $r < 82;
	return "ALTER $k $t SET SCHEMA " . qi($self->pick(@{ $st->{schemas} })) if $r < 84;
	if ($r < 87)
	{
		my ($n, $d) = $self->column_def($rel->{cols});
		my $second = $self->alter_column($rel) // return undef;
		return undef unless substr($second, 0, length("ALTER $k $t ")) eq "ALTER $k $t ";
		$second = substr($second, length("ALTER $k $t "));
		return undef if $second =~ /^RENAME/;
		return "ALTER $k $t ADD COLUMN $d, $second";
	}
	if ($r < 89)
	{
		# generated columns: one added, or one made plain (DROP EXPRESSION)
		my @g = grep { $_->{g} } @{ $rel->{cols} };
		return "ALTER $k $t ALTER COLUMN " . qi($self->pick(@g)->{n}) . ' DROP EXPRESSION' if @g;
		my @ints = grep { $_->{t} =~ /^(integer|bigint|smallint)$/ && !$_->{g} } @{ $rel->{cols} };
		return undef unless @ints;
		return "ALTER $k $t ADD COLUMN " . qi($self->name('g')) . ' bigint GENERATED ALWAYS AS ('
		  . qi($self->pick(@ints)->{n}) . ' + 1) STORED';
	}
	return $self->view($st) if $r < 93;
	return "DROP $k $t" . ($self->chance(50) ? ' CASCADE' : '') if $r < 97;
	return 'DROP SCHEMA ' . qi($self->pick(@{ $st->{schemas} })) . ' CASCADE' if $r < 98 && @{ $st->{schemas} } > 2;
	return undef;
}

# next_step(STATE): the SQL of the next step (one statement, or a
# transaction of a few), given the decoded state.
sub next_step
{
	my ($self, $st) = @_;
	$self->{n}++;
	my $one = sub {
		for (1 .. 20)
		{
			my $s = $self->statement($st);
			return $s if defined $s;
		}
		return $self->create_table($st);
	};
	my $r = $self->rand_int(100);
	my $sql;
	if ($r < 8)
	{
		$sql = "BEGIN;\n" . $one->() . ";\n" . $one->() . ";\n" . ($self->chance(30) ? 'ROLLBACK' : 'COMMIT') . ";\n";
	}
	elsif ($r < 14)
	{
		$sql = "BEGIN;\n" . $one->() . ";\nSAVEPOINT s;\n" . $one->() . ";\nROLLBACK TO SAVEPOINT s;\n" . $one->() . ";\nCOMMIT;\n";
	}
	else
	{
		$sql = $one->() . ";\n";
	}
	my ($kind) = $sql =~ /^(?:BEGIN;\n)?(\w+(?: \w+)?)/;
	$self->{stats}{$kind}++;
	return $sql;
}

1;
