#!/usr/bin/env bash
# The Python package as users get it, on every CPython it supports:
#
#   scripts/check-python.sh [pytest args...]
#   scripts/check-python.sh --interpreters    only find the five CPythons
#
# 1. Builds the manylinux wheel and the sdist once
#    (scripts/build-python-wheel.sh).
# 2. For each of CPython 3.9, 3.10, 3.11, 3.12 and 3.13: a fresh venv, and
#    `pip install --only-binary :all:` of that one wheel with PATH=/usr/bin:/bin
#    (no cargo, no rustc: nothing may be built at install time); then the
#    README's Python example, run as written from /, on a fresh memcached on
#    a free loopback port (twice: hits = 1, then 2) and on the embedded store.
# 3. mypy --strict on the installed package (the type hints users' checkers
#    read), in the venv of python3's version.
# 4. The package's whole pytest suite (bindings/python/tests) on python3's
#    version; on the four others, all of it but the five files that mostly
#    wait on real TTLs and leases, the four at once (MCDS_PYTHON_FULL=1: all
#    of it on each, one at a time).
# 5. The sdist: its Rust workspace loads with its own Cargo.lock
#    (cargo metadata --locked), and without cargo its build stops with a
#    message saying what to do. MCDS_CHECK_SDIST=1 also pip-installs it with
#    cargo, as a user would (a full release build of libmcds: about 70 s on
#    2 cores), and runs the README example on that install.
#
# The interpreters come from pyenv (`pyenv root`/versions/3.X.*, else
# ~/.pyenv/versions/3.X.*) or python3.X on PATH; a missing one is an error,
# not a skip. MCDS_PYTHON_VERSIONS="3.12 3.13" checks fewer (by hand only).
# Needs memcached, pip's access to PyPI (cffi, pytest, mypy and types-cffi;
# the build tools) and, for step 1, cargo. MCDS_TEST_SEED fixes the tests'
# random seed (one seed for all five runs), which every run prints.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch=$(mktemp -d /tmp/mcds-python.XXXXXX)
bg_pids=() # memcached processes started here: none outlives the script
cleanup() {
  local pid
  for pid in "${bg_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${bg_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
took() { echo "  ($(( SECONDS - $1 )) s)"; }

read -r -a versions <<<"${MCDS_PYTHON_VERSIONS:-3.9 3.10 3.11 3.12 3.13}"
pyenv_root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
find_python() { # find_python 3.X: the newest CPython 3.X found
  local v=$1 candidate
  for candidate in $(ls -d "$pyenv_root/versions/$v".* "$HOME/.pyenv/versions/$v".* 2>/dev/null | sort -Vr); do
    if [ -x "$candidate/bin/python$v" ]; then echo "$candidate/bin/python$v"; return; fi
  done
  candidate=$(command -v "python$v" 2>/dev/null) || return 1
  [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$v" ] || return 1
  echo "$candidate"
}
declare -A pythons
for v in "${versions[@]}"; do
  pythons[$v]=$(find_python "$v") || {
    echo "CPython $v not found (looked in $pyenv_root/versions/$v.*$([ "$pyenv_root" = "$HOME/.pyenv" ] || echo ", $HOME/.pyenv/versions/$v.*") and for python$v on PATH)." >&2
    echo "The wheel is checked on every CPython 3.9-3.13: install it (pyenv install $v)." >&2
    exit 1
  }
  echo "CPython $v: ${pythons[$v]}"
done
[ "${1:-}" = --interpreters ] && exit 0 # test.sh asks first, before its long steps
main_version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ -n "${pythons[$main_version]:-}" ] || main_version=${versions[-1]}

# Installs and runs with nothing of Rust reachable.
bare_path=/usr/bin:/bin
if found=$(PATH=$bare_path command -v cargo rustc); then
  echo "$found is in $bare_path: cannot check that the wheel installs without Rust" >&2
  exit 1
fi
bare() { env -u CARGO -u RUSTC -u RUSTUP_TOOLCHAIN -u CARGO_TARGET_DIR PATH="$bare_path" "$@"; }

t=$SECONDS
echo "==> building the wheel and the sdist (scripts/build-python-wheel.sh)"
built=$(scripts/build-python-wheel.sh "$scratch/dist")
sdist=$(tail -n 2 <<<"$built" | head -n 1)
wheel=$(tail -n 1 <<<"$built")
echo "built ${wheel##*/} and ${sdist##*/}"; took "$t"

# The README's Python example, exactly as written.
example="$scratch/example.py"
awk '/^## Using mcds from C/ { sect = 1 } sect && /^```python$/ { grab = 1; next }
     grab && /^```$/ { exit } grab { print }' README.md >"$example"
[ -s "$example" ] || { echo "no Python example found in README.md" >&2; exit 1; }

source scripts/lib/memcached.sh
run_example() { # run_example PYTHON: the README example on memcached and on the embedded store
  local py=$1 first second embedded
  start_memcached
  bg_pids+=("$mc_pid")
  first=$(cd / && bare "$py" "$example" "$mc_addr")
  second=$(cd / && bare "$py" "$example" "$mc_addr")
  kill "$mc_pid"; wait "$mc_pid" 2>/dev/null || true
  embedded=$(cd / && bare "$py" "$example")
  echo "  README example: on memcached $mc_addr: $(tr '\n' ' ' <<<"$first")/ again: $(tr '\n' ' ' <<<"$second")/ embedded: $(tr '\n' ' ' <<<"$embedded")"
  [ "$first" = $'hits = 1\nrefused: MCDS_INVALID_KEY' ] && [ "$second" = $'hits = 2\nrefused: MCDS_INVALID_KEY' ] &&
    [ "$embedded" = $'hits = 1\nrefused: MCDS_INVALID_KEY' ] || { echo "  unexpected output of the README example" >&2; return 1; }
}

for v in "${versions[@]}"; do
  t=$SECONDS
  venv="$scratch/venv-$v"
  echo "==> CPython $v: fresh venv, pip install the wheel with PATH=$bare_path, the README example"
  bare "${pythons[$v]}" -m venv "$venv"
  extra=(); [ "$v" = "$main_version" ] && extra=(mypy types-cffi)
  bare "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
    "$wheel" "pytest>=7" "${extra[@]}"
  bare "$venv/bin/python" -c 'import mcds, sys; print("  installed mcds", mcds.__version__, "(libmcds", mcds.lib_version() + ") on Python", sys.version.split()[0], "in", sys.prefix)'
  run_example "$venv/bin/python"
  took "$t"
done

t=$SECONDS
echo "==> mypy --strict -p mcds (CPython $main_version)"
(cd "$scratch" && bare "$scratch/venv-$main_version/bin/mypy" --strict --no-incremental -p mcds)
took "$t"

# The suite, from each venv's own pytest, outside the source tree (the
# tests import the installed package, as a user would): the whole suite
# alone first, then the others (see below).
export MCDS_TEST_SEED="${MCDS_TEST_SEED:-$(shuf -i 0-4294967295 -n 1)}"
run_pytest() { # run_pytest VERSION [pytest args...]
  local v=$1; shift
  (cd "$scratch" && MCDS_REPO="$root" bare "$scratch/venv-$v/bin/python" -m pytest -p no:cacheprovider \
    --rootdir "$root/bindings/python" -c "$root/bindings/python/pyproject.toml" "$root/bindings/python/tests" "$@")
}
# On the other interpreters, all but the files that mostly wait on real
# TTLs, leases and timeouts (30 of the suite's 40 s): what they test is
# libmcds, the same under every Python. MCDS_PYTHON_FULL=1 runs them too.
slow=(test_lease.py test_lock.py test_reach.py test_batches.py test_counter.py)
t=$SECONDS
echo "==> the whole pytest suite on CPython $main_version"
run_pytest "$main_version" "$@"
took "$t"
# Those four at once (each on memcached processes of its own, output kept
# and shown in order): they wait on servers more than they compute, and
# the files left out are the ones that time leases and timeouts. The whole
# suites at once made a timing test flaky; MCDS_PYTHON_FULL=1 runs one at
# a time.
t=$SECONDS
others=()
for v in "${versions[@]}"; do [ "$v" = "$main_version" ] || others+=("$v"); done
declare -A suite_pids
for v in "${others[@]}"; do
  ignore=()
  if [ "${MCDS_PYTHON_FULL:-0}" = 1 ]; then
    echo "==> the whole pytest suite on CPython $v (MCDS_PYTHON_FULL=1)"
    run_pytest "$v" "$@"
    continue
  fi
  for f in "${slow[@]}"; do ignore+=(--ignore "$root/bindings/python/tests/$f"); done
  run_pytest "$v" "${ignore[@]}" "$@" >"$scratch/pytest-$v.log" 2>&1 &
  suite_pids[$v]=$!
done
failed=0
for v in "${others[@]}"; do
  [ -n "${suite_pids[$v]:-}" ] || continue
  echo "==> the pytest suite on CPython $v, but for ${slow[*]}"
  wait "${suite_pids[$v]}" || failed=1
  cat "$scratch/pytest-$v.log"
done
[ "$failed" = 0 ] || { echo "a pytest suite failed (its output is above)" >&2; exit 1; }
took "$t"

t=$SECONDS
echo "==> the sdist ${sdist##*/}"
mkdir "$scratch/sdist"
tar -xzf "$sdist" -C "$scratch/sdist"
unpacked="$scratch/sdist/${sdist##*/}"; unpacked="${unpacked%.tar.gz}"
cmp "$unpacked/rust/include/mcds.h" include/mcds.h
cargo metadata --locked --format-version 1 --manifest-path "$unpacked/rust/Cargo.toml" >/dev/null
echo "  its Rust workspace loads with its own Cargo.lock (cargo metadata --locked)"
venv="$scratch/venv-sdist"
"${pythons[$main_version]}" -m venv "$venv"
if bare "$venv/bin/python" -m pip install --no-cache-dir --disable-pip-version-check "$sdist" >"$scratch/sdist.log" 2>&1; then
  echo "pip installed the sdist without cargo: it cannot have built libmcds" >&2; exit 1
fi
grep -q "needs Rust's cargo" "$scratch/sdist.log" || { cat "$scratch/sdist.log" >&2; echo "no clear message without cargo" >&2; exit 1; }
echo "  without cargo, pip install stops with: $(grep -o "Building mcds from source needs Rust's cargo.*" "$scratch/sdist.log" | head -n 1)"
if [ "${MCDS_CHECK_SDIST:-0}" = 1 ]; then
  echo "  MCDS_CHECK_SDIST=1: pip install of the sdist, building libmcds with cargo"
  # As a user would: cargo's target directory inside pip's build tree.
  env -u CARGO_TARGET_DIR "$venv/bin/python" -m pip install --no-cache-dir --disable-pip-version-check --quiet "$sdist"
  bare "$venv/bin/python" -c 'import mcds, sys; print("  installed mcds", mcds.__version__, "from the sdist in", sys.prefix)'
  run_example "$venv/bin/python"
else
  echo "  (MCDS_CHECK_SDIST=1 also builds it with cargo through pip install: about a minute more)"
fi
took "$t"
echo "the Python package: checked on CPython ${versions[*]}"
