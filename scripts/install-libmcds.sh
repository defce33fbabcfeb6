#!/usr/bin/env bash
# Build libmcds in release mode and install it with its header and a
# pkg-config file:
#
#   scripts/install-libmcds.sh [PREFIX]        (default /usr/local)
#
# Installs PREFIX/lib/libmcds.so.<version> with the links libmcds.so.<ABI>
# (its SONAME, what programs load) and libmcds.so (what the linker finds),
# libmcds.a, PREFIX/include/mcds.h and PREFIX/lib/pkgconfig/mcds.pc.
#
# The pkg-config file adds an rpath for every prefix but /usr, so a program
# built with `pkg-config --libs mcds` finds libmcds at run time without
# LD_LIBRARY_PATH or ldconfig. Set MCDS_NO_RPATH=1 to leave it out (then run
# ldconfig, as root, for a prefix the loader searches, e.g. /usr/local).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/usr/local}"
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cargo build --release -p mcds-ffi
# Where cargo put it: honours CARGO_TARGET_DIR and build.target-dir.
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
abi=$(sed -n 's/^const ABI: u32 = \([0-9]*\);/\1/p' ffi/build.rs)
libdir="$prefix/lib"
install -d "$libdir" "$prefix/include" "$libdir/pkgconfig"
# Cargo names them for the crate (mcds_ffi); their C name is libmcds.
install -m 0644 "$target/release/libmcds_ffi.a" "$libdir/libmcds.a"
install -m 0755 "$target/release/libmcds_ffi.so" "$libdir/libmcds.so.$version"
ln -sfn "libmcds.so.$version" "$libdir/libmcds.so.$abi"
ln -sfn "libmcds.so.$abi" "$libdir/libmcds.so"
install -m 0644 include/mcds.h "$prefix/include/"
rpath="-Wl,-rpath,\${libdir} "
if [ "$prefix" = /usr ] || [ "${MCDS_NO_RPATH:-0}" = 1 ]; then rpath=""; fi
sed -e "s|@PREFIX@|$prefix|" -e "s|@LIBDIR@|\${prefix}/lib|" -e "s|@VERSION@|$version|" -e "s|@RPATH@|$rpath|" \
  ffi/mcds.pc.in > "$libdir/pkgconfig/mcds.pc"
echo "installed libmcds $version (SONAME libmcds.so.$abi) in $prefix"
echo "build with: cc app.c \$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs mcds) -o app"
if [ -z "$rpath" ]; then echo "no rpath: run ldconfig (as root) if $libdir is in the loader's path"; fi
