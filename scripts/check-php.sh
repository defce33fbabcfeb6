#!/usr/bin/env bash
# The PHP extension as its users get it: build it (scripts/build-php-ext.sh),
# then run its PHPUnit suite under php-cli, its checks as CGI requests
# through php-cgi, and requests through php-fpm (scripts/check-php-fpm.sh:
# persistent stores across requests, mcds.servers from the pool's ini),
# against real memcached processes the tests start on free loopback ports,
# with Debian's default ini (ffi.enable is left as it is).
#
#   scripts/check-php.sh              build, then test
#   scripts/check-php.sh --no-build   test bindings/php/modules/mcds.so as built
#
# Needs php-cli, php-dev, php-cgi, php-fpm, libfcgi-bin (cgi-fcgi), phpunit
# and memcached (scripts/test.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--no-build" ]; then scripts/build-php-ext.sh; fi
ext="$(pwd)/bindings/php/modules/mcds.so"
[ -f "$ext" ] || { echo "$ext not built: run scripts/build-php-ext.sh" >&2; exit 1; }
export MCDS_PHP_EXTENSION="$ext"
cd bindings/php
for suite in cli cgi; do
  echo "--- phpunit --testsuite $suite"
  php -d extension="$ext" "$(command -v phpunit)" -c phpunit.xml.dist --testsuite "$suite"
done
echo "--- php-fpm (scripts/check-php-fpm.sh)"
../../scripts/check-php-fpm.sh --no-build
