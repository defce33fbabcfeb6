#!/usr/bin/env bash
# Build the Python package's wheel (bindings/python) into OUTDIR:
#
#   scripts/build-python-wheel.sh [OUTDIR]        (default: dist/)
#
# Builds libmcds in release mode, then the wheel, which bundles that
# libmcds.so and the cffi declarations generated from include/mcds.h. The
# wheel is a platform wheel (py3-none-<platform>); install it with
# `pip install OUTDIR/mcds-*.whl`. Set MCDS_LIB to bundle another build of
# libmcds.so instead (cargo is then not run). PYTHON picks the interpreter
# (default python3); pip fetches setuptools for the build.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
python="${PYTHON:-python3}"
if [ -z "${MCDS_LIB:-}" ]; then
  cargo build --release -p mcds-ffi
  # Where cargo put it: honours CARGO_TARGET_DIR and build.target-dir.
  target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  export MCDS_LIB="$target/release/libmcds_ffi.so"
fi
# setuptools builds in the source tree: start from a clean one, so a file
# removed from the sources cannot linger in the wheel, and leave it clean.
clean() { rm -rf bindings/python/build bindings/python/src/mcds.egg-info; }
clean
trap clean EXIT
mkdir -p "$out"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$out" ./bindings/python
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
wheel=$(ls -t "$out"/mcds-"$version"-py3-none-*.whl | head -n 1)
case "$wheel" in *-none-any.whl) echo "$wheel is not a platform wheel" >&2; exit 1 ;; esac
echo "$wheel"
