
# Copyright (c) 2026, the ddl_notify authors

# 009_symbols: the library's exported names carry the project's prefix
# (issue 26: a backend loads many libraries into one symbol namespace, and a
# global `subscribe`, `deliver` or `skip` can take the place of another
# library's).
#
# G0 (invisible otherwise): a backend that loads this library and another
# finds each library's functions where it expects them.
# - Every symbol the installed library exports is _PG_init, the module magic,
#   or starts with ddl_notify_, Ddln, ddln_ (or pg_finfo_ddl_notify_), except
#   0.1.0's nine entry points kept in src/legacy.c (named there, checked here
#   as a list: a tenth unprefixed name fails, so does one of the nine gone).
#   Catches: a new SQL-callable function without the prefix, a helper left
#   non-static under a plain name.  (A --coverage build links gcc's libgcov
#   in: its __gcov_ symbols and the few plain ones libgcov.a defines, such as
#   gcc 12's mangle_path, are not ours and not counted.)
# - No function of a fresh install (0.2.0) is bound to one of the legacy
#   names: they exist for 0.1.0's SQL only.  (040_extension_update.pl checks
#   the same after ALTER EXTENSION UPDATE from 0.1.0, and that 0.1.0's SQL
#   still works through them.)  Catches: a CREATE FUNCTION of the install
#   script left with an old symbol.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use DdlNotifyTest;

my @legacy = qw(capture_ddl_command_end capture_sql_drop capture_table_rewrite
  subscribe unsubscribe skip deliver wait_for_delivery delivery_status);

my $pg_config = `bash -c 'source test/tools/pg-env.sh; echo \$PG_CONFIG'`;
chomp $pg_config;
my $pkglibdir = `$pg_config --pkglibdir`;
chomp $pkglibdir;
my $lib = "$pkglibdir/ddl_notify.so";
ok(-f $lib, "the installed library ($lib) is there");

my $nm = `nm -D --defined-only '$lib'`;
is($?, 0, 'nm reads its dynamic symbols');
my %exported = map { (split ' ')[2] => 1 } grep { /\S/ } split /\n/, $nm;
ok(scalar(keys %exported) > 20, 'it exports the entry points (' . scalar(keys %exported) . ' symbols)');

my @loader = qw(_PG_init Pg_magic_func _init _fini _edata _end __bss_start);
my %allowed = map { $_ => 1 } @loader, @legacy, map { "pg_finfo_$_" } @legacy;
# a --coverage build: what libgcov.a defines is gcc's, not ours
if (grep { /^__gcov_/ } keys %exported)
{
	my $libgcov = `gcc -print-file-name=libgcov.a`;
	chomp $libgcov;
	for (split /\n/, `nm --defined-only '$libgcov' 2>/dev/null`)
	{
		my @f = split ' ';
		$allowed{ $f[2] } = 1 if @f == 3 && $f[1] =~ /^[TDBR]$/;
	}
}
my @unprefixed = sort grep {
	!/^(ddl_notify_|pg_finfo_ddl_notify_|Ddln|ddln_)/ && !/^__gcov_/ && !$allowed{$_}
} keys %exported;
is_deeply(\@unprefixed, [], 'no exported symbol outside the prefix but the legacy nine');
for my $name (@legacy)
{
	ok($exported{$name} && $exported{"pg_finfo_$name"}, "0.1.0's entry point $name is still exported");
	ok($exported{"ddl_notify_$name"}, "and its successor ddl_notify_$name");
}

my $node = DdlNotifyTest::new_node('symbols');
$node->safe_psql('postgres', 'CREATE EXTENSION ddl_notify');
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM pg_catalog.pg_proc p
	JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
		AND d.objid = p.oid AND d.deptype = 'e'
		AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'ddl_notify')
	WHERE p.prolang = (SELECT oid FROM pg_catalog.pg_language WHERE lanname = 'c')
	  AND p.prosrc NOT LIKE 'ddl\\_notify\\_%'}), '0',
	'every C function of a fresh install is bound to a ddl_notify_ symbol');
cmp_ok($node->safe_psql('postgres', qq{
	SELECT count(*) FROM pg_catalog.pg_proc p
	JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
	WHERE n.nspname = 'ddl_notify'
	  AND p.prolang = (SELECT oid FROM pg_catalog.pg_language WHERE lanname = 'c')}), '>=', 14,
	'and there are C functions to check');
$node->stop;

done_testing();
