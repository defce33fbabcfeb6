<?php
require __DIR__ . '/checks.inc';

foreach (stores() as $backend => $store) {
    $c = $store->counter(unique('hits'));
    check($c->get() === 0, "$backend: a new counter is 0");
    check($c->incr() === 1 && $c->incr(41) === 42, "$backend: incr");
    check($c->decr(2) === 40 && $c->get() === 40, "$backend: decr and get");
}
