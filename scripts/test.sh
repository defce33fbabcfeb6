#!/usr/bin/env bash
# The project's one test command (README, CI). On a fresh Debian machine it
# installs what the tests need, then runs formatting, lints, docs and every
# test against real memcached processes that the tests start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step prints the wall time it starts at and the minutes since the run began: CI
# must stay well under 90 minutes, and the default run near 20.
started=$(date +%s)
step() { printf '\n==> [%s, +%dm] %s\n' "$(date +%T)" "$(( ($(date +%s) - started) / 60 ))" "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $* (install it by hand or run as root)" >&2; exit 1; fi
}

# What is missing is collected first and installed with one apt-get call:
# on a fresh machine, twenty separate installs ran dpkg's triggers (man-db,
# php) twenty times, about two minutes of CI.
missing=()
want_pkg() { # want_pkg <debian package> <what needs it>
  case " ${missing[*]} " in *" $1 "*) return ;; esac
  echo "missing: $2 (Debian package $1)"
  missing+=("$1")
}
need_pkg() { # need_pkg <command> <debian package>
  command -v "$1" >/dev/null 2>&1 || want_pkg "$2" "$1"
}
need_file() { # need_file <path> <debian package>
  [ -e "$1" ] || want_pkg "$2" "$1"
}

need_pkg memcached memcached
need_pkg nutcracker nutcracker # twemproxy: the text-protocol backend behind a proxy (mcds-text)
need_pkg redis-server redis-server # the peers bench compares with redis-rs (benches/benches/peers.rs)
need_pkg cc gcc            # the C ABI tests compile C
need_pkg valgrind valgrind # ... and run it under valgrind
need_pkg php php-cli       # the PHP extension's tests
need_pkg phpize php-dev    # the PHP extension, built with phpize (bindings/php)
need_pkg php-cgi php-cgi   # ... checked as CGI requests through php-cgi
need_pkg phpunit phpunit   # ... and its PHPUnit suite
need_pkg cgi-fcgi libfcgi-bin # ... and as FastCGI requests through php-fpm (scripts/check-php-fpm.sh)
# ... php-fpm of php's own version (a machine without php gets both)
if ! command -v php >/dev/null 2>&1 ||
  ! PATH="$PATH:/usr/sbin" command -v "php-fpm$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')" >/dev/null; then
  want_pkg php-fpm "php-fpm (scripts/check-php-fpm.sh)"
fi
need_pkg pecl php-pear     # the extension's PECL package: pecl package, pecl install (scripts/check-pecl.sh)
need_pkg setpriv util-linux # the PHP tests tie their processes to their own life
need_pkg python3 python3   # the Python package's tests
# ... in a fresh venv: Debian's python3 has no venv (ensurepip) without python3-venv
venv_probe=$(mktemp -d)
python3 -m venv "$venv_probe/v" >/dev/null 2>&1 || want_pkg python3-venv "python3 -m venv"
rm -rf "$venv_probe"
# mcds's ketama checked against the clients it shares pools with
# (crates/mcds-memcached/tests/ketama_peers.rs), and keys shared with PHP
# code (crates/mcds-{counter,lock}/tests/shared_keys.rs): PHP's Memcached class, and
# pylibmc for Debian's /usr/bin/python3 (not a pyenv python3 first on PATH)
php -r 'exit(class_exists("Memcached") ? 0 : 1);' 2>/dev/null ||
  want_pkg php-memcached "PHP's Memcached class"
need_file /usr/bin/python3 python3
/usr/bin/python3 -c 'import pylibmc' 2>/dev/null ||
  want_pkg python3-pylibmc "pylibmc in /usr/bin/python3"
need_pkg pkg-config pkg-config # the README's C route, built through mcds.pc
need_pkg readelf binutils  # ... and its SONAME checked
need_pkg dpkg-shlibdeps dpkg-dev # the Debian packages (scripts/build-deb.sh): their dependencies
need_pkg lintian lintian   # ... checked as Debian checks packages
need_pkg man man-db        # mcds's man pages, rendered
need_file /usr/share/bash-completion/bash_completion bash-completion # mcds's completions, loaded
if [ "${#missing[@]}" -gt 0 ]; then
  step "apt-get update, then apt-get install ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "memcached: $(memcached -V)"
echo "nutcracker: $(nutcracker -V 2>&1 | head -n 1)"
echo "redis-server: $(redis-server --version)"
scripts/check-python.sh --interpreters # the wheel is checked on each CPython 3.9-3.13 (pyenv's): fail now if one is missing

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust (https://rustup.rs) first" >&2
  exit 1
fi
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

# A fresh clone (CI) gains nothing from incremental compilation but the
# disk it takes (about 3 GB for this workspace). CI builds on the disk of the
# machine that submitted, and its linker once ran out of space there.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
disk() { df -h --output=avail,target . | tail -n 1 | awk '{print "disk free: " $1 " on " $2}'; }
disk

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "the mcds crate without its network stores: no rustls, no memcached crates, memory:// only"
cargo clippy -p mcds --no-default-features --features counter --quiet -- -D warnings
if cargo tree -q -p mcds --no-default-features --features counter -e normal | grep -E 'rustls|mcds-memcached|mcds-text'; then
  echo "mcds without the memcached and text features still builds the crates above" >&2; exit 1
fi
cargo test -p mcds-url --no-default-features --lib --quiet

step "cargo doc (warnings are errors; every reference to another mcds crate a link)"
scripts/doc.sh

# cargo-nextest, where the machine has it, runs every test binary's tests
# in one pool: a binary that waits on real memcached expiry or on valgrind
# no longer holds the next binary back (about two minutes less on 2 cores).
# It runs each test in a process of its own and skips doctests, which
# `cargo test --doc` then runs. Either way every test's output is shown.
# mdBook, for the guide's check below, is built (when missing) at the
# lowest priority while the tests run: they mostly wait on memcached, and
# its build took about a minute of CI on its own.
mdbook_log=$(mktemp)
nice -n 19 scripts/check-docs.sh --install >"$mdbook_log" 2>&1 &
mdbook_pid=$!
# (A run that stops early stops it too: cargo first, then the script.)
# (Under set -e a failing command in the trap would be the run's exit
# status: nothing to stop is not a failure.)
trap '{ pkill -TERM -P "$mdbook_pid"; kill "$mdbook_pid"; } 2>/dev/null || true' EXIT

if cargo nextest --version >/dev/null 2>&1; then
  step "cargo nextest run (then the doctests)"
  cargo nextest run --workspace --no-fail-fast --success-output final --status-level fail \
    --final-status-level slow
  cargo test --workspace --doc
else
  step "cargo test"
  cargo test --workspace -- --show-output
fi

step "cargo test --benches (every criterion bench once, as a smoke test)"
cargo test --workspace --benches

step "cargo package --workspace (every crate packages and builds from its .crate)"
# --allow-dirty: a developer runs this before committing; CI's clone is clean.
# The verification builds in the workspace's target directory, so the
# third-party crates the test step built are reused (a directory of its own
# rebuilt all of them: 3.5 of CI's minutes). cargo verifies each crate
# against the others as a registry would serve them, and takes registry
# crates to be immutable: it unpacks them into $CARGO_HOME/registry/src and
# keys their builds by name and version only, so a second run at the same
# version would verify against the first run's code. Hence every unpacked
# mcds-* is removed first (no mcds-* crate comes from crates.io), and so are
# the builds the last verification made, listed in package-verify.builds
# (the mcds-* fingerprints it added; the workspace's own are left alone).
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
fingerprints="$target_dir/debug/.fingerprint"
verify_builds="$target_dir/package-verify.builds"
if [ -f "$verify_builds" ] && [ -d "$fingerprints" ]; then
  (cd "$fingerprints" && xargs -r rm -rf -- <"$verify_builds")
fi
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/mcds-* "$target_dir/package-verify"
mcds_builds() { ls "$fingerprints" 2>/dev/null | grep '^mcds-' | sort; }
before=$(mcds_builds)
pkg_log=$(mktemp)
# mcds-benches (publish = false) is left out: its library takes the test
# kit, which has no version to package against.
if ! cargo package --workspace --exclude mcds-benches --allow-dirty >"$pkg_log" 2>&1; then
  cat "$pkg_log"
  exit 1
fi
comm -13 <(printf '%s\n' "$before") <(mcds_builds) >"$verify_builds"
grep -E '^ +(Packaging|Verifying) ' "$pkg_log" | sort -u
tail -n 2 "$pkg_log"
rm -f "$pkg_log"

step "the README's C route: install libmcds into a scratch prefix, build through pkg-config, run"
scripts/check-c-install.sh

step "the Debian packages: scripts/build-deb.sh, lintian, apt-get install ./*.deb, the C program through pkg-config, man, completion"
scripts/check-deb.sh

step "the README's Rust examples in a new project whose one mcds dependency is the mcds crate"
scripts/check-rust-quickstart.sh

step "the guide: mdbook build docs, and every link in it resolves (offline)"
wait "$mdbook_pid" || { cat "$mdbook_log"; echo "installing mdBook failed" >&2; exit 1; }
rm -f "$mdbook_log"
scripts/check-docs.sh

step "the PHP extension: phpize against libmcds.a, PHPUnit under php-cli, checks under php-cgi and php-fpm"
scripts/check-php.sh

step "the PHP extension's PECL package: pecl package, pecl install against libmcds found by pkg-config"
scripts/check-pecl.sh

step "the CLI as an operator installs it: scripts/install-cli.sh, then bash completion and man"
scripts/check-cli-install.sh

step "the Python package: the manylinux wheel and the sdist; on each CPython 3.9-3.13 pip install without Rust, the README example, pytest"
scripts/check-python.sh -q

disk
echo "target/: $(du -sh "${CARGO_TARGET_DIR:-target}" 2>/dev/null | cut -f1)"
step "all checks passed"
