
# Copyright (c) 2026, the ddl_notify authors

# 000_deps: test/tools/deps.sh finds what a fresh machine lacks (issue 12).
#
# On Debian 12, postgresql-client-15 ships PGXS, pg_regress and the TAP
# modules but not the server headers, so a check for any of those passed on a
# machine that could not compile a line.  Here deps.sh --check is pointed at
# an installation whose headers are missing (a pg_config that answers like
# the real one but names an empty --includedir-server) and must name
# postgresql-server-dev-MAJOR; pointed at the real installation it must find
# nothing missing (make test ran deps.sh before this).
#
# Catches: the header check removed from deps.sh (the first test fails), or a
# header check that looks somewhere else than pg_config --includedir-server.

use strict;
use warnings FATAL => 'all';

use File::Temp qw(tempdir);
use PostgreSQL::Test::Utils;
use Test::More;

my $deps = 'test/tools/deps.sh';
my $real = `bash -c 'source test/tools/pg-env.sh; echo \$PG_CONFIG'`;
chomp $real;
ok(-x $real, "the real pg_config ($real) is found");
my $major = `$real --version`;
$major =~ s/^PostgreSQL (\d+).*/$1/s;

# A pg_config like the real one, whose server headers directory is empty.
my $dir = tempdir(CLEANUP => 1);
mkdir "$dir/include-server";
open my $fh, '>', "$dir/pg_config" or die $!;
print $fh qq{#!/bin/sh
for a in "\$@"; do
	if [ "\$a" = --includedir-server ]; then echo '$dir/include-server'; exit 0; fi
done
exec '$real' "\$@"
};
close $fh;
chmod 0755, "$dir/pg_config";

my ($out, $err);
my $ok = IPC::Run::run([ 'bash', $deps, '--check' ], '<', \undef, '>', \$out, '2>', \$err,
	init => sub { $ENV{PG_CONFIG} = "$dir/pg_config" });
ok(!$ok, 'deps.sh --check fails on an installation without server headers');
like($out, qr/^deps\.sh: packages: .*\bpostgresql-server-dev-$major\b/m,
	"it names postgresql-server-dev-$major");
like($out, qr{server headers \(\Q$dir\E/include-server/\S+\.h\)}, 'it says which header is missing');

# The same check on the real installation: nothing missing, nothing printed.
$ok = IPC::Run::run([ 'bash', $deps, '--check' ], '<', \undef, '>', \$out, '2>', \$err,
	init => sub { $ENV{PG_CONFIG} = $real });
ok($ok, 'deps.sh --check passes on the installation make test built against');
is($out . $err, '', 'and prints nothing');

done_testing();
