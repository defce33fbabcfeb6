#!/usr/bin/env bash
# Build libmcds in release mode and install it with its header and a
# pkg-config file:  scripts/install-libmcds.sh [PREFIX]   (default /usr/local)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/usr/local}"
cargo build --release -p mc-ffi
# Where cargo put it: honours CARGO_TARGET_DIR and build.target-dir.
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
install -d "$prefix/lib" "$prefix/include" "$prefix/lib/pkgconfig"
install -m 0644 "$target/release/libmcds.a" "$prefix/lib/"
install -m 0755 "$target/release/libmcds.so" "$prefix/lib/"
install -m 0644 include/mcds.h "$prefix/include/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" ffi/mcds.pc.in > "$prefix/lib/pkgconfig/mcds.pc"
echo "installed libmcds $version in $prefix (pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs mcds)"
