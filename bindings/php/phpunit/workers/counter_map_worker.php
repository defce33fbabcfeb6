<?php
// One of several processes adding to one counter map at once: ITERATIONS
// times, 0.01 to the field "cents" (at scale 2) and -1 to the field "units".
// Usage: php -d extension=mcds.so counter_map_worker.php SERVERS NAME ITERATIONS
declare(strict_types=1);

[, $servers, $name, $iterations] = $argv;
$map = Mcds\Store::memcached($servers)->counterMap($name, 2);
for ($i = 0; $i < (int)$iterations; $i++) {
    $map->incrDecimal('cents', '0.01');
    $map->incr('units', -1);
}
echo "done $iterations\n";
