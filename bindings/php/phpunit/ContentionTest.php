<?php
declare(strict_types=1);

namespace McdsTests;

/** Two PHP processes contending for one lock on real memcached. */
final class ContentionTest extends StoreTestCase
{
    public function testTwoProcessesNeverHoldTheLockAtOnce(): void
    {
        $server = Memcached::shared();
        $name = self::name('contended');
        $iterations = 60;
        $workers = [];
        for ($w = 0; $w < 2; $w++) {
            $workers[] = Php::start(__DIR__ . '/workers/lock_worker.php', [$server->addr, $name, (string)$iterations]);
        }
        foreach ($workers as $i => $worker) {
            $r = Php::wait($worker);
            $this->assertSame(0, $r['status'], "worker $i: {$r['stderr']}");
            $this->assertSame("done $iterations\n", $r['stdout']);
        }
        $store = \Mcds\Store::memcached($server->addr);
        $this->assertSame((string)(2 * $iterations), $store->table("$name-data")->get('n'), 'no update was lost');
        $this->assertTrue($store->lock($name)->acquire(), 'the lock is free at the end');
    }
}
