#!/usr/bin/env bash
# Build the Debian packages of mcds, for this machine's architecture:
#
#   scripts/build-deb.sh [OUTDIR]         (default <cargo target dir>/debian)
#
#   libmcds0      the C library under its SONAME: /usr/lib/<multiarch>/
#                 libmcds.so.0 -> libmcds.so.<version>
#   libmcds-dev   include/mcds.h, libmcds.a, the link
#                 libmcds.so for the linker, and mcds.pc for pkg-config
#   mcds          the command line, its man pages and its bash, zsh and
#                 fish completions
#
# Then `apt-get install ./OUTDIR/*.deb` installs them with their
# dependencies, `cc app.c $(pkg-config --cflags --libs mcds)` builds a C
# program, and `man mcds` and bash completion work (scripts/check-deb.sh
# checks all of it, and runs lintian).
#
# Built with dpkg-deb from a staged tree rather than with cargo-deb: the
# three packages share one cargo build, the library needs its SONAME link,
# shlibs file and ldconfig trigger, and dpkg-shlibdeps (dpkg-dev) computes
# the dependencies, as Debian's own tools do. Needs dpkg-dev and binutils.
# DEB_MAINTAINER overrides the Maintainer field.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
out="${1:-$target/debian}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
abi=$(sed -n 's/^const ABI: u32 = \([0-9]*\);/\1/p' ffi/build.rs)
debversion="$version-1"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
maintainer="${DEB_MAINTAINER:-mcds developers <mcds@example.org>}"
# The changelog's date: the last commit's, so a rebuild is the same package.
date=$(git log -1 --format=%cD 2>/dev/null || date -R)

cargo build --release --locked -p mcds-ffi -p mcds-cli
stage=$(mktemp -d /tmp/mcds-deb.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"

# Debian's copyright file (DEP-5), the same for the three packages.
copyright() {
  cat <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: mcds

Files: *
Copyright: the mcds developers
License: MIT or Apache-2.0

License: MIT
$(sed -e 's/^$/./' -e 's/^/ /' LICENSE-MIT)

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may
 not use this file except in compliance with the License.
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be
 found in the file /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
}

# The docs every package carries: copyright and a Debian changelog.
docs() { # docs <package> <tree>
  local doc="$2/usr/share/doc/$1"
  install -d "$doc"
  copyright > "$doc/copyright"
  printf '%s (%s) unstable; urgency=medium\n\n  * Release %s; see /usr/share/doc/%s/changelog.gz for what changed.\n\n -- %s  %s\n' \
    "mcds" "$debversion" "$version" "$1" "$maintainer" "$date" | gzip -9n > "$doc/changelog.Debian.gz"
  gzip -9nc CHANGELOG.md > "$doc/changelog.gz"
}

# `shlibs:Depends` of the ELF files given, as dpkg-shlibdeps reads them
# (it wants a debian/control to exist, and nothing from it).
shlibdeps() {
  local dir
  dir=$(mktemp -d "$stage/shlibdeps.XXXXXX")
  mkdir "$dir/debian"
  printf 'Source: mcds\n\nPackage: mcds\nArchitecture: any\n' > "$dir/debian/control"
  local out depends
  out=$(cd "$dir" && dpkg-shlibdeps -O -l"$stage/libmcds0/usr/lib/$multiarch" "$@") ||
    { echo "dpkg-shlibdeps failed for $*" >&2; return 1; }
  depends=$(printf '%s\n' "$out" | sed -n 's/^shlibs:Depends=//p')
  [ -n "$depends" ] || { echo "dpkg-shlibdeps found no dependencies for $*: $out" >&2; return 1; }
  printf '%s\n' "$depends"
}

# DEBIAN/control and md5sums, then the .deb.
package() { # package <name> <tree> <section> <depends> <summary> <description...>
  local name=$1 tree=$2 section=$3 depends=$4 summary=$5
  shift 5
  local size
  size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
  install -d "$tree/DEBIAN"
  {
    echo "Package: $name"
    echo "Version: $debversion"
    echo "Architecture: $arch"
    [ "$name" = "libmcds0" ] && echo "Multi-Arch: same"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $size"
    [ -n "$depends" ] && echo "Depends: $depends"
    echo "Section: $section"
    echo "Priority: optional"
    echo "Description: $summary"
    for line in "$@"; do
      if [ -z "$line" ]; then echo " ."; else echo " $line"; fi
    done
  } > "$tree/DEBIAN/control"
  (cd "$tree" && find . -path ./DEBIAN -prune -o -type f -print0 | sort -z |
    xargs -0 md5sum | sed 's| \./| |') > "$tree/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zxz --build "$tree" "$out/${name}_${debversion}_${arch}.deb" >/dev/null
  echo "built $out/${name}_${debversion}_${arch}.deb"
}

about=(
  "mcds gives distributed data structures on memcached: a lock with fencing"
  "tokens, counters, windowed counters, a rate limiter, a counter map, an"
  "event log, sets, tables, sketches and time series, each written once and"
  "run on an embedded store or on memcached servers (a pool, TLS, a unix"
  "socket, or behind twemproxy)."
)

# libmcds0: the library under its SONAME, with its shlibs file (what
# dpkg-shlibdeps gives programs linked to it) and the ldconfig trigger.
lib="$stage/libmcds0"
libdir="$lib/usr/lib/$multiarch"
install -d "$libdir"
install -m 0644 "$target/release/libmcds_ffi.so" "$libdir/libmcds.so.$version"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$libdir/libmcds.so.$version"
ln -s "libmcds.so.$version" "$libdir/libmcds.so.$abi"
docs libmcds0 "$lib"
install -d "$lib/DEBIAN"
echo "libmcds $abi libmcds0 (>= $version)" > "$lib/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$lib/DEBIAN/triggers"
lib_depends=$(shlibdeps "$libdir/libmcds.so.$version")
package libmcds0 "$lib" libs "$lib_depends" \
  "distributed data structures on memcached (C library)" "${about[@]}" "" \
  "This package holds libmcds, the C ABI of mcds (include/mcds.h)."

# libmcds-dev: what a C program builds against.
dev="$stage/libmcds-dev"
devlib="$dev/usr/lib/$multiarch"
install -d "$devlib/pkgconfig" "$dev/usr/include"
install -m 0644 include/mcds.h "$dev/usr/include/"
install -m 0644 "$target/release/libmcds_ffi.a" "$devlib/libmcds.a"
strip --strip-debug --remove-section=.comment "$devlib/libmcds.a"
ln -s "libmcds.so.$abi" "$devlib/libmcds.so"
sed -e "s|@PREFIX@|/usr|" -e "s|@LIBDIR@|\${prefix}/lib/$multiarch|" -e "s|@VERSION@|$version|" \
  -e "s|@RPATH@||" ffi/mcds.pc.in > "$devlib/pkgconfig/mcds.pc"
docs libmcds-dev "$dev"
package libmcds-dev "$dev" libdevel "libmcds0 (= $debversion)" \
  "distributed data structures on memcached (C headers)" "${about[@]}" "" \
  "This package holds the header mcds.h, the static library and mcds.pc:" \
  "build with cc app.c \$(pkg-config --cflags --libs mcds)."

# mcds: the command line, with what it generates about itself.
cli="$stage/mcds"
install -d "$cli/usr/bin" "$cli/usr/share/man/man1" "$cli/usr/share/bash-completion/completions" \
  "$cli/usr/share/zsh/vendor-completions" "$cli/usr/share/fish/vendor_completions.d"
install -m 0755 "$target/release/mcds" "$cli/usr/bin/mcds"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$cli/usr/bin/mcds"
"$cli/usr/bin/mcds" completions bash > "$cli/usr/share/bash-completion/completions/mcds"
"$cli/usr/bin/mcds" completions zsh > "$cli/usr/share/zsh/vendor-completions/_mcds"
"$cli/usr/bin/mcds" completions fish > "$cli/usr/share/fish/vendor_completions.d/mcds.fish"
"$cli/usr/bin/mcds" man "$cli/usr/share/man/man1"
gzip -9n "$cli"/usr/share/man/man1/*.1
docs mcds "$cli"
cli_depends=$(shlibdeps "$cli/usr/bin/mcds")
package mcds "$cli" utils "$cli_depends" \
  "distributed data structures on memcached (command line)" "${about[@]}" "" \
  "This package holds the mcds command: every structure from the shell, and" \
  "mcds lock run, a distributed flock(1) for cron jobs."
cd "$root"
