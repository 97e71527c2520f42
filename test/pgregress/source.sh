# test/pgregress/source.sh: PostgreSQL's regression suite, its source and its
# C helpers, for the scripts that run it (test/pgregress/run.sh, make
# test-pg-regress; test/replay/run.sh, make test-replay).  Sourced, never run.
#
# find_source sets SRC (the unpacked Debian source package postgresql-MAJOR)
# and SRC_VERSION; build_regress_so sets REGRESS_SO (regress.so, refint.so,
# autoinc.so built with PGXS; with "soft", a build that fails leaves it empty
# instead of stopping, for make test-replay on a version whose own source
# Debian does not serve, run with another version's files).  How and why:
# steps 1 and 2 of run.sh's header.
# The caller sources test/tools/pg-env.sh first and sets CACHE (the cache
# directory; both scripts use test/pgregress/cache by default) and REPO.
# say is defined here unless the caller has one.

# shellcheck disable=SC2034
declare -F say >/dev/null || say() { printf '== %s\n' "$*"; }

# ---------------------------------------------------------------------------
# 1. the source
# ---------------------------------------------------------------------------

# deb-src entries for every deb entry of the machine's apt sources.
derive_sources()
{
	local out_list=$1 out_parts=$2 f
	: >"$out_list"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		sed -n -E 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$f" >>"$out_list"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		# deb822 stanzas: keep those of Types "deb" that are not disabled,
		# with Types: deb-src and every other field as it is.
		awk '
			function flush() {
				if (n > 0 && isdeb && !disabled) {
					print "Types: deb-src"
					for (i = 1; i <= n; i++) print lines[i]
					print ""
				}
				n = 0; isdeb = 0; disabled = 0
			}
			/^[[:space:]]*#/		{ next }
			/^[[:space:]]*$/		{ flush(); next }
			/^Types:/				{ if ($0 ~ /[[:space:]]deb([[:space:]]|$)/) isdeb = 1; next }
			/^Enabled:[[:space:]]*no/	{ disabled = 1 }
			{ lines[++n] = $0 }
			END { flush() }' "$f" >"$out_parts/${f##*/}"
	done
}

fetch_source()
{
	local pkg=postgresql-$PG_MAJOR installed apt_dir opts versions v dsc

	if ! command -v dpkg-source >/dev/null 2>&1; then
		is_root || die "dpkg-source is missing: sudo apt-get install -y --no-install-recommends dpkg-dev"
		say "installing dpkg-dev (dpkg-source unpacks the source package)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev </dev/null ||
			{ apt-get update -qq </dev/null &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev </dev/null; } ||
			die "could not install dpkg-dev"
	fi

	installed=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	apt_dir=$CACHE/apt
	mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$CACHE/src"
	rm -f "$apt_dir/sources.list.d/"*
	derive_sources "$apt_dir/sources.list" "$apt_dir/sources.list.d"
	opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
		-o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
		-o "Dir::State::Lists=$apt_dir/lists"
		-o "Dir::Cache=$apt_dir/cache"
		-o "APT::Sandbox::User=$(id -un)")

	say "fetching the source of $pkg (installed: ${installed:-none}) with a private apt configuration in ${apt_dir#"$REPO"/}"
	# A source without a Sources index fails its part of the update; what
	# matters is whether the package can then be found.
	apt-get "${opts[@]}" -qq update </dev/null || echo "   (apt-get update reported errors; going on)"
	versions=$(apt-cache "${opts[@]}" showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' |
		sort -u | sort -r -V)
	[[ -n $versions ]] || die "no deb-src entry of this machine has $pkg"
	# the installed version first, then the others of its major version
	for v in $(printf '%s\n' ${installed:+"$installed"} $versions | awk '!seen[$0]++'); do
		[[ $v == "$PG_MAJOR".* ]] || continue
		if [[ -f $CACHE/src/$pkg-$v/.complete ]]; then
			SRC=$CACHE/src/$pkg-$v
			SRC_VERSION=$v
			return 0
		fi
		rm -rf "$CACHE/src/dl"
		mkdir -p "$CACHE/src/dl"
		if (cd "$CACHE/src/dl" && apt-get "${opts[@]}" -qq source --download-only "$pkg=$v" </dev/null); then
			dsc=$(echo "$CACHE/src/dl/"*.dsc)
			rm -rf "$CACHE/src/$pkg-$v"
			dpkg-source --no-check -x "$dsc" "$CACHE/src/$pkg-$v" >/dev/null ||
				die "dpkg-source could not unpack $dsc"
			rm -rf "$CACHE/src/dl"
			touch "$CACHE/src/$pkg-$v/.complete"
			SRC=$CACHE/src/$pkg-$v
			SRC_VERSION=$v
			# remember the choice, so that later runs need no apt at all
			[[ -z $installed ]] || echo "$v" >"$CACHE/src/chosen-for-$installed"
			return 0
		fi
		echo "   ($pkg $v could not be downloaded; trying an older one)"
	done
	die "could not download any source of $pkg $PG_MAJOR.x"
}

# The cached source chosen for the installed version, or fetch it.
find_source()
{
	local pkg=postgresql-$PG_MAJOR installed chosen
	installed=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	if [[ -n $installed && -f $CACHE/src/chosen-for-$installed ]]; then
		chosen=$(cat "$CACHE/src/chosen-for-$installed")
		if [[ -f $CACHE/src/$pkg-$chosen/.complete ]]; then
			SRC=$CACHE/src/$pkg-$chosen
			SRC_VERSION=$chosen
			return 0
		fi
	fi
	fetch_source
}

# ---------------------------------------------------------------------------
# 2. regress.so
# ---------------------------------------------------------------------------

build_regress_so()
{
	local dir=$CACHE/build/$SRC_VERSION
	mkdir -p "$dir"
	cp -p "$SRC/src/test/regress/regress.c" "$SRC/contrib/spi/refint.c" "$SRC/contrib/spi/autoinc.c" "$dir/"
	cat >"$dir/Makefile" <<'EOF'
# The C modules PostgreSQL's regression suite loads (src/test/regress/
# GNUmakefile builds the same three), built with PGXS
MODULES = regress refint autoinc
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
EOF
	say "building regress.so, refint.so and autoinc.so from $SRC_VERSION with PGXS"
	if ! make -s -C "$dir" PG_CONFIG="$PG_CONFIG" </dev/null >"$dir/build.log" 2>&1; then
		# ${1:-}: "soft", the source is another major version's (replay)
		[[ ${1:-} == soft ]] || { cat "$dir/build.log"; die "building regress.so failed"; }
		grep -m 3 'error' "$dir/build.log" || true
		say "regress.so could not be built from another version's source ($dir/build.log): the statements that load it fail on the source and are not replayed"
		REGRESS_SO=()
		return 0
	fi
	REGRESS_SO=("$dir/regress.so" "$dir/refint.so" "$dir/autoinc.so")
}
