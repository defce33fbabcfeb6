#!/usr/bin/env bash
# The README's Rust examples, run as a new user runs them: a new cargo
# project whose only mcds dependency is the `mcds` crate (a path
# dependency here; `cargo add mcds` once it is published), plus tokio for
# the async one. The first ```rust block of the README's "## Rust" section
# becomes src/bin/sync.rs, the second src/bin/async.rs; each runs on the
# embedded store, then twice on a memcached this script starts.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
scratch=$(mktemp -d /tmp/mcds-quickstart.XXXXXX)
mc_pid=""
cleanup() { [ -n "$mc_pid" ] && kill "$mc_pid" 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT

block() { # block <n>: the n-th ```rust block (from 1) of the README's "## Rust" section
  awk -v n="$1" '/^## / { sect = ($0 == "## Rust") } sect && /^```rust$/ { k++; if (k == n) { grab = 1; next } }
       grab && /^```$/ { exit } grab { print }' README.md
}
cargo new --quiet --vcs none --name quickstart "$scratch/app"
mkdir -p "$scratch/app/src/bin"
block 1 > "$scratch/app/src/bin/sync.rs"
block 2 > "$scratch/app/src/bin/async.rs"
for f in sync async; do
  [ -s "$scratch/app/src/bin/$f.rs" ] || { echo "no $f example in the README's Rust section" >&2; exit 1; }
done
(
  cd "$scratch/app"
  cargo add --quiet --path "$repo/crates/mcds"
  cargo add --quiet tokio --features full
  grep -A3 '^\[dependencies\]' Cargo.toml
  # A target directory of the repository's, so that a second run reuses it.
  CARGO_TARGET_DIR="$repo/target/quickstart" cargo build --quiet --bins
)
bin="$repo/target/quickstart/debug"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_root=(); [ "$(id -u)" -eq 0 ] && as_root=(-u root) # memcached refuses root without -u
memcached "${as_root[@]}" -l 127.0.0.1 -p "$port" -U 0 -m 16 &
mc_pid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

expect() { # expect <what> <output> <needle>
  printf '%s: %s\n' "$1" "$(echo "$2" | tr '\n' ' ')"
  case "$2" in *"$3"*) ;; *) echo "expected '$3'" >&2; exit 1 ;; esac
}
expect "sync, embedded" "$(env -u MCDS_URL "$bin/sync")" "hits = 1"
expect "sync, memcached, 1st" "$(MCDS_URL="memcached://127.0.0.1:$port" "$bin/sync")" "hits = 1"
expect "sync, memcached, 2nd" "$(MCDS_URL="memcached://127.0.0.1:$port" "$bin/sync")" "hits = 2"
expect "async, embedded" "$(env -u MCDS_URL "$bin/async")" "hits = 1"
expect "async, memcached" "$(MCDS_URL="memcached://127.0.0.1:$port" "$bin/async")" "hits = 3"
echo "the README's Rust examples ran with only mcds (and tokio) as dependencies"
