<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Lock;
use Mcds\Store;

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
        $this->assertFalse($holder->isAcquired(), 'the server says the waiter holds it');
        $this->assertFalse($holder->release(), 'the lease had been lost');
        $this->assertTrue($waiter->release());
    }

    /** @dataProvider backends */
    public function testAnExpiredLeaseIsRetakenOnAcquire(string $backend): void
    {
        $lock = self::store($backend)->lock(self::name('lock'), 1);
        $this->assertTrue($lock->acquire());
        usleep(1_100_000);
        // Over by the local clock (the server may keep it up to 2 s more).
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

    /** @dataProvider backends */
    public function testRefreshKeepsTheLease(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('lock');
        $lock = $store->lock($name, 1);
        $other = $store->lock($name, 30);
        $this->assertTrue($lock->acquire());
        $lock->refresh(30.0);
        // Past the 1 s lease (which lasts 1 to 3 s with whole-second expiry).
        usleep(3_200_000);
        $this->assertTrue($lock->isAcquired(), 'the server says it is still ours');
        $this->assertFalse($other->acquire(), 'refreshed for 30 s');
        $lock->refresh(); // the lock's own TTL
        $this->assertTrue($lock->isAcquired());
        $this->assertFalse($lock->isLost());
        $this->assertTrue($lock->release());
        $this->assertTrue($other->acquire());
        $this->assertTrue($other->release());
    }

    /** @dataProvider backends */
    public function testRefreshAfterTheLeaseWasLostThrows(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('lock');
        $lock = $store->lock($name, 1);
        $other = $store->lock($name, 30);
        $this->assertTrue($lock->acquire());
        // A 1 s lease lasts 1 to 3 s (whole-second expiry): wait for it to go.
        $deadline = microtime(true) + 6;
        while (!$other->acquire() && microtime(true) < $deadline) {
            usleep(100_000);
        }
        $this->assertTrue($other->isAcquired(), 'another owner got in');
        $this->assertFalse($lock->isLost(), 'nothing has found it lost yet');
        try {
            $lock->refresh();
            $this->fail('no LockLostException');
        } catch (\Mcds\LockLostException $e) {
            $this->assertStringContainsString("lock \"$name\" was lost before refresh()", $e->getMessage());
            $this->assertSame(0, $e->getCode());
        }
        $this->assertTrue($lock->isLost());
        $this->assertFalse($lock->isAcquired());
        $this->assertSame($other->getOwnerToken(), $lock->getHolder(), 'the other owner keeps it');
        $this->assertTrue($other->isAcquired());
        $this->assertFalse($lock->release(), 'it was no longer ours');
        $this->assertFalse($lock->isLost(), 'it holds nothing now');
        $this->assertTrue($other->release());
    }

    public function testALeaseFlushedFromTheServerIsNotAcquired(): void
    {
        $server = new Memcached();
        $lock = Store::memcached($server->addr)->lock('flushed', 30);
        $this->assertTrue($lock->acquire());
        $this->assertTrue($lock->isAcquired());
        $this->assertStringStartsWith('OK', $server->command('flush_all'));
        $this->assertFalse($lock->isAcquired(), 'asked the server, not the local clock');
        $this->assertNull($lock->getHolder());
        $this->expectException(\Mcds\LockLostException::class);
        $lock->refresh();
    }

    public function testAQuorumUrlHoldsTheLockOnAMajority(): void
    {
        $servers = [new Memcached(), new Memcached(), new Memcached()];
        $url = 'memcached://' . implode(',', array_map(fn ($s) => $s->addr, $servers)) . '?quorum&timeout_ms=300';
        $store = Store::fromUrl($url);
        $name = self::name('quorum');
        $a = $store->lock($name, 10, fencing: true);
        $b = $store->lock($name, 10, fencing: true);
        $this->assertTrue($a->acquire());
        $first = $a->getFencingToken();
        $this->assertFalse($b->acquire(), 'one holder across the quorum');
        $this->assertTrue($a->release());
        // One server of three gone: still a majority.
        $servers[0]->kill();
        $this->assertTrue($b->acquire());
        $this->assertGreaterThan($first, $b->getFencingToken());
        $this->assertTrue($b->release());
        // Two gone: no majority, and the error says how many answered.
        $servers[1]->kill();
        try {
            $a->acquire();
            $this->fail('acquired without a majority');
        } catch (\Mcds\ServerDownException $e) {
            $this->assertStringContainsString('1 of 3 servers answered, 2 needed', $e->getMessage());
        }
    }

    public function testRefreshNeedsALease(): void
    {
        $lock = Store::memory()->lock('refresh', 30);
        try {
            $lock->refresh();
            $this->fail('refreshed a lease never taken');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
        }
        $this->assertTrue($lock->acquire());
        $this->assertTrue($lock->release());
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $lock->refresh(10);
    }

    public function testRefreshTtlValidation(): void
    {
        $lock = Store::memory()->lock('refresh', 30);
        $this->assertTrue($lock->acquire());
        foreach ([1.5, -1.0, NAN, INF] as $ttl) {
            try {
                $lock->refresh($ttl);
                $this->fail("ttl $ttl accepted");
            } catch (\ValueError $e) {
                $this->assertStringContainsString('Argument #1 ($ttl) must be a whole number of seconds', $e->getMessage());
            }
        }
        try {
            $lock->autoExtend(0.5);
            $this->fail('ttl 0.5 accepted');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Mcds\Lock::autoExtend(): Argument #1 ($ttl)', $e->getMessage());
        }
        $this->assertTrue($lock->isAcquired(), 'the lease was left as it was');
        // 0 is refused as -1 and 1.5 are (it was an InvalidArgumentException
        // from libmcds saying "0ns").
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('Argument #1 ($ttl) must be a whole number of seconds between 1 and');
        $lock->refresh(0);
    }

    /** @dataProvider backends */
    public function testFencingTokensIncrease(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('fenced');
        $a = $store->lock($name, 30, fencing: true);
        $b = new Lock($store, $name, 30, true);
        $tokens = [];
        for ($i = 0; $i < 3; $i++) {
            foreach ([$a, $b] as $lock) {
                $this->assertTrue($lock->acquire());
                $tokens[] = $lock->getFencingToken();
                $this->assertSame(end($tokens), $lock->getFencingToken(), 'the same lease, the same token');
                $this->assertTrue($lock->release());
            }
        }
        $sorted = $tokens;
        sort($sorted);
        $this->assertSame($sorted, $tokens);
        $this->assertSame(count($tokens), count(array_unique($tokens)), 'strictly increasing: ' . implode(',', $tokens));
        $this->assertGreaterThan(0, $tokens[0]);
        // Only a held lease of a fencing lock has one.
        try {
            $a->getFencingToken();
            $this->fail('a token without a lease');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
        }
        $plain = $store->lock(self::name('plain'));
        $this->assertTrue($plain->acquire());
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $plain->getFencingToken();
    }

    /** @dataProvider backends */
    public function testOwnerLabelHolderAndOwnerToken(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('labelled');
        $lock = $store->lock($name, 30, ownerLabel: 'host=web1 pid=4242');
        $watcher = $store->lock($name);
        $this->assertNull($lock->getOwnerToken(), 'no lease');
        $this->assertNull($watcher->getHolder(), 'the lock is free');
        $this->assertTrue($lock->acquire());
        $token = $lock->getOwnerToken();
        $this->assertMatchesRegularExpression('/^host=web1 pid=4242 [0-9a-f]+$/', $token);
        $this->assertSame($token, $watcher->getHolder(), 'anyone can see who holds it');
        $this->assertSame($token, $lock->getHolder());
        $this->assertNull($watcher->getOwnerToken());
        $this->assertTrue($lock->release());
        $this->assertNull($watcher->getHolder());
        // Without a label the token is the random part only.
        $this->assertTrue($watcher->acquire());
        $this->assertMatchesRegularExpression('/^[0-9a-f]+$/', $watcher->getOwnerToken());
        $this->assertTrue($watcher->release());
        // Two holders with one label never release each other's lease.
        $twin = $store->lock($name, 30, false, 'host=web1 pid=4242');
        $this->assertTrue($lock->acquire());
        $this->assertFalse($twin->acquire());
        $this->assertFalse($twin->release());
        $this->assertTrue($lock->isAcquired());
        $this->assertTrue($lock->release());
        foreach (["tab\tlabel", str_repeat('x', 201), "caf\xc3\xa9"] as $label) {
            try {
                $store->lock($name, 30, ownerLabel: $label);
                $this->fail("label accepted: $label");
            } catch (\ValueError $e) {
                $this->assertStringContainsString('Argument #4 ($ownerLabel) was refused by libmcds', $e->getMessage());
                $this->assertStringContainsString('at most 200 bytes of printable ASCII', $e->getMessage(), 'libmcds\'s message');
            }
        }
        $this->assertNull($store->lock($name, 30, ownerLabel: '')->getOwnerToken(), '"" is no label');
    }

    /** @dataProvider backends */
    public function testAutoExtendKeepsTheLease(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('lock');
        $lock = $store->lock($name, 2);
        $other = $store->lock($name, 30);
        $this->assertTrue($lock->acquire());
        $lock->autoExtend(); // every 2/3 s, for 2 s
        usleep(4_500_000);
        $this->assertFalse($lock->isLost());
        $this->assertTrue($lock->isAcquired());
        $this->assertFalse($other->acquire());
        $this->assertTrue($lock->acquire(), 'still held by the local account too');
        $this->assertTrue($lock->release());
        $this->assertTrue($other->acquire(), 'released: the renewals stopped');
        $this->assertTrue($other->release());
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $lock->autoExtend(); // holds nothing
    }

    public function testAutoExtendFindsALostLease(): void
    {
        $server = new Memcached();
        $lock = Store::memcached($server->addr)->lock('lost', 3);
        $this->assertTrue($lock->acquire());
        $lock->autoExtend(3); // renews every second
        $this->assertStringStartsWith('OK', $server->command('flush_all'));
        $deadline = microtime(true) + 5;
        while (!$lock->isLost() && microtime(true) < $deadline) {
            usleep(100_000);
        }
        $this->assertTrue($lock->isLost(), 'the renewer found the lease gone');
        $this->assertFalse($lock->isAcquired());
        $this->assertTrue($lock->acquire(), 'a lost lease is replaced by a new one');
        $this->assertFalse($lock->isLost());
        $this->assertTrue($lock->release());
    }

    public function testBackoffOptions(): void
    {
        $store = Store::memory();
        $name = self::name('backoff');
        $holder = $store->lock($name, 1);
        $this->assertTrue($holder->acquire());
        $waiter = $store->lock($name, 30, backoffMin: 0.01, backoffMax: 0.2);
        $this->assertTrue($waiter->acquire(true), 'waits for the holder\'s lease to end');
        $this->assertTrue($waiter->release());
        $this->assertInstanceOf(Lock::class, new Lock($store, $name, 30, false, null, 0.002));
        $this->assertInstanceOf(Lock::class, $store->lock($name, backoffMax: 60.0));
        $bad = [
            [['backoffMin' => 0.0], 'Argument #5 ($backoffMin) must be greater than 0 and at most 60 seconds'],
            [['backoffMax' => 61.0], 'Argument #6 ($backoffMax) must be greater than 0 and at most 60 seconds'],
            [['backoffMin' => 0.5, 'backoffMax' => 0.1], 'Argument #6 ($backoffMax) must leave $backoffMin (0.500 s) at most $backoffMax (0.100 s)'],
            [['backoffMin' => 0.1], 'Argument #5 ($backoffMin) must leave $backoffMin (0.100 s) at most $backoffMax (0.050 s)'],
            [['backoffMax' => NAN], 'Argument #6 ($backoffMax) must be greater than 0'],
        ];
        foreach ($bad as [$args, $message]) {
            try {
                $store->lock($name, 30, ...$args);
                $this->fail("accepted: $message");
            } catch (\ValueError $e) {
                $this->assertStringContainsString($message, $e->getMessage());
            }
        }
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
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('Argument #2 ($ttl) must be a whole number of seconds between 1 and');
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
