#!/usr/bin/env bash
# The project's one test command (README, CI). On a fresh Debian machine it
# installs what the tests need, then runs formatting, lints, docs and every
# test against real memcached processes that the tests start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $* (install it by hand or run as root)" >&2; exit 1; fi
}

apt_updated=0
install_pkg() { # install_pkg <debian package> <what needs it>
  if [ "$apt_updated" -eq 0 ]; then
    step "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  step "installing $1 (for $2)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}
need_pkg() { # need_pkg <command> <debian package>
  command -v "$1" >/dev/null 2>&1 || install_pkg "$2" "$1"
}
need_file() { # need_file <path> <debian package>
  [ -e "$1" ] || install_pkg "$2" "$1"
}

need_pkg memcached memcached
need_pkg cc gcc            # the C ABI tests compile C
need_pkg valgrind valgrind # ... and run it under valgrind
need_pkg php php-cli       # the PHP FFI test, and the PHP extension's tests
need_pkg phpize php-dev    # the PHP extension, built with phpize (bindings/php)
need_pkg php-cgi php-cgi   # ... checked as CGI requests through php-cgi
need_pkg phpunit phpunit   # ... and its PHPUnit suite
need_pkg setpriv util-linux # the PHP tests tie their processes to their own life
need_pkg python3 python3   # the Python ctypes test
need_pkg pkg-config pkg-config # the README's C route, built through mcds.pc
need_pkg readelf binutils  # ... and its SONAME checked
need_pkg man man-db        # mcds's man pages, rendered
need_file /usr/share/bash-completion/bash_completion bash-completion # mcds's completions, loaded
echo "memcached: $(memcached -V)"

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust (https://rustup.rs) first" >&2
  exit 1
fi
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "cargo test"
cargo test --workspace -- --show-output

step "cargo test --benches (every criterion bench once, as a smoke test)"
cargo test --workspace --benches

step "cargo package --workspace (every crate packages and builds from its .crate)"
# --allow-dirty: a developer runs this before committing; CI's clone is clean.
pkg_log=$(mktemp)
if ! cargo package --workspace --allow-dirty >"$pkg_log" 2>&1; then cat "$pkg_log"; exit 1; fi
grep -E '^ +(Packaging|Verifying) ' "$pkg_log" | sort -u
rm -f "$pkg_log"

step "the README's C route: install libmcds into a scratch prefix, build through pkg-config, run"
scripts/check-c-install.sh

step "the PHP extension: phpize against libmcds.a, PHPUnit under php-cli, checks under php-cgi"
scripts/check-php.sh

step "the CLI as an operator installs it: scripts/install-cli.sh, then bash completion and man"
scripts/check-cli-install.sh

step "all checks passed"
