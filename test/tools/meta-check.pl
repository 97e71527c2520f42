#!/usr/bin/perl
# test/tools/meta-check.pl: check META.json against the PGXN Meta Spec 1.0.0
# (https://pgxn.org/spec/), and check that every file that names the
# extension's version names the Makefile's EXTVERSION.
#
# Usage: perl test/tools/meta-check.pl [META.json]   (from the top of the tree)
#
# What is checked (the spec's rules, written out here because no validator
# is packaged for Debian; PGXN's own is the CPAN module PGXN::Meta::Validator):
# - the mandatory keys: name, abstract, maintainer, license, provides,
#   meta-spec (its version "1.0.0"), version;
# - name: at least two characters, no slash, backslash, control or space
#   character; every version a semantic version (x.y.z, optional
#   -prerelease); license a known PGXN license name (or a list / map of them);
#   provides: each extension with file (an existing file) and version;
#   release_status stable, testing or unstable; tags non-empty strings of at
#   most 255 characters; prereqs: phases configure, build, test, runtime,
#   develop, relations requires, recommends, suggests, conflicts, each
#   prerequisite a version or version range; resources' known keys; no
#   unknown top-level key unless it starts with "x_" or "X_";
# - version agreement: META.json's version and each provides version,
#   ddl_notify.control's default_version, and the upstream part of
#   debian/changelog's first entry equal the Makefile's EXTVERSION.
# Prints one "ok"/"not ok" line per check, then "N passed, M failed"; exit
# status 0 only if none failed.
use strict;
use warnings;
use JSON::PP;

my $file = shift // 'META.json';
my ($pass, $fail) = (0, 0);
sub check
{
	my ($ok, $what) = @_;
	if ($ok) { $pass++; print "ok - $what\n"; }
	else { $fail++; print "not ok - $what\n"; }
	return $ok;
}
sub slurp
{
	my ($f) = @_;
	open(my $fh, '<', $f) or return undef;
	local $/;
	my $s = <$fh>;
	close $fh;
	return $s;
}

my $semver = qr/^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z]+)?$/;
my $vrange = qr/^\s*(?:(?:[<>]=?|==|!=)\s*)?(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)(?:-[0-9A-Za-z]+)?\s*$/;
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2
  bsd freebsd gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0
  mozilla_1_1 openssl perl_5 postgresql qpl_1_0 ssleay sun zlib open_source restricted
  unrestricted unknown);
my %toplevel = map { $_ => 1 } qw(name abstract description version maintainer license
  provides prereqs release_status resources generated_by no_index tags meta-spec);

my $text = slurp($file);
check(defined $text, "$file is readable") or goto done;
my $meta = eval { JSON::PP->new->relaxed(0)->decode($text) };
check(ref $meta eq 'HASH', "$file is a JSON object" . ($@ ? ": $@" : '')) or goto done;

for my $k (qw(name abstract maintainer license provides meta-spec version))
{
	check(exists $meta->{$k}, "mandatory key \"$k\" is present");
}
for my $k (sort keys %$meta)
{
	check($toplevel{$k} || scalar($k =~ /^[xX]_/), "top-level key \"$k\" is defined by the spec");
}
check(ref $meta->{'meta-spec'} eq 'HASH' && ($meta->{'meta-spec'}{version} // '') eq '1.0.0',
	'meta-spec.version is "1.0.0"');
my $name = $meta->{name} // '';
check(!ref $name && length($name) >= 2 && $name !~ m{[/\\\s[:cntrl:]]}, 'name is valid');
check(!ref $meta->{abstract} && length($meta->{abstract} // '') > 0, 'abstract is a non-empty string');
check(scalar(($meta->{version} // '') =~ $semver), 'version is a semantic version');
my $m = $meta->{maintainer};
check((!ref $m && length($m // "")) || (ref $m eq "ARRAY" && @$m && !grep({ ref $_ || !length } @$m)),
	'maintainer is a string or a non-empty list of strings');
my $l = $meta->{license};
my @lic = ref $l eq 'ARRAY' ? @$l : ref $l eq 'HASH' ? () : ($l // '');
check(ref $l eq 'HASH' ? scalar(%$l) : (@lic && !grep({ !$licenses{$_} } @lic)),
	'license names a known license');
my $p = $meta->{provides};
if (check(ref $p eq 'HASH' && scalar(%$p), 'provides is a non-empty object'))
{
	for my $ext (sort keys %$p)
	{
		my $e = $p->{$ext};
		check(ref $e eq 'HASH', "provides.$ext is an object") or next;
		check(defined $e->{file} && -f $e->{file}, "provides.$ext.file names a file of the tree");
		check(scalar(($e->{version} // '') =~ $semver), "provides.$ext.version is a semantic version");
		check(!defined $e->{docfile} || -f $e->{docfile}, "provides.$ext.docfile names a file of the tree");
		for my $k (sort keys %$e)
		{
			check(scalar($k =~ /^(file|version|abstract|docfile|[xX]_.*)$/), "provides.$ext key \"$k\" is defined by the spec");
		}
	}
}
check(!defined $meta->{release_status} || scalar($meta->{release_status} =~ /^(stable|testing|unstable)$/),
	'release_status is stable, testing or unstable');
if (defined $meta->{tags})
{
	my $t = $meta->{tags};
	check(ref $t eq 'ARRAY' && !grep({ ref $_ || !length($_) || length($_) > 255 } @$t),
		'tags are strings of 1 to 255 characters');
}
if (defined $meta->{prereqs})
{
	my $pr = $meta->{prereqs};
	if (check(ref $pr eq 'HASH', 'prereqs is an object'))
	{
		for my $phase (sort keys %$pr)
		{
			check(scalar($phase =~ /^(configure|build|test|runtime|develop)$/), "prereqs phase \"$phase\" is defined");
			for my $rel (sort keys %{ $pr->{$phase} })
			{
				check(scalar($rel =~ /^(requires|recommends|suggests|conflicts)$/), "prereqs.$phase relation \"$rel\" is defined");
				my $reqs = $pr->{$phase}{$rel};
				for my $what (sort keys %$reqs)
				{
					my $v = $reqs->{$what};
					check($v eq '0' || !grep({ $_ !~ $vrange } split(/,/, $v)),
						"prereqs.$phase.$rel.$what \"$v\" is a version or version range");
				}
			}
		}
	}
}
if (defined $meta->{resources})
{
	my $r = $meta->{resources};
	check(ref $r eq 'HASH' && !grep({ !/^(homepage|bugtracker|repository|[xX]_.*)$/ } keys %$r),
		'resources has only known keys');
}

# Version agreement: the Makefile's EXTVERSION is the one version number.
my $mk = slurp('Makefile') // '';
my ($extversion) = $mk =~ /^EXTVERSION\s*=\s*(\S+)/m;
if (check(defined $extversion, "the Makefile sets EXTVERSION"))
{
	check(($meta->{version} // '') eq $extversion, "META.json version is EXTVERSION ($extversion)");
	for my $ext (sort keys %{ ref $p eq 'HASH' ? $p : {} })
	{
		check(($p->{$ext}{version} // '') eq $extversion, "META.json provides.$ext.version is EXTVERSION");
	}
	my $control = slurp('ddl_notify.control') // '';
	check(scalar($control =~ /^default_version\s*=\s*'\Q$extversion\E'/m), "ddl_notify.control default_version is EXTVERSION");
	my $changelog = slurp('debian/changelog') // '';
	my ($debver) = $changelog =~ /^\S+ \(([^)]+)\)/;
	(my $upstream = $debver // '') =~ s/-[^-]*$//;
	$upstream =~ s/^\d+://;
	$upstream =~ s/[~+].*$//;
	check($upstream eq $extversion, "debian/changelog's version (" . ($debver // 'none') . ") is EXTVERSION");
}

done:
print "$pass passed, $fail failed\n";
exit($fail ? 1 : 0);
