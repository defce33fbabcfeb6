<?php
// One of several processes contending for one lock: each iteration reads a
// number from a table, sleeps, and writes it back plus one, inside
// $lock->synchronized(). Without mutual exclusion updates get lost.
// Usage: php -d extension=mcds.so lock_worker.php SERVERS NAME ITERATIONS
declare(strict_types=1);

[, $servers, $name, $iterations] = $argv;
$store = Mcds\Store::memcached($servers);
$lock = $store->lock($name, 10);
$table = $store->table("$name-data");
$inside = $store->counter("$name-inside");
for ($i = 0; $i < (int)$iterations; $i++) {
    $lock->synchronized(function () use ($table, $inside) {
        if ($inside->incr() !== 1) {
            fwrite(STDERR, "two holders at once\n");
            exit(2);
        }
        $n = (int)($table->get('n') ?? '0');
        usleep(random_int(0, 2000));
        $table->set('n', (string)($n + 1));
        $inside->decr();
    });
}
echo "done $iterations\n";
