<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Lock;

final class LockTest extends StoreTestCase
{
    /** @dataProvider backends */
    public function testAcquireIsAcquiredRelease(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('lock');
        $a = new Lock($store, $name, 30);
        $b = $store->lock($name, 30);
        $this->assertSame($name, $a->getName());
        $this->assertSame(30.0, $a->getTtl());
        $this->assertFalse($a->isAcquired());
        $this->assertTrue($a->acquire());
        $this->assertTrue($a->isAcquired());
        $this->assertTrue($a->acquire(), 'acquiring a lock this object holds is true at once');
        $this->assertFalse($b->acquire(), 'another owner holds it');
        $this->assertFalse($b->isAcquired());
        $this->assertFalse($b->acquireWithin(0.05));
        $this->assertFalse($b->release(), 'b held nothing');
        $this->assertTrue($a->release());
        $this->assertFalse($a->isAcquired());
        $this->assertFalse($a->release(), 'released twice');
        $this->assertTrue($b->acquireWithin(0));
        $this->assertTrue($b->release());
    }

    /** @dataProvider backends */
    public function testBlockingAcquireWaitsForTheHolder(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('lock');
        $holder = new Lock($store, $name, 1); // expires by itself
        $this->assertTrue($holder->acquire());
        $waiter = new Lock($store, $name, 30);
        $t0 = microtime(true);
        $this->assertTrue($waiter->acquire(true));
        $waited = microtime(true) - $t0;
        $this->assertGreaterThan(0.2, $waited, 'it waited for the lease to expire');
        $this->assertLessThan(5, $waited);
        $this->assertFalse($holder->isAcquired(), 'the holder\'s lease is over by its own clock too');
        $this->assertFalse($holder->release(), 'the lease had been lost');
        $this->assertTrue($waiter->release());
    }

    /** @dataProvider backends */
    public function testAnExpiredLeaseIsRetakenOnAcquire(string $backend): void
    {
        $lock = self::store($backend)->lock(self::name('lock'), 1);
        $this->assertTrue($lock->acquire());
        usleep(1_100_000);
        $this->assertFalse($lock->isAcquired(), 'by the local clock');
        $this->assertTrue($lock->acquire(), 'drops the expired lease and takes a new one');
        $this->assertTrue($lock->isAcquired());
        $this->assertTrue($lock->release());
    }

    /** @dataProvider backends */
    public function testSynchronized(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('lock');
        $lock = $store->lock($name, 30);
        $other = $store->lock($name, 30);
        $result = $lock->synchronized(function () use ($lock, $other) {
            $this->assertTrue($lock->isAcquired());
            $this->assertFalse($other->acquire());
            // Reentrant: the inner call runs and leaves the lease to the outer one.
            $this->assertSame('inner', $lock->synchronized(fn () => 'inner'));
            $this->assertTrue($lock->isAcquired());
            return ['answer' => 42];
        });
        $this->assertSame(['answer' => 42], $result);
        $this->assertFalse($lock->isAcquired(), 'released after the callback');
        $this->assertTrue($other->acquire());
        $this->assertTrue($other->release());

        // Released when the callback throws, and the exception goes through.
        try {
            $lock->synchronized(function () {
                throw new \DomainException('boom');
            });
            $this->fail('no exception');
        } catch (\DomainException $e) {
            $this->assertSame('boom', $e->getMessage());
        }
        $this->assertFalse($lock->isAcquired());
        $this->assertTrue($other->acquire(), 'free again');

        // A timeout while another owner holds it.
        try {
            $lock->synchronized(fn () => $this->fail('ran without the lock'), 0.1);
            $this->fail('no WaitTimeoutException');
        } catch (\Mcds\WaitTimeoutException $e) {
            $this->assertSame(\Mcds\Exception::WAIT_TIMEOUT, $e->getCode());
            $this->assertSame('MCDS_WAIT_TIMEOUT', $e->getResultName());
            $this->assertStringContainsString($name, $e->getMessage());
        }
        $this->assertTrue($other->release());
        $this->assertSame(7, $lock->synchronized(fn () => 7, 1.5));
        // Any callable.
        $this->assertSame(PHP_VERSION, $lock->synchronized('phpversion'));
        $this->assertSame(3, $lock->synchronized([new \ArrayObject([1, 2, 3]), 'count']));
    }

    /** @dataProvider backends */
    public function testALeaseLostDuringTheCallbackIsReported(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('lock');
        $lock = $store->lock($name, 1);
        $other = $store->lock($name, 30);
        try {
            $lock->synchronized(function () use ($other) {
                // A 1 s lease lasts 1 to 3 s (whole-second expiry): wait for it to go.
                $deadline = microtime(true) + 6;
                while (!$other->acquire() && microtime(true) < $deadline) {
                    usleep(100_000);
                }
                $this->assertTrue($other->isAcquired(), 'another owner got in');
            });
            $this->fail('no LockLostException');
        } catch (\Mcds\LockLostException $e) {
            $this->assertStringContainsString('expired while the callback ran', $e->getMessage());
            $this->assertSame(0, $e->getCode());
        }
        $this->assertFalse($lock->isAcquired());
        $this->assertTrue($other->release(), 'the other owner\'s lease was not touched');
    }

    public function testRefreshNeedsLockExtendInLibmcds(): void
    {
        $lock = \Mcds\Store::memory()->lock('refresh', 30);
        $this->assertTrue($lock->acquire());
        try {
            $lock->refresh();
            $this->fail('refresh worked: update this test and lock.c\'s TODO');
        } catch (\Mcds\UnsupportedException $e) {
            $this->assertSame(\Mcds\Exception::UNSUPPORTED, $e->getCode());
            $this->assertStringContainsString('mcds_lock_extend', $e->getMessage());
        }
        $this->assertTrue($lock->isAcquired(), 'the lease was left as it was');
        $this->expectException(\Mcds\UnsupportedException::class);
        $lock->refresh(60.0);
    }

    public function testTtlValidation(): void
    {
        $store = \Mcds\Store::memory();
        foreach ([1.5, -1.0, INF, NAN, 5e9] as $ttl) {
            try {
                $store->lock('ttl', $ttl);
                $this->fail("ttl $ttl accepted");
            } catch (\ValueError $e) {
                $this->assertStringContainsString('Argument #2 ($ttl) must be a whole number of seconds', $e->getMessage());
            }
        }
        try {
            new Lock($store, 'ttl', 2.5);
            $this->fail('ttl 2.5 accepted');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Argument #3 ($ttl)', $e->getMessage());
        }
        $this->assertSame(30.0, (new Lock($store, 'ttl'))->getTtl());
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $store->lock('ttl', 0);
    }

    public function testTimeoutValidation(): void
    {
        $lock = \Mcds\Store::memory()->lock('timeouts');
        $this->expectException(\ValueError::class);
        $lock->acquireWithin(-1);
    }

    public function testFreeingAHeldLockReleasesIt(): void
    {
        $store = \Mcds\Store::memcached(Memcached::shared()->addr);
        $name = self::name('lock');
        $lock = $store->lock($name);
        $this->assertTrue($lock->acquire());
        unset($lock);
        $this->assertTrue($store->lock($name)->acquire(), 'free_obj released the lease');
    }
}
