
# Copyright (c) 2026, the ddl_notify authors

# StressGen: the seeded DDL generator of test/t/050_stress_differential.pl.
#
# One generator per session.  It writes a psql script (one SQL statement per
# line, read with psql -f and ON_ERROR_STOP off) of a given number of
# statements: DDL on tables (with and without a primary key, serial,
# identity, foreign keys, domain columns, CREATE TABLE AS, partitions),
# ALTER TABLE (add/drop column, type changes that rewrite, checks, renames,
# SET SCHEMA), indexes (also CONCURRENTLY), views, materialized views,
# sequences, functions, procedures, enum and composite types, domains,
# schemas (with schema elements, renamed, dropped with CASCADE), comments,
# GRANT/REVOKE, triggers, temporary objects and DO blocks whose exception
# handlers roll DDL back; in autocommit, in BEGIN ... COMMIT/ROLLBACK with
# SAVEPOINT / ROLLBACK TO / RELEASE, and in multi-statement query strings
# (an implicit transaction).  Some statements fail on purpose (duplicate
# names, missing objects, errors during a rewrite, a deferred foreign key
# failing at COMMIT), which aborts their transaction.
#
# Everything is decided by a Park-Miller generator seeded from (seed,
# session), so a seed gives the same scripts on every machine; only the
# interleaving of the sessions differs between runs.
#
# The generator keeps a model of the objects its session has made so that
# most statements are valid; the model follows savepoints and rollbacks.  It
# is only a guide: the test compares what the server recorded, never the
# model, so an unplanned failure (a lock timeout, a collision with another
# session in schema "shared") is harmless.
#
# Rules the reference recorder of the test relies on:
# - GRANT/REVOKE name their objects explicitly, schema-qualified, with
#   single-argument function signatures, are sent as statements of their own
#   (never in a multi-statement string or a DO block) and grant to one role;
# - no DDL on ddl_notify's own objects, no roles, databases or tablespaces.

package StressGen;

use strict;
use warnings FATAL => 'all';

use Storable qw(dclone);

use constant MODULUS => 2147483647;

# new(seed => N, session => K, statements => M)
sub new
{
	my ($class, %o) = @_;
	my $k     = $o{session};
	my $state = ($o{seed} * 1000003 + $k * 7919 + 17) % MODULUS;
	$state = 1 if $state == 0;
	my $self = bless {
		k     => $k,
		own   => "s$k",
		state => $state,
		limit => $o{statements},
		n     => 0,           # statements written
		lines => [],
		stats => {},
		spn   => 0,           # savepoint counter
		uniq  => 0,           # counter for values that must differ
		m     => {
			s     => { "s$k" => _schema(), shared => _schema() },
			temps => {},
		},
	}, $class;
	# let the generator forget its seed's first, correlated, values
	$self->rnd for 1 .. 5;
	return $self;
}

sub _schema
{
	return {
		tables  => {},
		parts   => {},
		loose   => {},
		views   => {},
		mviews  => {},
		seqs    => {},
		funcs   => {},
		procs   => {},
		types   => {},
		domains => {},
		indexes => {},
	};
}

# --- randomness ------------------------------------------------------------

sub rnd
{
	my ($self) = @_;
	$self->{state} = ($self->{state} * 48271) % MODULUS;
	return $self->{state} / MODULUS;
}

sub int_ { my ($self, $n) = @_; return int($self->rnd * $n); }
sub chance { my ($self, $p) = @_; return $self->rnd < $p; }

sub pick
{
	my ($self, @l) = @_;
	return undef unless @l;
	return $l[ $self->int_(scalar @l) ];
}

# weighted(name => weight, ...): one of the names
sub weighted
{
	my ($self, @pairs) = @_;
	my $total = 0;
	for (my $i = 1; $i < @pairs; $i += 2) { $total += $pairs[$i]; }
	my $r = $self->rnd * $total;
	for (my $i = 0; $i < @pairs; $i += 2)
	{
		return $pairs[$i] if ($r -= $pairs[ $i + 1 ]) < 0;
	}
	return $pairs[-2];
}

# --- model helpers ---------------------------------------------------------

sub sm { my ($self, $s) = @_; return $self->{m}{s}{$s}; }

sub names
{
	my ($self, $s, $kind) = @_;
	return sort keys %{ $self->sm($s)->{$kind} };
}

# A name of the pool PREFIX0..PREFIX(N-1) not in use in any of the given
# hashes, or undef.
sub free_name
{
	my ($self, $prefix, $n, @in) = @_;
	my @free;
	for my $i (0 .. $n - 1)
	{
		my $name = "$prefix$i";
		push @free, $name unless grep { exists $_->{$name} } @in;
	}
	return $self->pick(@free);
}

# the relation-like names of a schema (one namespace in the catalog)
sub relhashes
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	return ($sm->{tables}, $sm->{parts}, $sm->{views}, $sm->{mviews},
		$sm->{seqs}, $sm->{indexes}, $sm->{loose});
}

# A schema for the next statement: mostly the session's own, sometimes one
# of its extra schemas, sometimes "shared" (where sessions collide).  Only
# autocommit statements use "shared": a collision there fails in ways the
# model cannot foresee, and inside a transaction it would take the rest of
# the transaction with it.
sub schema
{
	my ($self, %ctx) = @_;
	my @extra = grep { /^s\d+x\d$/ } sort keys %{ $self->{m}{s} };
	my $r = $self->rnd;
	return 'shared' if $r < 0.2 && !$ctx{in_txn} && !$ctx{in_multi};
	return $self->pick(@extra) if $r < 0.32 && @extra;
	return $self->{own};
}

# Views, materialized views and foreign keys that depend on table T of S.
sub dependents
{
	my ($self, $s, $t) = @_;
	my $sm = $self->sm($s);
	my @views  = grep { $sm->{views}{$_}{base} eq $t } keys %{ $sm->{views} };
	my @mviews = grep { $sm->{mviews}{$_}{base} eq $t } keys %{ $sm->{mviews} };
	my @fks    = grep {
		defined $sm->{tables}{$_}{fk} && $sm->{tables}{$_}{fk} eq $t && $_ ne $t
	} keys %{ $sm->{tables} };
	return (\@views, \@mviews, \@fks);
}

# Forget table T of S and what goes with it (CASCADE included).
sub forget_table
{
	my ($self, $s, $t) = @_;
	my $sm = $self->sm($s);
	my ($views, $mviews, $fks) = $self->dependents($s, $t);
	delete $sm->{views}{$_}  for @$views;
	delete $sm->{mviews}{$_} for @$mviews;
	$sm->{tables}{$_}{fk} = undef for @$fks;
	for my $i (keys %{ $sm->{indexes} })
	{
		delete $sm->{indexes}{$i} if $sm->{indexes}{$i}{table} eq $t;
	}
	delete $sm->{tables}{$t};
	return;
}

# --- output ----------------------------------------------------------------

# emit(SQL, COUNT, EXPECT): COUNT statements (default 1); EXPECT is what the
# model expects of the line: '' (success), 'fail' or 'aborted' (inside an
# aborted transaction).  expectations() lists them, for debugging a run.
sub emit
{
	my ($self, $sql, $count, $expect) = @_;
	push @{ $self->{lines} }, "$sql;";
	push @{ $self->{expect} }, $expect // '';
	$self->{n} += $count // 1;
	return;
}

sub expectations { my ($self) = @_; return $self->{expect}; }

sub stat_ { my ($self, $what) = @_; $self->{stats}{$what}++; return; }

# script(): the whole psql script, and a hash of counts.
sub script
{
	my ($self) = @_;
	while ($self->{n} < $self->{limit})
	{
		my $r = $self->rnd;
		if ($r < 0.33)
		{
			$self->transaction;
		}
		elsif ($r < 0.37)
		{
			$self->multi_statement;
		}
		elsif ($r < 0.38)
		{
			$self->stat_('manual deliver calls');
			$self->emit('CALL ddl_notify.deliver()');
		}
		elsif ($r < 0.39)
		{
			$self->concurrently;
		}
		else
		{
			my ($sql, $fails) = $self->statement;
			$self->emit($sql, 1, $fails ? 'fail' : '');
			$self->stat_($fails ? 'planned failures' : 'autocommit statements');
		}
	}
	$self->{stats}{statements} = $self->{n};
	return (join("\n", @{ $self->{lines} }) . "\n", $self->{stats});
}

# BEGIN ... COMMIT or ROLLBACK, with savepoints, failures, a deferred
# constraint that fails at COMMIT.
sub transaction
{
	my ($self) = @_;
	my $snap    = dclone($self->{m});
	my $aborted = 0;
	my @sps;

	$self->stat_('transactions');
	$self->emit('BEGIN');
	my $len = 2 + $self->int_(9);
	for (1 .. $len)
	{
		my $r = $self->rnd;
		if ($r < 0.10 && !$aborted && @sps < 3)
		{
			my $name = 'sp' . ++$self->{spn};
			push @sps, { name => $name, snap => dclone($self->{m}) };
			$self->emit("SAVEPOINT $name");
			$self->stat_('savepoints');
		}
		elsif ($r >= 0.10 && $r < 0.16 && @sps)
		{
			my $i = $self->int_(scalar @sps);
			$self->emit("ROLLBACK TO SAVEPOINT $sps[$i]{name}");
			splice @sps, $i + 1;
			$self->{m} = dclone($sps[$i]{snap});
			$aborted = 0;
			$self->stat_('rollbacks to savepoint');
		}
		elsif ($r >= 0.16 && $r < 0.20 && !$aborted && @sps)
		{
			my $i = $self->int_(scalar @sps);
			$self->emit("RELEASE SAVEPOINT $sps[$i]{name}");
			splice @sps, $i;
			$self->stat_('releases');
		}
		elsif ($r >= 0.20 && $r < 0.23)
		{
			$self->emit($self->failing_statement, 1, $aborted ? 'aborted' : 'fail');
			$aborted = 1;
			$self->stat_('planned failures');
		}
		else
		{
			my $keep = $aborted ? dclone($self->{m}) : undef;
			my ($sql, $fails) = $self->statement(in_txn => 1);
			$self->emit($sql, 1, $aborted ? 'aborted' : $fails ? 'fail' : '');
			$self->{m} = $keep if $keep;
			if ($fails)
			{
				$aborted = 1;
				$self->stat_('planned failures');
			}
		}
	}
	if (!$aborted && $self->chance(0.05))
	{
		# the deferred foreign key fails at COMMIT, after all the DDL
		$self->emit('INSERT INTO public.defer_child VALUES (-1)');
		$aborted = 2;
		$self->stat_('failures at commit');
	}
	if ($self->chance(0.72))
	{
		$self->emit('COMMIT', 1, $aborted == 2 ? 'fail' : '');
		if ($aborted)
		{
			$self->{m} = $snap;
			$self->stat_('aborted transactions');
		}
		else
		{
			$self->stat_('committed transactions');
		}
	}
	else
	{
		$self->emit('ROLLBACK');
		$self->{m} = $snap;
		$self->stat_('rolled back transactions');
	}
	return;
}

# Two or three statements in one query string: an implicit transaction
# that commits or rolls back as a whole.
sub multi_statement
{
	my ($self) = @_;
	my $snap = dclone($self->{m});
	my $n    = 2 + $self->int_(2);
	my (@sql, $fails);
	for (1 .. $n)
	{
		my ($s, $f) =
		  $self->chance(0.1)
		  ? ($self->failing_statement, 1)
		  : $self->statement(in_multi => 1);
		push @sql, $s;
		$fails ||= $f;
	}
	$self->{m} = $snap if $fails;
	$self->stat_($fails ? 'failed multi-statement strings' : 'multi-statement strings');
	$self->emit(join('\; ', @sql), $n, $fails ? 'fail' : '');
	return;
}

# CREATE INDEX CONCURRENTLY / DROP INDEX CONCURRENTLY (no transaction block)
sub concurrently
{
	my ($self) = @_;
	my $s  = $self->{own};
	my $sm = $self->sm($s);
	my @idx = $self->names($s, 'indexes');
	if (@idx && $self->chance(0.4))
	{
		my $i = $self->pick(@idx);
		delete $sm->{indexes}{$i};
		$self->stat_('concurrent index builds/drops');
		return $self->emit("DROP INDEX CONCURRENTLY $s.$i");
	}
	my $t = $self->pick($self->names($s, 'tables'));
	my $i = $self->free_name('i', 8, $self->relhashes($s));
	return $self->emit($self->statement) unless defined $t && defined $i;
	$sm->{indexes}{$i} = { table => $t, col => 'b' };
	$self->stat_('concurrent index builds/drops');
	return $self->emit("CREATE INDEX CONCURRENTLY $i ON $s.$t (b)");
}

# One statement: (sql, fails) where fails says the model expects an error.
# Many generators fail now and then on purpose (a duplicate name, a missing
# object); inside a transaction, where a failure aborts everything after it,
# a failing choice is mostly drawn again.
sub statement
{
	my ($self, %ctx) = @_;
	my $tries = ($ctx{in_txn} || $ctx{in_multi}) ? 4 : 2;
	for my $try (1 .. $tries)
	{
		my $keep = $try < $tries ? dclone($self->{m}) : undef;
		my ($sql, $fails) = $self->one_statement(%ctx);
		return ($sql, $fails) if !$fails || !$keep;
		$self->{m} = $keep;
	}
	die 'not reached';
}

sub one_statement
{
	my ($self, %ctx) = @_;
	my @kinds = (
		create_table => 9,
		drop_table   => 5,
		alter_table  => 12,
		insert       => 3,
		index        => 7,
		view         => 5,
		mview        => 2,
		sequence     => 4,
		function     => 5,
		procedure    => 1,
		type         => 4,
		domain       => 3,
		schema       => 3,
		comment      => 6,
		trigger      => 3,
		partition    => 3,
		temp         => 3,
		do_block     => 2,
		fail         => 3,
		defer_ok     => 1);
	push @kinds, (grant => 6) unless $ctx{in_multi};
	my $kind = $self->weighted(@kinds);
	$self->stat_("kind $kind");
	return ($self->failing_statement, 1) if $kind eq 'fail';
	return ('INSERT INTO public.defer_child VALUES (1)', 0)
	  if $kind eq 'defer_ok';
	my $method = "gen_$kind";
	return $self->gen_temp(%ctx) if $kind eq 'temp';
	return $self->$method($self->schema(%ctx));
}

# Statements that fail, whatever the model says.
sub failing_statement
{
	my ($self) = @_;
	my $s = $self->{own};
	return $self->pick(
		'SELECT 1/0',
		"CREATE TABLE $s.tz (id nosuchtype)",
		"DROP TABLE $s.no_such_table",
		"CREATE VIEW $s.vz AS SELECT * FROM $s.no_such_table",
		"ALTER TABLE $s.no_such_table ADD COLUMN c0 int",
		"CREATE INDEX iz ON $s.no_such_table (a)",
		'CREATE TABLEX broken ()',
		'DROP SCHEMA no_such_schema',
		"COMMENT ON TABLE $s.no_such_table IS 'x'",
		"GRANT SELECT ON TABLE $s.no_such_table TO stress_reader",
		"CREATE TABLE $s.tz (id int REFERENCES $s.no_such_table (id))");
}

# --- tables ----------------------------------------------------------------

sub gen_create_table
{
	my ($self, $s) = @_;
	my $sm   = $self->sm($s);
	my $name = $self->free_name('t', 8, $self->relhashes($s));
	my @have = $self->names($s, 'tables');
	if (!defined $name || ($self->chance(0.06) && @have))
	{
		return $self->gen_alter_table($s) unless @have;
		my $t = $self->pick(@have);
		return ("CREATE TABLE $s.$t (id int)", 1);
	}
	if ($self->chance(0.12))
	{
		my $bad = $self->chance(0.2);
		my $b   = $bad ? '1 / (g - 2)' : '0';
		$sm->{tables}{$name} =
		  { pk => 0, acol => 'a', btype => 'int', extra => {}, dcols => {},
			checks => {}, triggers => {}, rows => 1 }
		  unless $bad;
		return ("CREATE TABLE $s.$name AS SELECT g AS id, 'x'::text AS a, $b AS b "
			  . "FROM generate_series(1, 3) g", $bad);
	}
	my $idk = $self->pick('serial', 'identity', 'plain');
	my @cols = (
		$idk eq 'serial' ? 'id serial PRIMARY KEY'
		: $idk eq 'identity' ? 'id int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY'
		: 'id int DEFAULT 0',
		'a text', 'b int DEFAULT 0');
	my $t = { pk => $idk ne 'plain', idk => $idk, acol => 'a', btype => 'int', extra => {},
		dcols => {}, checks => {}, triggers => {}, rows => 0 };
	my @doms = $self->names($s, 'domains');
	if (@doms && $self->chance(0.3))
	{
		my $d = $self->pick(@doms);
		push @cols, "dv $s.$d";
		$t->{dcols}{dv} = $d;
	}
	my $unlogged = $self->chance(0.05);
	$t->{unlogged} = $unlogged;
	# a foreign key needs both tables logged (or both unlogged): keep to
	# logged ones
	my @pk = grep { $sm->{tables}{$_}{pk} && !$sm->{tables}{$_}{unlogged} } @have;
	my $fails = 0;
	if ($self->chance(0.06))
	{
		push @cols, "r int REFERENCES $s.no_such_table (id)";
		$fails = 1;
	}
	elsif (@pk && !$unlogged && $self->chance(0.25))
	{
		my $ref = $self->pick(@pk);
		push @cols, "r int REFERENCES $s.$ref (id)";
		$t->{fk} = $ref;
	}
	$sm->{tables}{$name} = $t unless $fails;
	return ('CREATE ' . ($unlogged ? 'UNLOGGED ' : '') . "TABLE $s.$name ("
		  . join(', ', @cols) . ')', $fails);
}

sub gen_drop_table
{
	my ($self, $s) = @_;
	my $sm   = $self->sm($s);
	my @have = $self->names($s, 'tables');
	if (!@have || $self->chance(0.08))
	{
		my $name = $self->free_name('t', 8, $sm->{tables}) // 'tz';
		return $self->chance(0.5)
		  ? ("DROP TABLE IF EXISTS $s.$name", 0)
		  : ("DROP TABLE $s.$name", 1);
	}
	my @drop = ($self->pick(@have));
	if (@have > 1 && $self->chance(0.15))
	{
		my ($other) = grep { $_ ne $drop[0] } @have[ $self->int_(scalar @have) ];
		push @drop, $other if defined $other;
	}
	my $cascade = $self->chance(0.4);
	my %dropping = map { $_ => 1 } @drop;
	my $blocked = 0;
	for my $t (@drop)
	{
		my ($v, $mv, $fk) = $self->dependents($s, $t);
		$blocked ||= @$v || @$mv || grep { !$dropping{$_} } @$fk;
	}
	my $sql = 'DROP TABLE ' . join(', ', map { "$s.$_" } @drop)
	  . ($cascade ? ' CASCADE' : '');
	return ($sql, 1) if $blocked && !$cascade;
	$self->forget_table($s, $_) for @drop;
	return ($sql, 0);
}

sub gen_insert
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my $t  = $self->pick($self->names($s, 'tables'));
	return $self->gen_create_table($s) unless defined $t;
	my $fails = grep { $_ } values %{ $sm->{tables}{$t}{checks} };
	$sm->{tables}{$t}{rows} = 1 unless $fails;
	return ("INSERT INTO $s.$t DEFAULT VALUES", $fails ? 1 : 0);
}

sub gen_alter_table
{
	my ($self, $s) = @_;
	my $sm   = $self->sm($s);
	my @have = $self->names($s, 'tables');
	if (!@have)
	{
		return $self->chance(0.3)
		  ? ("ALTER TABLE IF EXISTS $s.tz ADD COLUMN c0 int", 0)
		  : $self->gen_create_table($s);
	}
	my $t  = $self->pick(@have);
	my $tm = $sm->{tables}{$t};
	my $q  = "$s.$t";
	my $what = $self->weighted(
		add_column  => 4,
		add_columns => 1,
		drop_column => 2,
		alter_type  => 2,
		add_check   => 2,
		drop_check  => 1,
		rename      => 2,
		rename_col  => 1,
		set_schema  => 1,
		logged      => 1,
		trigger_off => 1,
		bad_pair    => 1);
	$self->stat_("alter $what");

	if ($what eq 'add_column' || $what eq 'add_columns')
	{
		my @free = grep { !exists $tm->{extra}{$_} } map { "c$_" } 0 .. 4;
		my $n = $what eq 'add_columns' ? 2 : 1;
		if (@free < $n || $self->chance(0.06))
		{
			return ("ALTER TABLE $q ADD COLUMN b int", 1);
		}
		my @sub;
		my %picked;
		while (keys %picked < $n)
		{
			my $c = $self->pick(@free);
			next if $picked{$c}++;
			my $def = $self->weighted(
				''                                     => 3,
				' DEFAULT 7'                           => 2,
				' DEFAULT (random() * 10)::int'        => 1);
			push @sub, "ADD COLUMN $c int$def";
			$tm->{extra}{$c} = 1;
		}
		return ("ALTER TABLE $q " . join(', ', @sub), 0);
	}
	if ($what eq 'drop_column')
	{
		my @cols = (sort(keys %{ $tm->{extra} }), sort(keys %{ $tm->{dcols} }));
		if (!@cols)
		{
			return ("ALTER TABLE $q DROP COLUMN IF EXISTS c4", 0)
			  if $self->chance(0.5);
			return ("ALTER TABLE $q DROP COLUMN c4", 1);
		}
		my $c = $self->pick(@cols);
		delete $tm->{extra}{$c};
		delete $tm->{dcols}{$c};
		for my $i (keys %{ $sm->{indexes} })
		{
			delete $sm->{indexes}{$i}
			  if $sm->{indexes}{$i}{table} eq $t && $sm->{indexes}{$i}{col} eq $c;
		}
		return ("ALTER TABLE $q DROP COLUMN $c", 0);
	}
	if ($what eq 'alter_type')
	{
		my $to = $tm->{btype} eq 'int' ? 'bigint' : 'int';
		if ($self->chance(0.3))
		{
			# a rewrite that fails half-way when there are rows
			$tm->{btype} = $to unless $tm->{rows};
			return ("ALTER TABLE $q ALTER COLUMN b TYPE $to USING (b / 0)",
				$tm->{rows} ? 1 : 0);
		}
		$tm->{btype} = $to;
		return ("ALTER TABLE $q ALTER COLUMN b TYPE $to", 0);
	}
	if ($what eq 'add_check')
	{
		my $k = $self->free_name('k', 3, $tm->{checks});
		return ("ALTER TABLE $q ADD CONSTRAINT k0 CHECK (b >= 0)", 1)
		  unless defined $k;
		if ($self->chance(0.25))
		{
			# fails while validating rows (b is 0)
			$tm->{checks}{$k} = 1 unless $tm->{rows};
			return ("ALTER TABLE $q ADD CONSTRAINT $k CHECK (b < 0)",
				$tm->{rows} ? 1 : 0);
		}
		$tm->{checks}{$k} = 0;
		return ("ALTER TABLE $q ADD CONSTRAINT $k CHECK (b >= 0)", 0);
	}
	if ($what eq 'drop_check')
	{
		my $k = $self->pick(sort keys %{ $tm->{checks} });
		return ("ALTER TABLE $q DROP CONSTRAINT k2", 1) unless defined $k;
		delete $tm->{checks}{$k};
		return ("ALTER TABLE $q DROP CONSTRAINT $k", 0);
	}
	if ($what eq 'rename')
	{
		my $to = $self->free_name('t', 8, $self->relhashes($s));
		return ("ALTER TABLE $q RENAME TO $t", 1) unless defined $to;
		$sm->{tables}{$to} = delete $sm->{tables}{$t};
		for my $h ($sm->{views}, $sm->{mviews})
		{
			$_->{base} eq $t and $_->{base} = $to for values %$h;
		}
		$_->{table} eq $t and $_->{table} = $to for values %{ $sm->{indexes} };
		for my $o (values %{ $sm->{tables} })
		{
			$o->{fk} = $to if defined $o->{fk} && $o->{fk} eq $t;
		}
		return ("ALTER TABLE $q RENAME TO $to", 0);
	}
	if ($what eq 'rename_col')
	{
		my $to = $tm->{acol} eq 'a' ? 'aa' : 'a';
		my $from = $tm->{acol};
		$tm->{acol} = $to;
		return ("ALTER TABLE $q RENAME COLUMN $from TO $to", 0);
	}
	if ($what eq 'set_schema')
	{
		my @targets = grep { $_ ne $s && $_ ne 'shared' } sort keys %{ $self->{m}{s} };
		my $to = $self->pick(@targets);
		my ($v, $mv, $fk) = $self->dependents($s, $t);
		# only tables that take no implicitly named object (primary key
		# index, sequence) or index along, so that nothing collides in the
		# target schema
		my @idx = grep { $sm->{indexes}{$_}{table} eq $t } keys %{ $sm->{indexes} };
		if (!defined $to || @$v || @$mv || @$fk || defined $tm->{fk}
			|| %{ $tm->{dcols} } || @idx || ($tm->{idk} // 'plain') ne 'plain'
			|| grep { exists $_->{$t} } $self->relhashes($to))
		{
			return ("ALTER TABLE $q RENAME COLUMN no_such_column TO x", 1);
		}
		$self->sm($to)->{tables}{$t} = delete $sm->{tables}{$t};
		return ("ALTER TABLE $q SET SCHEMA $to", 0);
	}
	if ($what eq 'logged')
	{
		# SET LOGGED/UNLOGGED rewrites the table; foreign keys forbid mixing
		my ($v, $mv, $fk) = $self->dependents($s, $t);
		return ("ALTER TABLE $q SET " . ($tm->{unlogged} ? 'UNLOGGED' : 'LOGGED'), 0)
		  if @$fk || defined $tm->{fk};
		$tm->{unlogged} = !$tm->{unlogged};
		return ("ALTER TABLE $q SET " . ($tm->{unlogged} ? 'UNLOGGED' : 'LOGGED'), 0);
	}
	if ($what eq 'trigger_off')
	{
		my $tr = $self->pick(sort keys %{ $tm->{triggers} });
		return ("ALTER TABLE $q DISABLE TRIGGER tr9", 1) unless defined $tr;
		return ("ALTER TABLE $q " . $self->pick('DISABLE', 'ENABLE')
			  . " TRIGGER $tr", 0);
	}
	# bad_pair: the second subcommand fails, the first must not survive
	return ("ALTER TABLE $q ADD COLUMN c9 int, ADD COLUMN c9 int", 1);
}

# --- indexes, views, sequences ---------------------------------------------

sub gen_index
{
	my ($self, $s) = @_;
	my $sm  = $self->sm($s);
	my @idx = $self->names($s, 'indexes');
	my $r   = $self->rnd;
	if ($r < 0.55 || !@idx)
	{
		my $t = $self->pick($self->names($s, 'tables'));
		return $self->gen_create_table($s) unless defined $t;
		my $tm = $sm->{tables}{$t};
		my $i  = $self->free_name('i', 8, $self->relhashes($s));
		if (!defined $i || ($self->chance(0.05) && @idx))
		{
			return ("CREATE INDEX $idx[0] ON $s.$t (b)", 1);
		}
		my @cols = ('b', $tm->{acol}, 'id', sort keys %{ $tm->{extra} });
		my $c = $self->pick(@cols);
		my $unique = ($c eq 'id' && $tm->{pk}) ? 'UNIQUE ' : '';
		$sm->{indexes}{$i} = { table => $t, col => $c };
		return ("CREATE ${unique}INDEX $i ON $s.$t ($c)", 0);
	}
	my $i = $self->pick(@idx);
	if ($r < 0.85)
	{
		delete $sm->{indexes}{$i};
		return ("DROP INDEX $s.$i", 0);
	}
	my $to = $self->free_name('i', 8, $self->relhashes($s));
	return ("DROP INDEX $s.iz", 1) unless defined $to;
	$sm->{indexes}{$to} = delete $sm->{indexes}{$i};
	return ("ALTER INDEX $s.$i RENAME TO $to", 0);
}

sub gen_view
{
	my ($self, $s) = @_;
	my $sm    = $self->sm($s);
	my @views = $self->names($s, 'views');
	my $r     = $self->rnd;
	if ($r < 0.45 || !@views)
	{
		my $t = $self->pick($self->names($s, 'tables'));
		return ("CREATE VIEW $s.vz AS SELECT * FROM $s.no_such_table", 1)
		  unless defined $t;
		my $v = $self->free_name('v', 5, $self->relhashes($s));
		return ("CREATE VIEW $s.$views[0] AS SELECT 1 AS x", 1)
		  unless defined $v;
		$sm->{views}{$v} = { base => $t };
		my $a = $sm->{tables}{$t}{acol};
		return ("CREATE VIEW $s.$v AS SELECT id, $a AS a FROM $s.$t", 0);
	}
	my $v = $self->pick(@views);
	if ($r < 0.65)
	{
		my $t = $sm->{views}{$v}{base};
		my $a = $sm->{tables}{$t}{acol};
		return ("CREATE OR REPLACE VIEW $s.$v AS SELECT id, $a AS a FROM $s.$t", 0);
	}
	if ($r < 0.9)
	{
		delete $sm->{views}{$v};
		return ("DROP VIEW $s.$v", 0);
	}
	my $to = $self->free_name('v', 5, $self->relhashes($s));
	return ("DROP VIEW $s.vz", 1) unless defined $to;
	$sm->{views}{$to} = delete $sm->{views}{$v};
	return ("ALTER VIEW $s.$v RENAME TO $to", 0);
}

sub gen_mview
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my @mv = $self->names($s, 'mviews');
	my $r  = $self->rnd;
	if ($r < 0.45 || !@mv)
	{
		my $t = $self->pick($self->names($s, 'tables'));
		return $self->gen_create_table($s) unless defined $t;
		my $m = $self->free_name('m', 2, $self->relhashes($s));
		return ("CREATE MATERIALIZED VIEW $s.$mv[0] AS SELECT 1 AS x", 1)
		  unless defined $m;
		$sm->{mviews}{$m} = { base => $t };
		return ("CREATE MATERIALIZED VIEW $s.$m AS SELECT id FROM $s.$t", 0);
	}
	my $m = $self->pick(@mv);
	return ("REFRESH MATERIALIZED VIEW $s.$m", 0) if $r < 0.75;
	delete $sm->{mviews}{$m};
	return ("DROP MATERIALIZED VIEW $s.$m", 0);
}

sub gen_sequence
{
	my ($self, $s) = @_;
	my $sm   = $self->sm($s);
	my @seqs = $self->names($s, 'seqs');
	my $r    = $self->rnd;
	if ($r < 0.4 || !@seqs)
	{
		my $q = $self->free_name('q', 4, $self->relhashes($s));
		if (!defined $q || ($self->chance(0.06) && @seqs))
		{
			return ("CREATE SEQUENCE $s." . ($q // $seqs[0]) . ' START 0', 1)
			  if defined $q;
			return ("CREATE SEQUENCE $s.$seqs[0]", 1);
		}
		$sm->{seqs}{$q} = 1;
		return ("CREATE SEQUENCE $s.$q" . ($self->chance(0.3) ? ' START 10' : ''), 0);
	}
	my $q = $self->pick(@seqs);
	return ("ALTER SEQUENCE $s.$q " . $self->pick('INCREMENT BY 2', 'RESTART', 'CACHE 5'), 0)
	  if $r < 0.65;
	if ($r < 0.85)
	{
		delete $sm->{seqs}{$q};
		return ("DROP SEQUENCE $s.$q", 0);
	}
	my $to = $self->free_name('q', 4, $self->relhashes($s));
	return ("DROP SEQUENCE $s.qz", 1) unless defined $to;
	$sm->{seqs}{$to} = delete $sm->{seqs}{$q};
	return ("ALTER SEQUENCE $s.$q RENAME TO $to", 0);
}

# --- functions, types, domains ---------------------------------------------

sub gen_function
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my @f  = $self->names($s, 'funcs');
	my $r  = $self->rnd;
	my $k  = ++$self->{uniq};
	if ($r < 0.45 || !@f)
	{
		my $f = $self->free_name('f', 4, $sm->{funcs});
		if ($self->chance(0.08))
		{
			# the body does not compile
			return ("CREATE FUNCTION $s.f9(integer) RETURNS integer LANGUAGE sql "
				  . "AS 'SELECT no_such_column'", 1);
		}
		if (!defined $f)
		{
			return ("CREATE FUNCTION $s.$f[0](integer) RETURNS integer LANGUAGE sql "
				  . "AS 'SELECT 1'", 1);
		}
		$sm->{funcs}{$f} = 1;
		return ("CREATE FUNCTION $s.$f(integer) RETURNS integer LANGUAGE sql "
			  . "IMMUTABLE AS 'SELECT \$1 + $k'", 0);
	}
	my $f = $self->pick(@f);
	if ($r < 0.6)
	{
		return ("CREATE OR REPLACE FUNCTION $s.$f(integer) RETURNS integer "
			  . "LANGUAGE sql IMMUTABLE AS 'SELECT \$1 * $k'", 0);
	}
	if ($r < 0.7)
	{
		return ("ALTER FUNCTION $s.$f(integer) " . $self->pick('STABLE', 'IMMUTABLE', 'COST 10'), 0);
	}
	if ($r < 0.8)
	{
		my $to = $self->free_name('f', 4, $sm->{funcs});
		return ("ALTER FUNCTION $s.$f(integer) RENAME TO $f", 1) unless defined $to;
		$sm->{funcs}{$to} = delete $sm->{funcs}{$f};
		return ("ALTER FUNCTION $s.$f(integer) RENAME TO $to", 0);
	}
	delete $sm->{funcs}{$f};
	return ("DROP FUNCTION $s.$f(integer)", 0);
}

sub gen_procedure
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my $p  = $self->pick($self->names($s, 'procs'));
	if (defined $p && $self->chance(0.5))
	{
		delete $sm->{procs}{$p};
		return ("DROP PROCEDURE $s.$p()", 0);
	}
	$p = $self->free_name('r', 2, $sm->{procs});
	return ('DROP PROCEDURE no_such_procedure()', 1) unless defined $p;
	$sm->{procs}{$p} = 1;
	return ("CREATE PROCEDURE $s.$p() LANGUAGE sql AS 'SELECT 1'", 0);
}

sub gen_type
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my @y  = $self->names($s, 'types');
	my $r  = $self->rnd;
	if ($r < 0.4 || !@y)
	{
		my $y = $self->free_name('y', 4, $sm->{types}, $self->relhashes($s));
		return ("CREATE TYPE $s.$y[0] AS ENUM ('a')", 1) unless defined $y;
		if ($self->chance(0.5))
		{
			$sm->{types}{$y} = { kind => 'enum', n => 0 };
			return ("CREATE TYPE $s.$y AS ENUM ('a', 'b')", 0);
		}
		$sm->{types}{$y} = { kind => 'comp', n => 0 };
		return ("CREATE TYPE $s.$y AS (x int, y text)", 0);
	}
	my $y  = $self->pick(@y);
	my $ym = $sm->{types}{$y};
	if ($r < 0.65)
	{
		my $n = ++$ym->{n};
		return ("ALTER TYPE $s.$y ADD VALUE 'v$n'", 0) if $ym->{kind} eq 'enum';
		return ("ALTER TYPE $s.$y ADD ATTRIBUTE z$n int", 0);
	}
	if ($r < 0.8)
	{
		my $to = $self->free_name('y', 4, $sm->{types}, $self->relhashes($s));
		return ("ALTER TYPE $s.$y RENAME TO $y", 1) unless defined $to;
		$sm->{types}{$to} = delete $sm->{types}{$y};
		return ("ALTER TYPE $s.$y RENAME TO $to", 0);
	}
	delete $sm->{types}{$y};
	return ("DROP TYPE $s.$y", 0);
}

sub gen_domain
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my @d  = $self->names($s, 'domains');
	my $r  = $self->rnd;
	if ($r < 0.4 || !@d)
	{
		my $d = $self->free_name('d', 3, $sm->{domains}, $sm->{types});
		return ("CREATE DOMAIN $s.$d[0] AS integer", 1) unless defined $d;
		$sm->{domains}{$d} = { cons => {} };
		return ("CREATE DOMAIN $s.$d AS integer CHECK (VALUE > 0)", 0);
	}
	my $d  = $self->pick(@d);
	my $dm = $sm->{domains}{$d};
	if ($r < 0.6)
	{
		my $c = $self->free_name('dc', 2, $dm->{cons});
		return ("ALTER DOMAIN $s.$d ADD CONSTRAINT dc0 CHECK (VALUE < 1000000)", 1)
		  unless defined $c;
		$dm->{cons}{$c} = 1;
		return ("ALTER DOMAIN $s.$d ADD CONSTRAINT $c CHECK (VALUE < 1000000)", 0);
	}
	if ($r < 0.7)
	{
		my $c = $self->pick(sort keys %{ $dm->{cons} });
		return ("ALTER DOMAIN $s.$d DROP CONSTRAINT dc9", 1) unless defined $c;
		delete $dm->{cons}{$c};
		return ("ALTER DOMAIN $s.$d DROP CONSTRAINT $c", 0);
	}
	my @users = grep {
		grep { $_ eq $d } values %{ $sm->{tables}{$_}{dcols} }
	} keys %{ $sm->{tables} };
	my $cascade = $self->chance(0.5);
	my $sql = "DROP DOMAIN $s.$d" . ($cascade ? ' CASCADE' : '');
	return ($sql, 1) if @users && !$cascade;
	for my $t (@users)
	{
		my $dc = $sm->{tables}{$t}{dcols};
		delete $dc->{$_} for grep { $dc->{$_} eq $d } keys %$dc;
	}
	delete $sm->{domains}{$d};
	return ($sql, 0);
}

# --- schemas ----------------------------------------------------------------

sub gen_schema
{
	my ($self) = @_;
	my $k     = $self->{k};
	my @extra = grep { /^s\d+x\d$/ } sort keys %{ $self->{m}{s} };
	my $r     = $self->rnd;
	if ($r < 0.45 || !@extra)
	{
		my $x = $self->free_name("s${k}x", 3, $self->{m}{s});
		return ("CREATE SCHEMA $extra[0]", 1) unless defined $x;
		$self->{m}{s}{$x} = _schema();
		if ($self->chance(0.4))
		{
			$self->sm($x)->{tables}{t0} =
			  { pk => 0, acol => 'a', btype => 'int', extra => {}, dcols => {},
				checks => {}, triggers => {}, rows => 0 };
			$self->sm($x)->{views}{v0} = { base => 't0' };
			return ("CREATE SCHEMA $x CREATE TABLE t0 (id int, a text, b int DEFAULT 0) "
				  . 'CREATE VIEW v0 AS SELECT id, a FROM t0', 0);
		}
		return ("CREATE SCHEMA $x", 0);
	}
	my $x = $self->pick(@extra);
	if ($r < 0.8)
	{
		my $cascade = $self->chance(0.8);
		my $empty   = !grep { %$_ } values %{ $self->sm($x) };
		return ("DROP SCHEMA $x", 1) if !$cascade && !$empty;
		delete $self->{m}{s}{$x};
		return ("DROP SCHEMA $x" . ($cascade ? ' CASCADE' : ''), 0);
	}
	my $to = $self->free_name("s${k}x", 3, $self->{m}{s});
	return ("ALTER SCHEMA $x RENAME TO $x", 1) unless defined $to;
	$self->{m}{s}{$to} = delete $self->{m}{s}{$x};
	return ("ALTER SCHEMA $x RENAME TO $to", 0);
}

# --- comments, grants, triggers ---------------------------------------------

# A random existing object of S as (kind for COMMENT/GRANT, name).
sub some_object
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my @c;
	push @c, map { [ 'TABLE', "$s.$_" ] } $self->names($s, 'tables');
	push @c, map { [ 'VIEW', "$s.$_" ] } $self->names($s, 'views');
	push @c, map { [ 'MATERIALIZED VIEW', "$s.$_" ] } $self->names($s, 'mviews');
	push @c, map { [ 'SEQUENCE', "$s.$_" ] } $self->names($s, 'seqs');
	push @c, map { [ 'INDEX', "$s.$_" ] } $self->names($s, 'indexes');
	push @c, map { [ 'FUNCTION', "$s.$_(integer)" ] } $self->names($s, 'funcs');
	push @c, map { [ 'TYPE', "$s.$_" ] } $self->names($s, 'types');
	push @c, map { [ 'DOMAIN', "$s.$_" ] } $self->names($s, 'domains');
	push @c, [ 'SCHEMA', $s ];
	for my $t ($self->names($s, 'tables'))
	{
		my $tm = $sm->{tables}{$t};
		push @c, [ 'COLUMN', "$s.$t.$tm->{acol}" ];
		push @c, map { [ 'TRIGGER', "$_ ON $s.$t" ] } sort keys %{ $tm->{triggers} };
		push @c, map { [ 'CONSTRAINT', "$_ ON $s.$t" ] } sort keys %{ $tm->{checks} };
	}
	return @{ $self->pick(@c) };
}

sub gen_comment
{
	my ($self, $s) = @_;
	return ("COMMENT ON TABLE $s.no_such_table IS 'x'", 1) if $self->chance(0.05);
	my ($kind, $name) = $self->some_object($s);
	my $text = $self->chance(0.2) ? 'NULL' : "'comment " . ++$self->{uniq} . "'";
	return ("COMMENT ON $kind $name IS $text", 0);
}

sub gen_grant
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my ($verb, $prep) = $self->chance(0.7) ? ('GRANT', 'TO') : ('REVOKE', 'FROM');
	my $r = $self->rnd;
	my ($priv, $on, @objs);
	if ($r < 0.45)
	{
		my @rels = map { "$s.$_" } (
			$self->names($s, 'tables'), $self->names($s, 'views'),
			$self->names($s, 'mviews'));
		@objs = $self->pick(@rels);
		my $second = $self->pick(@rels);
		push @objs, $second
		  if defined $second && $self->chance(0.3) && $second ne ($objs[0] // '');
		($priv, $on) = ($self->pick('SELECT', 'INSERT, UPDATE', 'ALL'), 'TABLE');
	}
	elsif ($r < 0.55)
	{
		@objs = map { "$s.$_" } grep { defined } $self->pick($self->names($s, 'seqs'));
		($priv, $on) = ('USAGE', 'SEQUENCE');
	}
	elsif ($r < 0.7)
	{
		@objs = map { "$s.$_(integer)" } grep { defined } $self->pick($self->names($s, 'funcs'));
		($priv, $on) = ('EXECUTE', 'FUNCTION');
	}
	elsif ($r < 0.8)
	{
		@objs = ($s);
		($priv, $on) = ($self->pick('USAGE', 'CREATE'), 'SCHEMA');
	}
	elsif ($r < 0.9)
	{
		@objs = map { "$s.$_" } grep { defined } $self->pick($self->names($s, 'types'));
		($priv, $on) = ('USAGE', 'TYPE');
	}
	else
	{
		@objs = map { "$s.$_" } grep { defined } $self->pick($self->names($s, 'domains'));
		($priv, $on) = ('USAGE', 'DOMAIN');
	}
	@objs = grep { defined } @objs;
	my $fails = 0;
	if (!@objs || $self->chance(0.04))
	{
		@objs = ("$s.no_such_table");
		($priv, $on, $fails) = ('SELECT', 'TABLE', 1);
	}
	return ("$verb $priv ON $on " . join(', ', @objs) . " $prep stress_reader", $fails);
}

sub gen_trigger
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my $t  = $self->pick($self->names($s, 'tables'));
	return $self->gen_create_table($s) unless defined $t;
	my $tm = $sm->{tables}{$t};
	my $tr = $self->pick(sort keys %{ $tm->{triggers} });
	if (defined $tr && $self->chance(0.5))
	{
		delete $tm->{triggers}{$tr};
		return ("DROP TRIGGER $tr ON $s.$t", 0);
	}
	$tr = $self->free_name('tr', 3, $tm->{triggers});
	return ("DROP TRIGGER tr9 ON $s.$t", 1) unless defined $tr;
	$tm->{triggers}{$tr} = 1;
	return ("CREATE TRIGGER $tr BEFORE INSERT ON $s.$t FOR EACH ROW "
		  . 'EXECUTE FUNCTION public.stress_trg()', 0);
}

# --- partitions --------------------------------------------------------------

sub gen_partition
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my @p  = $self->names($s, 'parts');
	my $r  = $self->rnd;
	if ($r < 0.25 || !@p)
	{
		my $p = $self->free_name('p', 2, $self->relhashes($s));
		return ("CREATE TABLE $s.$p[0] (id int) PARTITION BY RANGE (id)", 1)
		  unless defined $p;
		$sm->{parts}{$p} = { kids => {} };
		return ("CREATE TABLE $s.$p (id int, b int) PARTITION BY RANGE (id)", 0);
	}
	my $p  = $self->pick(@p);
	my $pm = $sm->{parts}{$p};
	my $k  = $self->int_(3);
	my $kid = "${p}_k$k";
	my $range = 'FROM (' . ($k * 100) . ') TO (' . ($k * 100 + 100) . ')';
	my $state = $pm->{kids}{$k} // '';
	if ($r < 0.55)
	{
		return ("CREATE TABLE $s.$kid PARTITION OF $s.$p FOR VALUES $range", 1)
		  if $state || exists $sm->{loose}{$kid};
		$pm->{kids}{$k} = 'att';
		return ("CREATE TABLE $s.$kid PARTITION OF $s.$p FOR VALUES $range", 0);
	}
	if ($r < 0.7)
	{
		if ($state eq 'att')
		{
			$pm->{kids}{$k} = 'det';
			return ("ALTER TABLE $s.$p DETACH PARTITION $s.$kid", 0);
		}
		if ($state eq 'det')
		{
			$pm->{kids}{$k} = 'att';
			return ("ALTER TABLE $s.$p ATTACH PARTITION $s.$kid FOR VALUES $range", 0);
		}
		return ("ALTER TABLE $s.$p DETACH PARTITION $s.$kid", 1);
	}
	if ($r < 0.8)
	{
		return ("CREATE INDEX ON $s.$p (b)", 0);
	}
	if ($r < 0.9 && $state)
	{
		delete $pm->{kids}{$k};
		return ("DROP TABLE $s.$kid", 0);
	}
	# dropping the parent drops the attached partitions, not the detached
	for my $kk (keys %{ $pm->{kids} })
	{
		$sm->{loose}{"${p}_k$kk"} = 1 if $pm->{kids}{$kk} eq 'det';
	}
	delete $sm->{parts}{$p};
	return ("DROP TABLE $s.$p", 0);
}

# --- temporary objects (never recorded) -------------------------------------

sub gen_temp
{
	my ($self, %ctx) = @_;
	my $temps = $self->{m}{temps};
	my $t = $self->pick(sort keys %$temps);
	my $r = $self->rnd;
	if (!defined $t || $r < 0.3)
	{
		my $n = $self->free_name('tmp', 3, $temps);
		return ("CREATE TEMP TABLE $t (id int)", 1) unless defined $n;
		$temps->{$n} = { btype => 'int' };
		return ("CREATE TEMP TABLE $n (id serial PRIMARY KEY, a text, b int DEFAULT 0)", 0);
	}
	my $tm = $temps->{$t};
	return ("CREATE INDEX ON $t (a)", 0) if $r < 0.4;
	if ($r < 0.55)
	{
		my $to = $tm->{btype} eq 'int' ? 'bigint' : 'int';
		$tm->{btype} = $to;
		return ("ALTER TABLE $t ALTER COLUMN b TYPE $to", 0);
	}
	return ("COMMENT ON TABLE $t IS 'temp " . ++$self->{uniq} . "'", 0) if $r < 0.65;
	return ("GRANT SELECT ON TABLE $t TO stress_reader", 0)
	  if $r < 0.75 && !$ctx{in_multi};
	return ("CREATE TEMP VIEW tv_$t AS SELECT id FROM $t", 0) if $r < 0.8 && !$tm->{view}++;
	delete $temps->{$t};
	return ("DROP TABLE $t CASCADE", 0);
}

# --- DO blocks: DDL undone by an exception handler's subtransaction ----------

sub gen_do_block
{
	my ($self, $s) = @_;
	my $sm = $self->sm($s);
	my $a = $self->free_name('q', 4, $self->relhashes($s));
	my $b;
	{
		local $sm->{seqs}{ $a // '' } = 1;
		$b = $self->free_name('q', 4, $self->relhashes($s));
	}
	if (!defined $a || !defined $b || $self->chance(0.4))
	{
		# everything in the block is rolled back
		return ("DO \$\$BEGIN CREATE TABLE $s.tdo (id int); CREATE TABLE $s.tdo (id int); "
			  . 'EXCEPTION WHEN duplicate_table THEN NULL; END$$', 0);
	}
	# the inner block's sequence is rolled back, the outer one stays
	$sm->{seqs}{$b} = 1;
	return ("DO \$\$BEGIN BEGIN CREATE SEQUENCE $s.$a; RAISE EXCEPTION 'undo'; "
		  . "EXCEPTION WHEN raise_exception THEN NULL; END; CREATE SEQUENCE $s.$b; END\$\$",
		0);
}

1;
