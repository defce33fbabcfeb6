<?php
require __DIR__ . '/checks.inc';

foreach (stores() as $backend => $store) {
    $name = unique('lock');
    $a = $store->lock($name, 30);
    $b = new Mcds\Lock($store, $name, 30);
    check($a->acquire() && $a->isAcquired(), "$backend: acquire");
    check(!$b->acquire() && !$b->acquireWithin(0.05), "$backend: a second owner is refused");
    check($a->release() && !$a->isAcquired(), "$backend: release");
    $ran = $b->synchronized(fn () => $b->isAcquired() && !$a->acquire());
    check($ran === true, "$backend: synchronized holds the lock for the callback");
    check(!$b->isAcquired() && $a->acquire() && $a->release(), "$backend: and releases it after");
    try {
        $a->refresh();
        check(false, "$backend: refresh needs lock extend");
    } catch (Mcds\UnsupportedException $e) {
        check(true, "$backend: refresh needs lock extend");
    }
}
