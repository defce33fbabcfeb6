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

    // refresh(): the lease renewed on the server, and lost leases reported.
    $short = $store->lock($name, 1, fencing: true, ownerLabel: 'cgi');
    check($short->acquire() && $short->getFencingToken() > 0, "$backend: a fencing token");
    $short->refresh(30);
    usleep(2_100_000); // past the 1 s lease and its whole-second rounding
    check($short->isAcquired() && !$b->acquire(), "$backend: refresh() renewed the lease");
    check(str_starts_with((string)$b->getHolder(), 'cgi '), "$backend: the holder, with its owner label", (string)$b->getHolder());
    check($short->release() && $short->getHolder() === null, "$backend: released");
    $lost = $store->lock($name, 1);
    check($lost->acquire(), "$backend: a 1 s lease");
    $deadline = microtime(true) + 6;
    while (!$b->acquire() && microtime(true) < $deadline) {
        usleep(100_000);
    }
    try {
        $lost->refresh();
        check(false, "$backend: refresh() after the lease was lost throws");
    } catch (Mcds\LockLostException $e) {
        check($lost->isLost() && !$lost->isAcquired() && $b->isAcquired(), "$backend: refresh() after the lease was lost throws");
    }
    check($b->release(), "$backend: the other owner kept it");
    try {
        $store->lock($name, 1.5);
        check(false, "$backend: a fractional TTL is a ValueError");
    } catch (ValueError $e) {
        check(true, "$backend: a fractional TTL is a ValueError");
    }
}
