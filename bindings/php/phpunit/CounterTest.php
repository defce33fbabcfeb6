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

    public function testValuesPastPhpIntMaxThrow(): void
    {
        $c = \Mcds\Store::memory()->counter('big');
        $c->incr(PHP_INT_MAX);
        $this->expectException(\Mcds\Exception::class);
        $this->expectExceptionMessage('does not fit a PHP int');
        $c->incr(2);
    }
}
