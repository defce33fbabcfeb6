#!/usr/bin/env bash
# The README's C route, run as written from a scratch prefix: install
# libmcds with scripts/install-libmcds.sh, build the README's C program with
# `pkg-config --cflags --libs mcds`, and run it from another directory
# against a real memcached on a free loopback port. Fails if the program
# cannot find libmcds.so.0 (no rpath, no SONAME) or prints the wrong count.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch=$(mktemp -d /tmp/mcds-c-install.XXXXXX)
mc_pid=""
cleanup() { [ -n "$mc_pid" ] && kill "$mc_pid" 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT
prefix="$scratch/opt/mcds"

# The first ```c block of the README's C section, exactly as written.
awk '/^## Using mcds from C/ { sect = 1 } sect && /^```c$/ { grab = 1; next }
     grab && /^```$/ { exit } grab { print }' README.md > "$scratch/app.c"
[ -s "$scratch/app.c" ] || { echo "no C example found in README.md" >&2; exit 1; }

scripts/install-libmcds.sh "$prefix" >/dev/null
readelf -d "$prefix/lib/libmcds.so" | grep -F 'Library soname: [libmcds.so.0]'
for f in "$prefix"/lib/libmcds.so*; do
  if [ -L "$f" ]; then echo "  ${f##*/} -> $(readlink "$f")"; else echo "  ${f##*/}"; fi
done

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config --cflags --libs mcds: $(pkg-config --cflags --libs mcds)"
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is meant
cc -std=c11 -Wall -Wextra -Werror "$scratch/app.c" $(pkg-config --cflags --libs mcds) -o "$scratch/app"
readelf -d "$scratch/app" | grep -F 'Shared library: [libmcds.so.0]'

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_root=(); [ "$(id -u)" -eq 0 ] && as_root=(-u root) # memcached refuses root without -u
memcached "${as_root[@]}" -l 127.0.0.1 -p "$port" -U 0 -m 16 &
mc_pid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

cd / # away from the build, with no LD_LIBRARY_PATH
first=$(env -u LD_LIBRARY_PATH "$scratch/app" "127.0.0.1:$port")
second=$(env -u LD_LIBRARY_PATH "$scratch/app" "127.0.0.1:$port")
echo "app run twice from /: '$first', '$second'"
[ "$first" = "hits = 1" ] && [ "$second" = "hits = 2" ] || { echo "unexpected output" >&2; exit 1; }
cd "$root"
echo "the README's C program ran from $prefix"
