<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Counter;

final class CounterTest extends StoreTestCase
{
    /** @dataProvider backends */
    public function testIncrDecrGet(string $backend): void
    {
        $c = new Counter(self::store($backend), self::name('counter'));
        $this->assertSame(0, $c->get(), 'a missing counter is 0');
        $this->assertSame(1, $c->incr());
        $this->assertSame(11, $c->incr(10));
        $this->assertSame(10, $c->decr());
        $this->assertSame(3, $c->decr(7));
        $this->assertSame(0, $c->decr(100), 'decr stops at 0');
        $this->assertSame(0, $c->get());
        $this->assertSame(PHP_INT_MAX, $c->incr(PHP_INT_MAX));
    }

    /** @dataProvider backends */
    public function testNegativeDeltasAreValueErrors(string $backend): void
    {
        $c = self::store($backend)->counter(self::name('neg'));
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('Mcds\Counter::incr(): Argument #1 ($delta) must be greater than or equal to 0');
        $c->incr(-1);
    }

    public function testWrongTypesAreTypeErrors(): void
    {
        $c = \Mcds\Store::memory()->counter('types');
        try {
            $c->incr('many'); // @phpstan-ignore-line
            $this->fail('no TypeError');
        } catch (\TypeError $e) {
            $this->assertStringContainsString('must be of type int, string given', $e->getMessage());
        }
        $this->expectException(\TypeError::class);
        new Counter('not a store', 'x'); // @phpstan-ignore-line
    }

    /**
     * memcached counters are 64-bit unsigned: past PHP_INT_MAX the value is
     * its numeric string. The increment that crosses it answers with the
     * new value (it threw after applying the write, and get() threw ever
     * after), and decr() back under it is an int again.
     *
     * @dataProvider backends
     */
    public function testValuesPastPhpIntMaxAreNumericStrings(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('big');
        $c = $store->counter($name);
        $this->assertSame(PHP_INT_MAX, $c->incr(PHP_INT_MAX));
        $this->assertSame('9223372036854775809', $c->incr(2));
        $this->assertSame('9223372036854775809', $c->get());
        $this->assertSame('9223372036854775809', (new Counter($store, $name))->get());
        $this->assertSame('18446744073709551615', $c->incr(PHP_INT_MAX - 1));
        $this->assertSame('9223372036854775808', $c->decr(PHP_INT_MAX));
        $this->assertSame(PHP_INT_MAX, $c->decr(1));
        $this->assertSame('string|int', (string)(new \ReflectionMethod(Counter::class, 'incr'))->getReturnType());
    }
}
