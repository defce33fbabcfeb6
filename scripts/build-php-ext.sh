#!/usr/bin/env bash
# Build the mcds PHP extension (bindings/php) with phpize, linking a
# release libmcds statically:
#
#   scripts/build-php-ext.sh          -> bindings/php/modules/mcds.so
#
# Needs php-dev (phpize, php-config). Load the result with
# `php -d extension=$PWD/bindings/php/modules/mcds.so`, or install it with
# `make -C bindings/php install` and an ini file with `extension=mcds`.
# MCDS_PHP_DYNAMIC=1 MCDS_PREFIX=DIR links DIR/lib/libmcds.so (installed
# there by scripts/install-libmcds.sh DIR, with its SONAME link
# libmcds.so.0) with an rpath instead; config.m4 says why static is the
# default.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cargo build --release -p mcds-ffi
# Where cargo put libmcds: honours CARGO_TARGET_DIR and build.target-dir.
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
cd bindings/php
configure_args=(--with-mcds="$root" --with-mcds-libdir="$target/release")
if [ "${MCDS_PHP_DYNAMIC:-0}" = 1 ]; then
  # cargo's target dir has libmcds_ffi.so, not the libmcds.so and
  # libmcds.so.0 the linker and loader look for: link an installed copy.
  [ -n "${MCDS_PREFIX:-}" ] || { echo "MCDS_PHP_DYNAMIC=1 needs MCDS_PREFIX (scripts/install-libmcds.sh DIR)" >&2; exit 1; }
  configure_args=(--with-mcds="$MCDS_PREFIX" --enable-mcds-dynamic)
fi
# phpize and configure again when config.m4 or the arguments changed.
stamp=".configured-with"
if [ ! -f configure ] || [ ! -f Makefile ] || [ config.m4 -nt configure ] \
  || [ "$(cat "$stamp" 2>/dev/null)" != "${configure_args[*]}" ]; then
  log=$(mktemp)
  if ! { phpize && ./configure "${configure_args[@]}"; } >"$log" 2>&1; then cat "$log"; rm -f "$log"; exit 1; fi
  rm -f "$log"
  echo "${configure_args[*]}" > "$stamp"
fi
# make does not know that mcds.so depends on libmcds.a: relink every time.
rm -f modules/mcds.so mcds.la
make -j"$(nproc)" >/dev/null
loaded=$(php -d extension="$(pwd)/modules/mcds.so" -r 'echo "mcds ", phpversion("mcds"), ", libmcds ", Mcds\version();')
echo "built $(pwd)/modules/mcds.so ($loaded)"
