<?php
// PHPUnit bootstrap: the extension must be loaded in this process (php -d
// extension=...), and the helpers for real memcached servers and child PHP
// processes are loaded. (This directory is not called tests/: phpize
// --clean deletes tests/*.php, which is where run-tests.php puts its files.)
declare(strict_types=1);

if (!extension_loaded('mcds')) {
    fwrite(STDERR, "the mcds extension is not loaded: run phpunit as\n"
        . "  php -d extension=\$PWD/modules/mcds.so /usr/bin/phpunit ...\n"
        . "(scripts/check-php.sh does)\n");
    exit(1);
}

require __DIR__ . '/Support.php';
