#!/usr/bin/env bash
# An interpreter for the Python row of the peers bench: Debian's python3
# (whose python3-pylibmc is the peer) in a venv that sees its site packages,
# with this checkout's mcds wheel installed. Prints the interpreter's path.
#
#   PEERS_PYTHON=$(scripts/bench-python-env.sh) cargo bench -p mcds-benches --bench peers
#
# The wheel is built for this machine (MCDS_WHEEL_GLIBC=native) from a
# release build of libmcds; run it again after changing mcds. Needs
# python3-pylibmc and python3-venv (apt-get; scripts/test.sh installs both).
#
#   scripts/bench-python-env.sh [DIR]      (default: target/peers-python)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-${CARGO_TARGET_DIR:-target}/peers-python}"
python=/usr/bin/python3
if ! "$python" -c 'import pylibmc' 2>/dev/null; then
    echo "bench-python-env.sh: $python has no pylibmc: apt-get install python3-pylibmc" >&2
    exit 1
fi
rm -rf "$dir/wheel"
MCDS_WHEEL_GLIBC=native scripts/build-python-wheel.sh "$dir/wheel" >&2
wheel=$(ls "$dir"/wheel/mcds-*.whl | tail -n 1)
[ -x "$dir/venv/bin/python" ] || "$python" -m venv --system-site-packages "$dir/venv" >&2
# Its dependencies (cffi) once, then this wheel over any earlier one.
"$dir/venv/bin/python" -m pip install -q "$wheel" >&2
"$dir/venv/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel" >&2
"$dir/venv/bin/python" -c 'import mcds, pylibmc' >&2
echo "$(cd "$dir/venv/bin" && pwd)/python"
