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

source scripts/lib/memcached.sh

readme_c_example() {
  awk '/^## Using mcds from C/ { sect = 1 } sect && /^```c$/ { grab = 1; next }
       grab && /^```$/ { exit } grab { print }' README.md > "$1"
  [ -s "$1" ] || { echo "no C example found in README.md" >&2; return 1; }
}

run_c_example() {
  local app=$1 mc_pid mc_port mc_addr first second
  start_memcached
  first=$(cd / && env -u LD_LIBRARY_PATH "$app" "$mc_addr") || true
  second=$(cd / && env -u LD_LIBRARY_PATH "$app" "$mc_addr") || true
  kill "$mc_pid" 2>/dev/null; wait "$mc_pid" 2>/dev/null || true
  echo "app run twice from /: '$first', '$second'"
  [ "$first" = "hits = 1" ] && [ "$second" = "hits = 2" ] || { echo "unexpected output" >&2; return 1; }
}
