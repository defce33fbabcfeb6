#!/usr/bin/env bash
# The README's C route, run as written from a scratch prefix: install
# libmcds with scripts/install-libmcds.sh, build the README's C program with
# `pkg-config --cflags --libs mcds`, and run it from another directory
# against a real memcached on a free loopback port. Fails if the program
# cannot find libmcds.so.0 (no rpath, no SONAME) or prints the wrong count.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/readme-c-example.sh
scratch=$(mktemp -d /tmp/mcds-c-install.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/opt/mcds"
readme_c_example "$scratch/app.c"

scripts/install-libmcds.sh "$prefix" >/dev/null
readelf -d "$prefix/lib/libmcds.so" | grep -F 'Library soname: [libmcds.so.0]'
for f in "$prefix"/lib/libmcds.so*; do
  if [ -L "$f" ]; then echo "  ${f##*/} -> $(readlink "$f")"; else echo "  ${f##*/}"; fi
done

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config --cflags --libs mcds: $(pkg-config --cflags --libs mcds)"
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is meant
cc -std=c11 -Wall -Wextra -Werror "$scratch/app.c" $(pkg-config --cflags --libs mcds) -o "$scratch/app"
readelf -d "$scratch/app" | grep -F 'Shared library: [libmcds.so.0]'

run_c_example "$scratch/app"
echo "the README's C program ran from $prefix"
