<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Store;

/** Store options (mcds_store_builder_*) and key prefixes (mcds_store_with_prefix). */
final class StoreOptionsTest extends StoreTestCase
{
    public function testMemcachedOptionsAreTaken(): void
    {
        $addr = Memcached::shared()->addr;
        $name = self::name('opts');
        $store = Store::memcached($addr, connectTimeout: 0.5, ioTimeout: 0.25, itemSizeLimit: 4096);
        $this->assertSame(2, $store->counter($name)->incr(2));
        $this->assertSame(2, Store::memcached($addr, 2.0)->counter($name)->get(), 'the same server');
        $this->assertSame(2, Store::memcached($addr, null, null, null)->counter($name)->get(), 'null: the defaults');
        // The item size limit is checked before anything is sent.
        $t = $store->table(self::name('opts'));
        $t->set('small', str_repeat('x', 1000));
        try {
            $t->set('big', str_repeat('x', 5000));
            $this->fail('a value over the item size limit was sent');
        } catch (\Mcds\ValueTooLargeException $e) {
            $this->assertSame(\Mcds\Exception::VALUE_TOO_LARGE, $e->getCode());
        }
        $this->assertNull($t->get('big'));
        // Without the option, the default limit (1 MiB) lets it through.
        Store::memcached($addr)->table(self::name('opts'))->set('big', str_repeat('x', 5000));
    }

    public function testTheIoTimeoutBoundsAStalledServer(): void
    {
        $server = new Memcached();
        $store = Store::memcached($server->addr, ioTimeout: 0.2);
        $counter = $store->counter('stalled');
        $this->assertSame(1, $counter->incr(), 'connected while the server answers');
        $server->pause(); // real memcached, SIGSTOPped: the kernel still takes the bytes
        try {
            $t0 = microtime(true);
            try {
                $counter->incr();
                $this->fail('a stalled server answered');
            } catch (\Mcds\BackendException $e) {
                $elapsed = microtime(true) - $t0;
                $this->assertContains($e->getCode(), [\Mcds\Exception::TIMEOUT, \Mcds\Exception::AMBIGUOUS], $e->getMessage());
                $this->assertGreaterThanOrEqual(0.15, $elapsed);
                $this->assertLessThan(0.9, $elapsed, 'well under the default timeout of 1 s');
            }
        } finally {
            $server->resume();
        }
    }

    /** @return array<string, array{string, array<mixed>, string}> */
    public static function badTimeouts(): array
    {
        $bad = [];
        foreach (['zero' => 0.0, 'negative' => -1.0, 'NaN' => NAN, 'INF' => INF, 'over an hour' => 3600.5] as $what => $v) {
            $bad["connect $what"] = [[$v, null], 'Argument #2 ($connectTimeout) must be greater than 0 and at most 3600 seconds'];
            $bad["io $what"] = [[null, $v], 'Argument #3 ($ioTimeout) must be greater than 0 and at most 3600 seconds'];
        }
        return $bad;
    }

    /**
     * @dataProvider badTimeouts
     * @param array{?float, ?float} $timeouts
     */
    public function testBadTimeoutsAreValueErrors(array $timeouts, string $message): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage("Mcds\\Store::memcached(): $message");
        Store::memcached(Memcached::shared()->addr, ...$timeouts);
    }

    public function testTimeoutsAreRoundedUpToMilliseconds(): void
    {
        // 0.0001 s is 1 ms (not 0, which libmcds refuses); an hour is the most.
        $this->assertInstanceOf(Store::class, Store::memcached(Memcached::shared()->addr, 0.0001, 3600.0));
    }

    public function testBadByteOptionsAreValueErrors(): void
    {
        $cases = [
            [fn () => Store::memcached(Memcached::shared()->addr, itemSizeLimit: 1023), 'Argument #4 ($itemSizeLimit) was refused by libmcds'],
            [fn () => Store::memcached(Memcached::shared()->addr, itemSizeLimit: -1), 'Argument #4 ($itemSizeLimit) must be greater than or equal to 0'],
            [fn () => Store::memory(memoryLimit: 100), 'Argument #1 ($memoryLimit) was refused by libmcds: memory limit (bytes) 100 is out of range'],
            [fn () => Store::memory(memoryLimit: 2 << 40), 'Argument #1 ($memoryLimit) was refused by libmcds'],
            [fn () => Store::memory(itemSizeLimit: (1 << 30) + 1), 'Argument #3 ($itemSizeLimit) was refused by libmcds'],
        ];
        foreach ($cases as [$make, $message]) {
            try {
                $make();
                $this->fail("accepted: $message");
            } catch (\ValueError $e) {
                $this->assertStringContainsString($message, $e->getMessage());
            }
        }
    }

    public function testTheMemoryBudgetWithoutEviction(): void
    {
        $store = Store::memory(memoryLimit: 64 * 1024, evict: false);
        $t = $store->table('budget');
        $this->expectException(\Mcds\OutOfMemoryException::class);
        for ($i = 0; $i < 200; $i++) {
            $t->set("m$i", str_repeat('x', 1000)); // 200 KB into 64 KiB
        }
    }

    public function testTheMemoryBudgetWithEviction(): void
    {
        foreach ([Store::memory(64 * 1024), Store::memory(64 * 1024, true)] as $store) {
            $counters = [];
            for ($i = 0; $i < 100; $i++) {
                $counters[$i] = $store->counter("c$i");
                $counters[$i]->incr();
                $store->table("t$i")->set('k', str_repeat('x', 1000));
            }
            // ~110 KB into 64 KiB: the oldest went (LRU by the millisecond,
            // so which of the first ones exactly is left open), the newest stay.
            $kept = array_sum(array_map(fn ($c) => $c->get(), array_slice($counters, 0, 20)));
            $this->assertLessThan(20, $kept, 'early items were evicted');
            $this->assertSame(1, $counters[99]->get());
            $this->assertSame(1000, strlen($store->table('t99')->get('k') ?? ''));
        }
    }

    public function testTheEmbeddedItemSizeLimit(): void
    {
        $t = Store::memory(itemSizeLimit: 2048)->table('items');
        $t->set('fits', str_repeat('x', 1500));
        $this->expectException(\Mcds\ValueTooLargeException::class);
        $t->set('too big', str_repeat('x', 3000));
    }

    /** @dataProvider backends */
    public function testPrefixesIsolateStores(string $backend): void
    {
        $base = self::store($backend);
        $name = self::name('prefixed');
        $billing = $base->withPrefix('billing/');
        $search = $base->withPrefix('search/');
        $this->assertInstanceOf(Store::class, $billing);
        $billing->counter($name)->incr(5);
        $search->counter($name)->incr(7);
        $this->assertSame(5, $billing->counter($name)->get());
        $this->assertSame(7, $search->counter($name)->get());
        $this->assertSame(0, $base->counter($name)->get(), 'the base store has no prefix');
        $this->assertSame(5, $search->withPrefix('billing/')->counter($name)->get(), 'a prefix replaces the prefix');
        $this->assertSame(0, $billing->withPrefix('')->counter($name)->get(), '"" removes it');
        // Locks of the same name under two prefixes are two locks.
        $a = $billing->lock($name);
        $b = $search->lock($name);
        $this->assertTrue($a->acquire());
        $this->assertTrue($b->acquire());
        $this->assertFalse($billing->lock($name)->acquire());
        $this->assertTrue($a->release() && $b->release());
        // The prefixed store keeps the embedded store's memory, and stays
        // usable when the base store object is gone.
        unset($base);
        $this->assertSame(5, $billing->counter($name)->get());
    }

    public function testThePrefixIsTheStartOfTheKeys(): void
    {
        $server = Memcached::shared();
        $name = self::name('prefixed');
        $lock = Store::memcached($server->addr)->withPrefix('app/')->lock($name);
        $this->assertTrue($lock->acquire());
        $reply = $server->command("get app/lock:$name:owner");
        $this->assertStringContainsString("\r\n" . $lock->getOwnerToken() . "\r\nEND", $reply, 'the lock item, with its owner token');
        $this->assertSame("END\r\n", $server->command("get lock:$name:owner"));
        $this->assertTrue($lock->release());
    }

    public function testBadPrefixes(): void
    {
        $store = Store::memory();
        foreach (['with space', "tab\t", str_repeat('p', 250)] as $prefix) {
            try {
                $store->withPrefix($prefix);
                $this->fail("prefix accepted: $prefix");
            } catch (\Mcds\InvalidKeyException $e) {
                $this->assertNotSame('', $e->getMessage());
            }
        }
        $this->expectException(\ValueError::class);
        $store->withPrefix("nul\0byte");
    }

    public function testAStoreFromAUrl(): void
    {
        $addr = Memcached::shared()->addr;
        $name = self::name('url');
        $store = Store::fromUrl("memcached://$addr?ketama&timeout_ms=500&prefix=php-url%2F");
        $this->assertSame(3, $store->counter($name)->incr(3));
        $this->assertSame(3, Store::memcached($addr)->withPrefix('php-url/')->counter($name)->get(), 'the prefix of the URL');
        $this->assertSame(3, Store::fromUrl($addr)->withPrefix('php-url/')->counter($name)->get(), 'a bare server list');
        $memory = Store::fromUrl('memory://?memory_limit=1m&evict=false');
        $this->assertSame(1, $memory->counter($name)->incr());
        foreach (['memcached://a:1?colour=blue' => 'colour', 'memory://?ketama' => 'ketama', 'memcached://' => 'no memcached servers'] as $url => $says) {
            try {
                Store::fromUrl($url);
                $this->fail("$url was taken");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertStringContainsString($says, $e->getMessage());
            }
        }
        foreach (['memcached+tls://127.0.0.1:1?ca_file=/nonexistent/ca.pem', 'memcached://user:hunter2%20x@127.0.0.1:1'] as $url) {
            try {
                Store::fromUrl($url);
                $this->fail("$url was taken");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertStringNotContainsString('hunter2', $e->getMessage());
            }
        }
        // A unix socket: made now, connected on first use.
        try {
            Store::fromUrl('unix:/nonexistent/m.sock')->counter('unix')->incr();
            $this->fail('a missing unix socket answered');
        } catch (\Mcds\BackendException $e) {
            $this->assertStringContainsString('/nonexistent/m.sock', $e->getMessage());
        }
    }
}
