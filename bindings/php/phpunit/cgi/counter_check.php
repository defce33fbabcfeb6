<?php
require __DIR__ . '/checks.inc';

foreach (stores() as $backend => $store) {
    $c = $store->counter(unique('hits'));
    check($c->get() === 0, "$backend: a new counter is 0");
    check($c->incr() === 1 && $c->incr(41) === 42, "$backend: incr");
    check($c->decr(2) === 40 && $c->get() === 40, "$backend: decr and get");
    $d = $store->counter(unique('other'));
    check(Mcds\Counter::incrMany([[$c, 2], [$d, 5], [$c, 1]]) === [42, 5, 43] && $d->get() === 5,
        "$backend: Counter::incrMany");
    $c->reset();
    check($c->get() === 0 && $c->incr() === 1, "$backend: Counter::reset");
    $ttl = $c->withTtl(60);
    check($ttl instanceof Mcds\Counter && $ttl !== $c && $ttl->incr() === 2 && $c->get() === 2,
        "$backend: Counter::withTtl");
}
