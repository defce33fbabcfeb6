#!/usr/bin/env bash
# Regenerate mcds_arginfo.h from mcds.stub.php with PHP's own gen_stub.php,
# after any change to the stub; commit both.
#
#   bindings/php/gen-arginfo.sh [PHP_PARSER_DIR]
#
# gen_stub.php comes with php-dev ($(php-config --phpapi)'s build dir,
# e.g. /usr/lib/php/20220829/build/gen_stub.php). It needs nikic/PHP-Parser
# 4.15.1 beside it, which it downloads itself where it can reach GitHub;
# Debian packages no PHP-Parser, so offline give a checkout of its v4.15.1
# tag (the directory holding lib/PhpParser) as PHP_PARSER_DIR. Nothing of
# either is committed: the copy is made in a scratch directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gen=/usr/lib/php/$(php-config --phpapi)/build/gen_stub.php
[ -r "$gen" ] || gen=$(find /usr/lib/php /usr/local/lib/php -name gen_stub.php -path '*build*' 2>/dev/null | head -n 1)
[ -r "$gen" ] || { echo "gen_stub.php not found: apt-get install php-dev" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "$gen" "$scratch/gen_stub.php"
version=$(sed -n 's/.*\$version = "\([0-9.]*\)";.*/\1/p' "$gen" | head -n 1)
if [ -n "${1:-}" ]; then ln -s "$(cd "$1" && pwd)" "$scratch/PHP-Parser-$version"; fi
cd "$here"
php "$scratch/gen_stub.php" --force-regeneration mcds.stub.php
