<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Store;

final class StoreTest extends StoreTestCase
{
    public function testVersionIsTheLibraryVersion(): void
    {
        $this->assertMatchesRegularExpression('/^\d+\.\d+\.\d+/', \Mcds\version());
        $this->assertSame(phpversion('mcds'), \Mcds\version());
    }

    public function testStoresComeFromTheStaticConstructorsOnly(): void
    {
        $this->assertInstanceOf(Store::class, Store::memory());
        $this->assertInstanceOf(Store::class, Store::memcached(Memcached::shared()->addr));
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('private');
        new Store(); // @phpstan-ignore-line
    }

    /** @dataProvider backends */
    public function testEveryFactoryMakesItsStructure(string $backend): void
    {
        $s = self::store($backend);
        $this->assertInstanceOf(\Mcds\Counter::class, $s->counter(self::name('c')));
        $this->assertInstanceOf(\Mcds\Lock::class, $s->lock(self::name('l')));
        $this->assertInstanceOf(\Mcds\Set::class, $s->set(self::name('s')));
        $this->assertInstanceOf(\Mcds\WindowCounter::class, $s->windowCounter(self::name('w'), 1, 10));
        $this->assertInstanceOf(\Mcds\RateLimiter::class, $s->rateLimiter(self::name('r'), 5, 10));
        $this->assertInstanceOf(\Mcds\EventLog::class, $s->eventLog(self::name('e'), 10, 6));
        $this->assertInstanceOf(\Mcds\Table::class, $s->table(self::name('t')));
        $this->assertInstanceOf(\Mcds\HyperLogLog::class, $s->hyperLogLog(self::name('h')));
        $this->assertInstanceOf(\Mcds\BloomFilter::class, $s->bloomFilter(self::name('b'), 100, 0.01));
        $this->assertInstanceOf(\Mcds\ActivityBitmap::class, $s->activityBitmap(self::name('a'), 0, 1000));
    }

    public function testTwoStoresOnOneServerShareData(): void
    {
        $name = self::name('shared');
        Store::memcached(Memcached::shared()->addr)->counter($name)->incr(3);
        $this->assertSame(3, Store::memcached(Memcached::shared()->addr)->counter($name)->get());
        // The embedded store is per Store object.
        Store::memory()->counter($name)->incr(3);
        $this->assertSame(0, Store::memory()->counter($name)->get());
    }

    public function testStructuresKeepTheirStoreAlive(): void
    {
        $store = Store::memory();
        $counter = $store->counter('kept');
        $counter->incr(2);
        unset($store);
        gc_collect_cycles();
        $this->assertSame(3, $counter->incr());
        $lock = Store::memory()->lock('kept'); // the temporary store is only referenced by the lock
        $this->assertTrue($lock->acquire());
        $this->assertTrue($lock->release());
    }

    public function testObjectsCannotBeClonedSerializedOrConstructedTwice(): void
    {
        $store = Store::memory();
        $counter = $store->counter('once');
        try {
            $copy = clone $counter;
            $this->fail('cloned');
        } catch (\Error $e) {
            $this->assertStringContainsString('uncloneable', $e->getMessage());
        }
        try {
            serialize($store);
            $this->fail('serialized');
        } catch (\Exception $e) {
            $this->assertStringContainsString('not allowed', $e->getMessage());
        }
        try {
            $counter->__construct($store, 'again');
            $this->fail('constructed twice');
        } catch (\Error $e) {
            $this->assertSame('Mcds\Counter object is already constructed', $e->getMessage());
        }
        $this->assertSame(1, $counter->incr(), 'still the first counter');
    }

    public function testNoObjectExistsWithoutItsHandle(): void
    {
        // A failed constructor leaves no object, and reflection cannot make
        // one without its constructor (every method also checks the handle
        // before calling libmcds).
        $failed = null;
        try {
            $failed = new \Mcds\Counter(Store::memory(), 'bad key');
        } catch (\Mcds\InvalidKeyException) {
        }
        $this->assertNull($failed);
        foreach ([\Mcds\Store::class, \Mcds\Counter::class, \Mcds\Lock::class, \Mcds\BloomFilter::class] as $class) {
            try {
                (new \ReflectionClass($class))->newInstanceWithoutConstructor();
                $this->fail("$class made without its constructor");
            } catch (\ReflectionException $e) {
                $this->assertStringContainsString('final', $e->getMessage());
            }
        }
    }

    public function testNoDynamicProperties(): void
    {
        $this->expectException(\Error::class);
        $counter = Store::memory()->counter('props');
        $counter->extra = 1; // @phpstan-ignore-line
    }

    /** @dataProvider backends */
    public function testUpdateIsACasReadModifyWrite(string $backend): void
    {
        $s = self::store($backend);
        $key = self::name('upd');
        $addOne = fn (?string $v): string => (string)((int)($v ?? '0') + 1);
        for ($i = 0; $i < 50; $i++) {
            $this->assertTrue($s->update($key, $addOne));
        }
        $seen = [];
        $this->assertFalse($s->update($key, function (?string $v) use (&$seen): ?string {
            $seen[] = $v;
            return null; // leave it
        }));
        $this->assertSame(['50'], $seen);
        // The function's own exception, nothing written.
        try {
            $s->update($key, function (?string $v): string {
                throw new \DomainException('no');
            });
            $this->fail('the exception was lost');
        } catch (\DomainException $e) {
            $this->assertSame('no', $e->getMessage());
        }
        try {
            $s->update($key, fn (?string $v) => 42);
            $this->fail('an int was taken as a value');
        } catch (\TypeError $e) {
            $this->assertStringContainsString('must return a string', $e->getMessage());
        }
        $this->assertSame(50, \Mcds\Counter::withKey($s, $key)->get());
        $this->assertTrue($s->update($key, fn (?string $v) => 'x', 60));
    }
}
