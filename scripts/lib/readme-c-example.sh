# shellcheck shell=bash
# The README's C program, for the scripts that check a way of installing
# libmcds (scripts/check-c-install.sh: a prefix; scripts/check-deb.sh: the
# Debian packages). Source it from the repository root.
#
#   readme_c_example FILE   writes the first ```c block of the README's C
#                           section into FILE, exactly as written
#   run_c_example APP       runs APP twice from / (no LD_LIBRARY_PATH)
#                           against a fresh memcached on a free loopback
#                           port; fails unless it prints "hits = 1", then
#                           "hits = 2"

readme_c_example() {
  awk '/^## Using mcds from C/ { sect = 1 } sect && /^```c$/ { grab = 1; next }
       grab && /^```$/ { exit } grab { print }' README.md > "$1"
  [ -s "$1" ] || { echo "no C example found in README.md" >&2; return 1; }
}

run_c_example() {
  local app=$1 port mc_pid first second
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local as_root=(); [ "$(id -u)" -eq 0 ] && as_root=(-u root) # memcached refuses root without -u
  memcached "${as_root[@]}" -l 127.0.0.1 -p "$port" -U 0 -m 16 &
  mc_pid=$!
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  first=$(cd / && env -u LD_LIBRARY_PATH "$app" "127.0.0.1:$port") || true
  second=$(cd / && env -u LD_LIBRARY_PATH "$app" "127.0.0.1:$port") || true
  kill "$mc_pid" 2>/dev/null; wait "$mc_pid" 2>/dev/null || true
  echo "app run twice from /: '$first', '$second'"
  [ "$first" = "hits = 1" ] && [ "$second" = "hits = 2" ] || { echo "unexpected output" >&2; return 1; }
}
