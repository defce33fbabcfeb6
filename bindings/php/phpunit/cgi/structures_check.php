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

    $calls = 0;
    $views = $store->viewCounter(unique('views'), function () use (&$calls) {
        $calls++;
        return 100;
    });
    check($views->view() === 101 && $views->view() === 102 && $calls === 1, "$backend: ViewCounter loads once");
    $thrown = new DomainException('db down');
    try {
        $store->viewCounter(unique('views'), fn () => throw $thrown)->get();
        check(false, "$backend: a loader's exception reaches the caller");
    } catch (DomainException $e) {
        check($e === $thrown, "$backend: a loader's exception reaches the caller");
    }

    $shadow = $store->shadowCounter(unique('shadow'), 3600);
    check($shadow->incr(2) === 2 && $shadow->value() === 0, "$backend: ShadowCounter");

    $set->addMany(['x', 'y', 'z']);
    $set->removeMany(['x']);
    check($set->members() === ["b\x00", 'y', 'z'] && is_bool($set->compact()), "$backend: Set batches");
    $set->clear();
    check($set->members() === [], "$backend: Set::clear");

    $sharded = $store->shardedSet(unique('sharded'), 4);
    $sharded->addMany(['a', 'b', 'c']);
    $sharded->remove('b');
    $members = $sharded->members();
    sort($members);
    check($members === ['a', 'c'] && $sharded->contains('a'), "$backend: ShardedSet");

    $ints = $store->intArray(unique('ints'));
    $ints->add(3, -1, 2);
    $ints->remove(2);
    check($ints->members() === [3, -1] && $ints->contains(-1), "$backend: IntArray");

    $t->set('k2', 'v2');
    check($t->entries() === ['k2' => 'v2'], "$backend: Table::entries");

    $log->putAt($at - 1000, 'earlier');
    [$events, $cursor] = $log->since();
    [$none, $same] = $log->since($cursor);
    check(count($events) === 2 && $events[0]['payload'] === 'earlier' && $none === [] && $same == $cursor,
        "$backend: EventLog::putAt and since");

    check(abs($h->countUnion($h2) - 100) <= 3, "$backend: HyperLogLog::countUnion");

    $bm = $store->activityBitmap(unique('bitmap'), 1767225600, 86400000);
    check(!$bm->set(3) && $bm->get(3) && $bm->count(0, 10) === 1 && !$bm->mark(), "$backend: ActivityBitmap");

    check($b->addMany(['x', 'p', 'q', 'p']) === 2 && $b->containsMany(['p', 'y', 'q']) === [true, false, true],
        "$backend: BloomFilter::addMany and containsMany");
    $b->clear();
    check($b->containsMany(['x', 'p']) === [false, false], "$backend: BloomFilter::clear");
    $h3 = $store->hyperLogLog(unique('hll3'));
    check($h3->addMany(['a', 'b', 'c']) && !$h3->addMany(['a']) && $h3->count() === 3, "$backend: HyperLogLog::addMany");
    $h3->clear();
    check($h3->count() === 0, "$backend: HyperLogLog::clear");
    $derived = [$set->withTtl(60), $b->withTtl(60), $h3->withTtl(60), $bm->withTtl(60)];
    $derived[0]->add('t');
    $derived[1]->add('t');
    $derived[2]->add('t');
    $derived[3]->set(4);
    check($set->members() === ['t'] && $b->contains('t') && $h3->count() === 1 && $bm->get(4),
        "$backend: withTtl of Set, BloomFilter, HyperLogLog and ActivityBitmap");
}
