#!/usr/bin/env bash
# The Debian packages as a C user or an operator takes them: build them
# (scripts/build-deb.sh), lintian reports no error, `apt-get install
# ./*.deb` installs them with their dependencies, the README's C program
# builds with `pkg-config --cflags --libs mcds` (no PKG_CONFIG_PATH, no
# rpath: the library is in the loader's path) and runs against memcached,
# and `man mcds` and bash completion work. The packages are purged at the
# end, also on failure, so the machine is as it was.
#
# Installs into this machine's root (as root, or with sudo): there is no
# container on the CI machine, and apt's own dependency resolution is what
# is checked. MCDS_DEB_KEEP=1 leaves them installed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/readme-c-example.sh
source scripts/lib/cli-checks.sh
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $* (install it by hand or run as root)" >&2; exit 1; fi
}
packages=(mcds libmcds-dev libmcds0)
for p in "${packages[@]}"; do
  if dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q ' installed$'; then
    echo "$p is already installed here; remove it first (apt-get purge ${packages[*]})" >&2
    exit 1
  fi
done
scratch=$(mktemp -d /tmp/mcds-deb-check.XXXXXX)
cleanup() {
  rm -rf "$scratch"
  if [ "${MCDS_DEB_KEEP:-0}" != 1 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

scripts/build-deb.sh "$scratch/debs"
# Errors fail; warnings and notes are listed (none is expected but
# initial-upload-closes-no-bugs: these packages close no Debian ITP bug).
lintian_rc=0
lintian --fail-on error --suppress-tags initial-upload-closes-no-bugs "$scratch"/debs/*.deb \
  >"$scratch/lintian.txt" 2>&1 || lintian_rc=$?
grep -v '^running with root privileges' "$scratch/lintian.txt" || true
[ "$lintian_rc" -eq 0 ] || { echo "lintian reports errors (exit $lintian_rc)" >&2; exit 1; }
echo "lintian: no errors"

as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$scratch"/debs/*.deb >/dev/null
for p in "${packages[@]}"; do
  echo "dpkg -L $p:"
  # Directories are left out: the files and links each package installs.
  dpkg -L "$p" | while read -r f; do [ -d "$f" ] && [ ! -L "$f" ] || echo "  $f"; done | grep -v '/man1/mcds-' || true
  echo "  (and $(dpkg -L "$p" | grep -c '/man1/mcds-') more man pages)" | grep -v '(and 0 more' || true
done

readme_c_example "$scratch/app.c"
echo "pkg-config --cflags --libs mcds: $(env -u PKG_CONFIG_PATH pkg-config --cflags --libs mcds)"
# shellcheck disable=SC2046 # word splitting of pkg-config's flags is meant
env -u PKG_CONFIG_PATH cc -std=c11 -Wall -Wextra -Werror "$scratch/app.c" \
  $(env -u PKG_CONFIG_PATH pkg-config --cflags --libs mcds) -o "$scratch/app"
readelf -d "$scratch/app" | grep -F 'Shared library: [libmcds.so.0]'
if readelf -d "$scratch/app" | grep -q RUNPATH; then echo "the app has an rpath: pkg-config gave one" >&2; exit 1; fi
run_c_example "$scratch/app"

# The installed command, not one from a build or ~/.local.
hash -r
[ "$(command -v mcds)" = /usr/bin/mcds ] || { echo "mcds on PATH is $(command -v mcds), not /usr/bin/mcds" >&2; exit 1; }
mcds --version
check_completion
check_man
echo "the .deb route works: C program, man mcds, bash completion"
