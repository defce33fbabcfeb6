<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Counter;
use Mcds\Lock;

/**
 * Counter::withKey and Lock::withKey: structures on the exact key another
 * application uses. The other application is php-memcached (\Memcached),
 * in this same process, on the same real memcached.
 */
final class ExactKeyTest extends StoreTestCase
{
    /** A php-memcached client of $server (\Memcached, not McdsTests\Memcached). */
    private static function client(Memcached $server): \Memcached
    {
        self::assertTrue(class_exists(\Memcached::class), 'php-memcached is not loaded: apt-get install php-memcached');
        [$host, $port] = explode(':', $server->addr);
        $m = new \Memcached();
        self::assertTrue($m->addServer($host, (int)$port));
        return $m;
    }

    public function testPhpMemcachedAndCounterWithKeyIncrementOneCounterAndLoseNothing(): void
    {
        $server = new Memcached(); // its own server: the key is exactly "hits"
        $m = self::client($server);
        $store = \Mcds\Store::memcached($server->addr);
        $hits = Counter::withKey($store, 'hits');
        // A store's prefix is not applied: the same key.
        $fromApp = Counter::withKey($store->withPrefix('app/'), 'hits');
        $this->assertSame(0, $hits->get(), 'a missing key reads 0');

        // php-memcached's increment fails on a missing key (text protocol):
        // PHP code sharing a counter creates it with add.
        $this->assertFalse($m->increment('hits', 1));
        $this->assertTrue($m->add('hits', 1));
        // Interleaved, each side sees the other's last increment: every
        // value returned is the previous one plus its own delta.
        $n = 500;
        $expected = [];
        $seen = [];
        $total = 1;
        for ($i = 0; $i < $n; $i++) {
            $seen[] = $hits->incr(2);
            $expected[] = $total += 2;
            $seen[] = $m->increment('hits', 1);
            $expected[] = $total += 1;
            $seen[] = $fromApp->incr();
            $expected[] = $total += 1;
            $seen[] = $m->decrement('hits', 1);
            $expected[] = $total -= 1;
        }
        $this->assertSame($expected, $seen, 'an increment was lost or not seen by the other side');
        $this->assertSame(1 + 3 * $n, $total);
        $this->assertSame($total, $hits->get());
        $this->assertSame($total, $m->get('hits'), 'PHP reads what mcds counts');
        $this->assertSame(\Memcached::RES_SUCCESS, $m->getResultCode());

        $this->assertSame($total - 10, $hits->decr(10));
        $this->assertSame($total - 10, $m->get('hits'));
        $hits->reset();
        $this->assertFalse($m->get('hits'), 'reset deleted the key');
        $this->assertSame(\Memcached::RES_NOTFOUND, $m->getResultCode());
        $this->assertSame(0, $fromApp->get());

        // php-memcached's OPT_PREFIX_KEY is part of the key: pass it in $key.
        $m->setOption(\Memcached::OPT_PREFIX_KEY, 'billing:');
        $this->assertTrue($m->add('hits', 40));
        $this->assertSame(41, Counter::withKey($store, 'billing:hits')->incr());
        $this->assertSame(41, $m->get('hits'));
        $this->assertSame(0, $hits->get(), 'unprefixed "hits" is another key');

        // Something that is not a number under the key.
        $m->setOption(\Memcached::OPT_PREFIX_KEY, '');
        $this->assertTrue($m->set('hits', 'many'));
        try {
            $hits->get();
            $this->fail('read a value that is not a number');
        } catch (\Mcds\CorruptException $e) {
            $this->assertStringContainsString('hits', $e->getMessage());
        }
        $this->expectException(\Mcds\NonNumericException::class);
        $hits->incr();
    }

    public function testAnAddBasedLockAndLockWithKeyExcludeEachOther(): void
    {
        $server = new Memcached();
        $m = self::client($server);
        $store = \Mcds\Store::memcached($server->addr);
        $lock = Lock::withKey($store, 'report-lock', 30.0);
        $this->assertSame('report-lock', $lock->getName());
        $this->assertSame(30.0, $lock->getTtl());

        // PHP holds it (as Symfony Lock's MemcachedStore takes it): mcds is
        // refused, from a prefixed store too, and sees PHP's token.
        $this->assertTrue($m->add('report-lock', 'token', 30));
        $this->assertFalse($lock->acquire());
        $this->assertFalse($lock->acquireWithin(0.05));
        $this->assertFalse(Lock::withKey($store->withPrefix('app/'), 'report-lock')->acquire());
        $this->assertSame('token', $lock->getHolder());
        $this->assertFalse($lock->isAcquired());
        $this->assertTrue($m->delete('report-lock'), 'PHP unlocks');

        // mcds holds it: PHP's add is refused, and PHP reads mcds's token.
        $this->assertTrue($lock->acquire());
        $this->assertFalse($m->add('report-lock', 'token', 30));
        $this->assertSame(\Memcached::RES_NOTSTORED, $m->getResultCode());
        $this->assertSame($lock->getOwnerToken(), $m->get('report-lock'));
        $this->assertTrue($lock->isAcquired());
        $lock->refresh();
        $this->assertFalse($m->add('report-lock', 'token', 30), 'still held after a refresh');
        $this->assertTrue($lock->release());
        $this->assertFalse($m->get('report-lock'), 'released: the key is gone');

        // Free again for PHP; and synchronized() waits for PHP's lock to go.
        $this->assertTrue($m->add('report-lock', 'token', 1));
        $started = microtime(true);
        $this->assertSame('ran', $lock->synchronized(fn () => 'ran', 5.0));
        $this->assertGreaterThan(0.5, microtime(true) - $started, 'waited for the PHP lock to expire');
        $this->assertFalse($m->get('report-lock'));
    }

    /** @dataProvider backends */
    public function testWithKeyIsTheExactKeyWithoutThePrefix(string $backend): void
    {
        $store = self::store($backend);
        $app = $store->withPrefix('app/');
        $key = self::name('exact');
        $a = Counter::withKey($store, $key);
        $b = Counter::withKey($app, $key);
        $this->assertSame(5, $a->incr(5));
        $this->assertSame(7, $b->incr(2));
        $this->assertSame(0, $app->counter($key)->get(), 'the counter named so is another key');
        // A named counter's exact key is counter:<name>:value.
        $named = $store->counter($key);
        $named->incr(3);
        $this->assertSame(4, Counter::withKey($app, "counter:$key:value")->incr());
        $this->assertSame(4, $named->get());
        // Exact-key and named counters of one store batch together.
        $this->assertSame([8, 5, 9], Counter::incrMany([[$a, 1], [$named, 1], [$b, 1]]));
        $this->assertSame(10, $a->withTtl(60)->incr());
        $b->reset();
        $this->assertSame(0, $a->get());

        // Locks: one exact key, whichever store it is made from.
        $l1 = Lock::withKey($store, "$key-lock", 10.0);
        $l2 = Lock::withKey($app, "$key-lock", 10.0, ownerLabel: 'host=other');
        $this->assertTrue($l1->acquire());
        $this->assertFalse($l2->acquire());
        $this->assertSame($l1->getOwnerToken(), $l2->getHolder());
        $this->assertTrue($l1->release());
        $this->assertTrue($l2->acquire());
        $this->assertStringStartsWith('host=other ', (string)$l2->getOwnerToken());
        $this->assertTrue($l2->release());
        // A named lock's exact key is lock:<name>:owner.
        $job = $store->lock("$key-job");
        $this->assertTrue($job->acquire());
        $this->assertFalse(Lock::withKey($app, "lock:$key-job:owner")->acquire());
        $this->assertTrue($job->release());
        $this->assertTrue(Lock::withKey($app, "lock:$key-job:owner")->acquire());
        // Fencing tokens count in "<key>:fence".
        $fenced = Lock::withKey($store, "$key-f", fencing: true);
        $this->assertTrue($fenced->acquire());
        $this->assertSame($fenced->getFencingToken(), Counter::withKey($store, "$key-f:fence")->get());
        $this->assertTrue($fenced->release());
    }

    public function testBadKeysAreInvalidKeyExceptions(): void
    {
        $store = \Mcds\Store::memory();
        $bad = ['space' => 'two words', 'CRLF' => "x\r\nflush_all", 'NUL' => "nul\0byte",
            '251 bytes' => str_repeat('k', 251), 'empty' => ''];
        foreach ($bad as $why => $key) {
            foreach ([fn () => Counter::withKey($store, $key), fn () => Lock::withKey($store, $key)] as $make) {
                try {
                    $make();
                    $this->fail("accepted a key with $why");
                } catch (\Mcds\InvalidKeyException $e) {
                    $this->assertSame(\Mcds\Exception::INVALID_KEY, $e->getCode());
                    $this->assertStringContainsString('invalid key', $e->getMessage());
                }
            }
        }
        $this->assertSame(1, Counter::withKey($store, str_repeat('k', 250))->incr(), '250 bytes: the longest');
        $this->assertSame(1, Counter::withKey($store, "caf\u{e9}")->incr(), 'UTF-8');
        $this->assertTrue(Lock::withKey($store, str_repeat('l', 244))->acquire(), 'a lock leaves room for ":fence"');
        try {
            Lock::withKey($store, str_repeat('l', 245));
            $this->fail('a 245-byte lock key');
        } catch (\Mcds\InvalidKeyException $e) {
            $this->assertStringContainsString('longer than 250 bytes', $e->getMessage());
        }
        try {
            Lock::withKey($store, 'report-lock', 1.5);
            $this->fail('a TTL of 1.5 s');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Mcds\Lock::withKey(): Argument #3 ($ttl)', $e->getMessage());
        }
        try {
            Lock::withKey($store, 'report-lock', 0.0);
            $this->fail('a TTL of 0');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Mcds\Lock::withKey(): Argument #3 ($ttl) must be a whole number of seconds between 1', $e->getMessage());
        }
        $this->expectException(\TypeError::class);
        Counter::withKey('not a store', 'hits'); // @phpstan-ignore-line
    }
}
