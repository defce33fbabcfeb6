<?php
require __DIR__ . '/checks.inc';

foreach (stores() as $backend => $store) {
    $set = $store->set(unique('set'));
    $set->add('a');
    $set->add("b\x00");
    $set->remove('a');
    check($set->members() === ["b\x00"] && $set->contains("b\x00"), "$backend: Set");

    $w = $store->windowCounter(unique('window'), 60, 5);
    check($w->incr(3) === 3 && $w->value() === 0, "$backend: WindowCounter");

    $l = $store->rateLimiter(unique('limit'), 1, 60);
    check($l->check()->allowed && !$l->check()->allowed && !$l->peek()->allowed, "$backend: RateLimiter");

    $log = $store->eventLog(unique('log'), 10, 6);
    $at = $log->put('hello');
    check($log->fetch($at, $at) === [['at_ms' => $at, 'payload' => 'hello']], "$backend: EventLog");

    $t = $store->table(unique('table'));
    $t->set('k', 'v');
    check($t->get('k') === 'v' && $t->has('k') && $t->keys() === ['k'] && $t->delete('k') && $t->get('k') === null,
        "$backend: Table");

    $h = $store->hyperLogLog(unique('hll'));
    $h2 = $store->hyperLogLog(unique('hll2'));
    for ($i = 0; $i < 50; $i++) {
        $h->add("a$i");
        $h2->add("b$i");
    }
    $h->merge($h2);
    check(abs($h->count() - 100) <= 3, "$backend: HyperLogLog", (string)$h->count());

    $b = $store->bloomFilter(unique('bloom'), 100, 0.01);
    check($b->add('x') && $b->contains('x') && !$b->contains('y'), "$backend: BloomFilter");

    $bm = $store->activityBitmap(unique('bitmap'), 1767225600, 86400000);
    check(!$bm->set(3) && $bm->get(3) && $bm->count(0, 10) === 1 && !$bm->mark(), "$backend: ActivityBitmap");
}
