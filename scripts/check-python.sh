#!/usr/bin/env bash
# The Python package as a user gets it: build the wheel
# (scripts/build-python-wheel.sh), install it with pip into a fresh venv,
# and run the package's pytest suite (bindings/python/tests) from that venv
# against real memcached processes that the tests start on loopback ports.
#
#   scripts/check-python.sh [pytest args...]
#
# Needs python3 with venv (Debian: python3-venv) and pip's access to PyPI
# (cffi, pytest, mypy and types-cffi, and setuptools for the build). MCDS_TEST_SEED fixes the
# tests' random seed, which every run prints.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python="${PYTHON:-python3}"
scratch=$(mktemp -d /tmp/mcds-python.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

"$python" -m venv "$scratch/venv"
# The venv's pip builds the wheel too (Debian's python3 may have no pip of
# its own); the build is isolated, so the venv gets nothing from it.
wheel=$(PYTHON="$scratch/venv/bin/python" scripts/build-python-wheel.sh "$scratch/dist" | tail -n 1)
echo "built ${wheel##*/}"
"$scratch/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" "pytest>=7" mypy types-cffi
"$scratch/venv/bin/python" -c 'import mcds, sys; print("installed mcds", mcds.__version__, "in", sys.prefix)'
# The type hints users' checkers read (py.typed): the installed package
# must pass mypy --strict.
(cd "$scratch" && "$scratch/venv/bin/mypy" --strict --no-incremental -p mcds)
# From the venv's own pytest, outside the source tree: the tests import the
# installed package, as a user would.
cd "$scratch"
MCDS_REPO="$root" "$scratch/venv/bin/pytest" -p no:cacheprovider --rootdir "$root/bindings/python" \
  -c "$root/bindings/python/pyproject.toml" "$root/bindings/python/tests" "$@"
