#!/usr/bin/env bash
# The PHP extension's PECL package (bindings/php/package.xml), as a user
# installs it: libmcds installed into a scratch prefix
# (scripts/install-libmcds.sh) and found by pkg-config through
# PKG_CONFIG_PATH, `pecl package` in a scratch copy of bindings/php, then
# `pecl install mcds-<version>.tgz` (phpize, configure, make, install: the
# real command), the extension it installed loaded with
# `php -d extension=...` and a smoke script run against a real memcached on
# a free loopback port, and `pecl uninstall mcds`.
#
# Nothing outside the scratch directory is written: pecl runs with a
# configuration file of its own (-c: its registry, build and download
# directories, php.ini) and finds a php-config first on PATH that is
# Debian's but for --extension-dir and --prefix, which pecl installs the
# built mcds.so under. The extension directory and PEAR registry of the
# machine are compared before and after.
#
# Also checks that package.xml lists every source config.m4 builds (mcds.c
# and the files of mcds_classes.h) and every header, and that its version is the extension's (PHP_MCDS_VERSION).
# Needs php-pear (pecl), php-dev, pkg-config, memcached, util-linux
# (scripts/test.sh installs them). Runs cargo (scripts/install-libmcds.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
command -v pecl >/dev/null || { echo "pecl not found (apt-get install php-pear)" >&2; exit 1; }
command -v pkg-config >/dev/null || { echo "pkg-config not found (apt-get install pkg-config)" >&2; exit 1; }

tmp=$(mktemp -d)
mc_pid=""
system_ext_dir=$(php-config --extension-dir)
had_system_ext=0
if [ -e "$system_ext_dir/mcds.so" ]; then had_system_ext=1; fi
cleanup() {
  local status=$?
  if [ -n "$mc_pid" ]; then kill -KILL "$mc_pid" 2>/dev/null || true; wait "$mc_pid" 2>/dev/null || true; fi
  # Should a pecl ever install into the machine's extension directory after
  # all (the check then fails), take back what it put there.
  if [ "$had_system_ext" = 0 ] && [ -e "$system_ext_dir/mcds.so" ]; then
    echo "check-pecl: removing $system_ext_dir/mcds.so, which pecl installed there" >&2
    rm -f "$system_ext_dir/mcds.so"
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "check-pecl: FAILED: $*" >&2; exit 1; }

# The machine's own extension directory and PEAR registry, to compare after.
# (Where PEAR's own files are, without asking pecl: any pecl command run with
# the machine's configuration writes its caches, .depdb and the like, there.)
system_php_dir=$(dirname "$(php -r 'echo stream_resolve_include_path("pearcmd.php");')")
system_state() { # ('..' left out: the parents change for reasons of their own)
  { ls -laR --time-style=full-iso "$system_ext_dir" "$system_php_dir/.registry" "$system_php_dir/.channels"
    ls -la --time-style=full-iso "$system_php_dir"; } 2>&1 | grep -v ' \.\.$'
}
before=$(system_state)

# package.xml against config.m4 and the headers.
pkg="$root/bindings/php/package.xml"
listed=$(sed -n 's/.*<file name="\([^"]*\)".*/\1/p' "$pkg" | sort)
# config.m4 builds mcds.c and the file of each class in mcds_classes.h (the
# same sed as config.m4's).
built=$({ echo mcds.c; sed -n '/^#define MCDS_HANDLE_CLASSES/,/^#endif/s/^.*X(.*,.*, *\(.*\)).*$/\1.c/p' \
  "$root/bindings/php/mcds_classes.h"; } | sort -u)
headers=$(cd "$root/bindings/php" && ls ./*.h | sed 's|^\./||' | grep -v '^config\.h$' | sort)
missing=$(comm -13 <(echo "$listed") <(printf '%s\n%s\nconfig.m4\n' "$built" "$headers" | sort -u))
[ -z "$missing" ] || fail "package.xml does not list: $missing"
version=$(sed -n 's/^#define PHP_MCDS_VERSION "\(.*\)"/\1/p' "$root/bindings/php/php_mcds.h")
pkg_version=$(sed -n '/<version>/,/<\/version>/s/.*<release>\(.*\)<\/release>.*/\1/p' "$pkg")
[ "$version" = "$pkg_version" ] || fail "package.xml's release $pkg_version is not PHP_MCDS_VERSION $version"

# libmcds, found by pkg-config.
scripts/install-libmcds.sh "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
echo "pkg-config: mcds $(pkg-config --modversion mcds): $(pkg-config --cflags --libs mcds)"

# pecl's configuration: every directory in the scratch directory (used by
# pecl package and pecl install alike).
pear="$tmp/pear"
mkdir -p "$pear/ext" "$tmp/bin"
touch "$pear/php.ini"
php -r '
$r = $argv[1];
$dirs = ["php_dir" => "$r/php", "data_dir" => "$r/data", "www_dir" => "$r/www", "cfg_dir" => "$r/cfg",
    "ext_dir" => "$r/ext", "doc_dir" => "$r/doc", "test_dir" => "$r/test", "bin_dir" => "$r/bin",
    "man_dir" => "$r/man", "metadata_dir" => "$r/metadata", "php_ini" => "$r/php.ini"];
$c = $dirs + ["temp_dir" => "$r/temp", "cache_dir" => "$r/cache", "download_dir" => "$r/download",
    "__channels" => ["pecl.php.net" => $dirs, "__uri" => [], "doc.php.net" => []]];
file_put_contents("$r/pear.conf", "#PEAR_Config 0.9\n" . serialize($c));' "$pear"

# pecl package, in a copy of the sources package.xml lists.
mkdir "$tmp/src"
(cd "$root/bindings/php" && cp package.xml $listed "$tmp/src/")
# The copy is released today: pecl warns about a <date> that is not today
# (its channel validator), so a check run after midnight failed on a
# package.xml dated the day before. The committed date is the last
# release's; it must still be a date.
grep -q -E '<date>[0-9]{4}-[0-9]{2}-[0-9]{2}</date>' "$tmp/src/package.xml" || fail "package.xml has no <date>YYYY-MM-DD</date>"
sed -i -E "s|<date>[0-9-]+</date>|<date>$(date +%F)</date>|" "$tmp/src/package.xml"
(cd "$tmp/src" && pecl -c "$pear/pear.conf" package >"$tmp/package.log" 2>&1) || { cat "$tmp/package.log"; fail "pecl package"; }
if grep -i -E 'warning|error' "$tmp/package.log"; then fail "pecl package warned (above)"; fi
tgz="$tmp/src/mcds-$version.tgz"
[ -f "$tgz" ] || { cat "$tmp/package.log"; fail "pecl package made no $tgz"; }
echo "pecl package: $(basename "$tgz"), $(tar -tzf "$tgz" | grep -c '^mcds-') files, $(du -k "$tgz" | cut -f1) KiB"

# pecl install, into the scratch directory only. pecl installs the built mcds.so where `make install` put it under php-config's
# --prefix (its ext_dir setting aside): both point into the scratch directory.
real_php_config=$(command -v php-config)
cat >"$tmp/bin/php-config" <<SH
#!/bin/sh
case "\$1" in
  --extension-dir) echo "$pear/ext"; exit 0 ;;
  --prefix) echo "$pear"; exit 0 ;;
esac
exec "$real_php_config" "\$@"
SH
chmod +x "$tmp/bin/php-config"
started=$(date +%s)
if ! PATH="$tmp/bin:$PATH" pecl -c "$pear/pear.conf" install "$tgz" </dev/null >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  fail "pecl install $(basename "$tgz")"
fi
grep -E '^running: .*configure|^checking for (libmcds|mcds\.h)|^Installing|^install ok' "$tmp/install.log" | sed 's/^/  /'
if grep -E '^(PHP )?(Warning|Fatal|Notice|Deprecated)|^ERROR' "$tmp/install.log"; then fail "pecl install printed the errors above"; fi
grep -q "^checking for libmcds with pkg-config (mcds.pc)... libmcds $version in $tmp/prefix/lib" "$tmp/install.log" \
  || fail "configure did not find libmcds through pkg-config"
ext="$pear/ext/mcds.so"
[ -f "$ext" ] || fail "pecl install left no $ext"
if ldd "$ext" | grep -q libmcds; then fail "mcds.so links libmcds.so: $(ldd "$ext")"; fi
echo "pecl install: $ext in $(( $(date +%s) - started ))s, libmcds linked statically (ldd: $(ldd "$ext" | awk '{print $1}' | tr '\n' ' '))"

# A smoke test of what pecl installed, against a real memcached.
source "$root/scripts/lib/memcached.sh"
start_memcached || fail "memcached did not start"
cat >"$tmp/smoke.php" <<'PHP'
<?php
$store = Mcds\Store::fromConfig(persistentId: 'pecl');
$hits = $store->counter('pecl-hits');
$lock = $store->lock('pecl-lock', ttl: 5);
$set = $store->set('pecl-set');
$set->add('a');
printf("mcds %s (libmcds %s): hits %d, lock %s, set %s, persistent %s\n", phpversion('mcds'), Mcds\version(),
    $hits->incr() + $hits->incr(), $lock->synchronized(fn () => 'ran'), json_encode($set->members()),
    var_export($store->isPersistent(), true));
PHP
smoke=$(php -d extension="$ext" -d mcds.servers="$mc_addr" "$tmp/smoke.php")
echo "smoke: $smoke"
[ "$smoke" = "mcds $version (libmcds $version): hits 3, lock ran, set [\"a\"], persistent true" ] || fail "the smoke script printed: $smoke"

# pecl uninstall, through the registry pecl install wrote.
PATH="$tmp/bin:$PATH" pecl -c "$pear/pear.conf" uninstall mcds </dev/null >"$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log"; fail "pecl uninstall mcds"; }
[ ! -e "$ext" ] || fail "pecl uninstall left $ext"
echo "pecl uninstall: $(grep '^uninstall ok' "$tmp/uninstall.log")"

after=$(system_state)
[ "$before" = "$after" ] || fail "the machine's extension directory or PEAR registry changed: $(diff <(echo "$before") <(echo "$after"))"
echo "check-pecl: ok (nothing written to $system_ext_dir or $system_php_dir)"
