#!/usr/bin/env bash
# Build the Python package (bindings/python) into OUTDIR: a manylinux wheel
# and an sdist.
#
#   scripts/build-python-wheel.sh [OUTDIR]        (default: dist/)
#
# The wheel bundles libmcds, stripped, and the cffi declarations generated
# from include/mcds.h. libmcds is linked by zig against glibc 2.17
# (cargo-zigbuild, target <arch>-unknown-linux-gnu.2.17), so the wheel is
# tagged py3-none-manylinux2014_<arch>.manylinux_2_17_<arch>: one wheel for
# every CPython 3.9+ on any Linux with glibc 2.17 or newer (RHEL/CentOS 7
# and 8, Ubuntu 18.04+, Debian 10+). auditwheel checks the library against
# that policy and sets the tag; its report is printed.
#
# The sdist (mcds-<version>.tar.gz) carries the Rust workspace as well:
# `pip install mcds-<version>.tar.gz` builds libmcds with cargo.
#
# The last line printed is the wheel's path. Needs cargo and python3 with
# venv; the build tools come from PyPI (scripts/lib/python-build-tools.sh).
#
#   MCDS_WHEEL_GLIBC=2.28   another glibc floor (manylinux_2_28)
#   MCDS_WHEEL_GLIBC=native no zig: cargo's own build for this machine;
#                           auditwheel then names the policy the machine's
#                           glibc allows (manylinux_2_34 from glibc 2.36)
#   MCDS_LIB=/path/libmcds_ffi.so   bundle that library (cargo is not run)
#   PYTHON                  the interpreter the tools' venv is made with
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/python-build-tools.sh
out="${1:-dist}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
case "$(uname -s)" in
  Linux) ;;
  *) echo "build-python-wheel.sh builds Linux wheels only (this is $(uname -s))" >&2; exit 1 ;;
esac
arch=$(uname -m)
glibc="${MCDS_WHEEL_GLIBC:-2.17}"
took() { echo "  ($(( SECONDS - $1 )) s)" >&2; }

# Where cargo puts things (honours CARGO_TARGET_DIR and build.target-dir);
# the tools' venv lives there too.
if command -v cargo >/dev/null 2>&1; then
  target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
elif [ -n "${MCDS_LIB:-}" ]; then
  target="${CARGO_TARGET_DIR:-$PWD/target}"
else
  echo "cargo not found: install Rust (https://rustup.rs), or set MCDS_LIB to a built libmcds_ffi.so" >&2
  exit 1
fi
t=$SECONDS
tools=$(python_build_tools "$target")
echo "build tools: $tools" >&2; took "$t"

strip=(--strip) # auditwheel strips the library in the wheel (binutils' strip)
if [ -n "${MCDS_LIB:-}" ]; then
  [ -f "$MCDS_LIB" ] || { echo "MCDS_LIB=$MCDS_LIB: no such file" >&2; exit 1; }
  MCDS_LIB=$(realpath "$MCDS_LIB") # the wheel is built from the unpacked sdist, elsewhere
  plat=auto
elif [ "$glibc" = native ]; then
  t=$SECONDS
  echo "libmcds: cargo build --release -p mcds-ffi" >&2
  cargo build --release -p mcds-ffi
  took "$t"
  export MCDS_LIB="$target/release/libmcds_ffi.so"
  plat=auto
else
  case "$glibc" in 2.[0-9]*) ;; *) echo "MCDS_WHEEL_GLIBC: a glibc version (2.17) or native, not '$glibc'" >&2; exit 1 ;; esac
  triple="$arch-unknown-linux-gnu"
  t=$SECONDS
  echo "libmcds: cargo zigbuild --release -p mcds-ffi --target $triple.$glibc (stripped)" >&2
  # The tools' venv first on PATH: cargo-zigbuild finds zig as
  # `python3 -m ziglang`. The profile override strips the library in the
  # build (cargo's strip = "symbols"); the target directory of $triple is
  # this build's own, so the plain release build is left as it is.
  PATH="$tools:$PATH" CARGO_PROFILE_RELEASE_STRIP=symbols \
    cargo zigbuild --release -p mcds-ffi --target "$triple.$glibc"
  took "$t"
  export MCDS_LIB="$target/$triple/release/libmcds_ffi.so"
  plat="manylinux_${glibc//./_}_$arch"
  strip=()
fi

scratch=$(mktemp -d /tmp/mcds-wheel.XXXXXX)
# setuptools builds in the source tree: start from a clean one, so a file
# removed from the sources cannot linger in the wheel, and leave it clean.
clean() { rm -rf bindings/python/build bindings/python/src/mcds.egg-info; }
clean
trap 'clean; rm -rf "$scratch"' EXIT
mkdir -p "$out"

# The sdist, then the wheel built from that sdist (as `python -m build`
# does by default), bundling $MCDS_LIB: so the sdist is known to hold the
# Python side of a build. Each build is isolated (pip fetches setuptools).
t=$SECONDS
echo "sdist and wheel: python -m build bindings/python" >&2
if ! "$tools/python" -m build --outdir "$scratch" bindings/python >"$scratch/build.log" 2>&1; then
  cat "$scratch/build.log" >&2
  exit 1
fi
took "$t"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
sdist="$scratch/mcds-$version.tar.gz"
raw=$(ls "$scratch"/mcds-"$version"-py3-none-*.whl)
case "$raw" in *-none-any.whl) echo "$raw is not a platform wheel" >&2; exit 1 ;; esac

t=$SECONDS
echo "auditwheel repair --plat $plat ${strip[*]}" >&2
rm -f "$out"/mcds-"$version"-py3-none-*.whl
PATH="$tools:$PATH" "$tools/auditwheel" repair --plat "$plat" "${strip[@]}" -w "$out" "$raw" 2>"$scratch/repair.log" ||
  { cat "$scratch/repair.log" >&2; exit 1; }
took "$t"
wheel=$(ls "$out"/mcds-"$version"-py3-none-*.whl)
case "$wheel" in *manylinux*) ;; *) echo "$wheel is not a manylinux wheel" >&2; exit 1 ;; esac
"$tools/auditwheel" show "$wheel" >&2
cp "$sdist" "$out/"
echo "sdist: $out/${sdist##*/} ($(du -k "$sdist" | cut -f1) KiB)" >&2
lib_size=$("$tools/python" -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).getinfo("mcds/libmcds.so").file_size)' "$wheel")
echo "wheel: ${wheel##*/} ($(du -k "$wheel" | cut -f1) KiB; mcds/libmcds.so $lib_size bytes, stripped)" >&2
echo "$out/${sdist##*/}"
echo "$wheel"
