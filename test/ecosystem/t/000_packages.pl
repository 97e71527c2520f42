
# Copyright (c) 2026, the ddl_notify authors

# 000_packages.pl: the other extensions are there, so that a missing package
# fails the suite instead of letting its tests skip unseen.
#
# Each extension of this suite has its control file in PostgreSQL's share
# directory and pg_repack its client in the bin directory.  As root,
# test/ecosystem/run.sh installs them from Debian (postgresql-M-pgaudit,
# -cron, -partman, -repack, -pglogical, -pgl-ddl-deploy, -pgq3, -postgis-3)
# and copies them into a relocated PG_CONFIG; when that could not happen,
# this says which one is missing.  Catches: a package name or the runner's
# install step broken (each other test would skip).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

my $share = `pg_config --sharedir`;
my $bin   = `pg_config --bindir`;
chomp($share, $bin);
my %ext = (
	pgaudit        => 'pgaudit',
	pg_cron        => 'cron',
	pg_partman     => 'partman',
	pg_repack      => 'repack',
	pglogical      => 'pglogical',
	pgl_ddl_deploy => 'pgl-ddl-deploy',
	pgq            => 'pgq3',
	postgis        => 'postgis-3');
for my $e (sort keys %ext)
{
	ok(-f "$share/extension/$e.control",
		"$e is installed (package postgresql-M-$ext{$e}; test/ecosystem/run.sh installs it as root)");
}
ok(-x "$bin/pg_repack", "the pg_repack client is in $bin");
done_testing();
