<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\ActivityBitmap;
use Mcds\BloomFilter;
use Mcds\Decision;
use Mcds\EventLog;
use Mcds\HyperLogLog;
use Mcds\RateLimiter;
use Mcds\Set;
use Mcds\Table;
use Mcds\WindowCounter;

/** Set, WindowCounter, RateLimiter, EventLog, Table and the sketches. */
final class StructuresTest extends StoreTestCase
{
    /** @dataProvider backends */
    public function testSet(string $backend): void
    {
        $s = new Set(self::store($backend), self::name('set'));
        $this->assertSame([], $s->members());
        foreach (['php', 'with space', "\x00\xff", ''] as $m) {
            $s->add($m);
        }
        $s->add('php'); // already there
        $this->assertTrue($s->contains('with space'));
        $this->assertTrue($s->contains(''));
        $this->assertFalse($s->contains('absent'));
        $s->remove('php');
        $s->remove('absent');
        $this->assertFalse($s->contains('php'));
        $this->assertSame(['with space', "\x00\xff", ''], $s->members());
    }

    /** @dataProvider backends */
    public function testWindowCounter(string $backend): void
    {
        $w = new WindowCounter(self::store($backend), self::name('window'), 60, 5);
        $this->assertSame(1, $w->incr());
        $this->assertSame(4, $w->incr(3));
        // value() counts complete slots only: the current one is not yet in it.
        $this->assertSame(0, $w->value());
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $this->expectExceptionCode(\Mcds\Exception::INVALID_ARGUMENT);
        new WindowCounter(self::store($backend), self::name('window'), 60, 1);
    }

    /** @dataProvider backends */
    public function testRateLimiter(string $backend): void
    {
        foreach ([false, true] as $sliding) {
            $l = new RateLimiter(self::store($backend), self::name('limit'), 2, 60, $sliding);
            $peek = $l->peek();
            $this->assertInstanceOf(Decision::class, $peek);
            $this->assertTrue($peek->allowed);
            $this->assertSame(2, $peek->remaining);
            $first = $l->check();
            $this->assertEquals([true, 1, 0], [$first->allowed, $first->remaining, $first->retryAfterMs]);
            $this->assertTrue($l->check()->allowed);
            $denied = $l->check();
            $this->assertFalse($denied->allowed);
            $this->assertSame(0, $denied->remaining);
            $this->assertGreaterThan(0, $denied->retryAfterMs);
            $this->assertLessThanOrEqual($sliding ? 120_000 : 60_000, $denied->retryAfterMs, 'sliding: the previous window weighs in');
            $this->assertFalse($l->peek()->allowed);
        }
        $d = self::store($backend)->rateLimiter(self::name('limit'), 1, 1)->check();
        $this->expectException(\Error::class); // readonly
        $d->allowed = false; // @phpstan-ignore-line
    }

    /** @dataProvider backends */
    public function testEventLog(string $backend): void
    {
        $log = new EventLog(self::store($backend), self::name('log'), 10, 7);
        $before = (int)floor(microtime(true) * 1000);
        $at1 = $log->put('first');
        $at2 = $log->put("\x00binary\xff");
        $after = (int)ceil(microtime(true) * 1000);
        $this->assertGreaterThanOrEqual($before, $at1);
        $this->assertLessThanOrEqual($after, $at2);
        $this->assertGreaterThanOrEqual($at1, $at2);
        $events = $log->fetch($before, $after);
        $this->assertSame([['at_ms' => $at1, 'payload' => 'first'], ['at_ms' => $at2, 'payload' => "\x00binary\xff"]], $events);
        $this->assertSame([], $log->fetch(0, $before - 120_000));
        try {
            $log->fetch(-1, 0);
            $this->fail('no ValueError');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('$firstMs', $e->getMessage());
        }
        $this->expectException(\Mcds\InvalidArgumentException::class);
        self::store($backend)->eventLog(self::name('log'), 10, 1);
    }

    /** @dataProvider backends */
    public function testTable(string $backend): void
    {
        $t = new Table(self::store($backend), self::name('table'));
        $this->assertNull($t->get('alice'));
        $this->assertFalse($t->has('alice'));
        $t->set('alice', '{"age":30}');
        $t->set("b\x00b", "\xff");
        $t->set('carol', '');
        $this->assertTrue($t->has('alice'));
        $this->assertSame('{"age":30}', $t->get('alice'));
        $this->assertSame("\xff", $t->get("b\x00b"));
        $this->assertSame('', $t->get('carol'), 'an empty value is not null');
        $t->set('alice', 'v2');
        $this->assertSame('v2', $t->get('alice'));
        $this->assertSame(['alice', "b\x00b", 'carol'], $t->keys());
        $this->assertTrue($t->delete('alice'));
        $this->assertFalse($t->delete('alice'));
        $this->assertSame(["b\x00b", 'carol'], $t->keys());
    }

    /** @dataProvider backends */
    public function testHyperLogLog(string $backend): void
    {
        $store = self::store($backend);
        $a = new HyperLogLog($store, self::name('hll'));
        $b = $store->hyperLogLog(self::name('hll'));
        $c = $store->hyperLogLog(self::name('hll'));
        $this->assertSame(0, $a->count());
        $this->assertTrue($a->add('/page/0'));
        $this->assertFalse($a->add('/page/0'), 'a repeated element changes nothing');
        for ($i = 0; $i < 300; $i++) {
            $a->add('/page/' . ($i % 100));
            $b->add('/page/' . (50 + $i % 100));
            $c->add('/other/' . ($i % 10));
        }
        $this->assertEqualsWithDelta(100, $a->count(), 3);
        $a->merge($b, $c);
        $this->assertEqualsWithDelta(160, $a->count(), 5);
        $a->merge(); // nothing to merge
        $this->assertEqualsWithDelta(160, $a->count(), 5);
        $this->expectException(\TypeError::class);
        $this->expectExceptionMessage('Argument #2 must be of type Mcds\HyperLogLog, Mcds\Set given');
        $a->merge($b, $store->set('x')); // @phpstan-ignore-line
    }

    /** @dataProvider backends */
    public function testBloomFilter(string $backend): void
    {
        $f = new BloomFilter(self::store($backend), self::name('bloom'), 1000, 0.01);
        $this->assertFalse($f->contains('alice'));
        $this->assertTrue($f->add('alice'));
        $this->assertFalse($f->add('alice'));
        $this->assertTrue($f->contains('alice'));
        $false = 0;
        for ($i = 0; $i < 200; $i++) {
            $f->add("in-$i");
        }
        for ($i = 0; $i < 200; $i++) {
            $this->assertTrue($f->contains("in-$i"), 'no false negatives');
            $false += $f->contains("out-$i") ? 1 : 0;
        }
        $this->assertLessThan(10, $false);
        foreach ([0.0, 1.0, NAN, -0.5] as $rate) {
            try {
                self::store($backend)->bloomFilter(self::name('bloom'), 1000, $rate);
                $this->fail("rate $rate accepted");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            }
        }
    }

    /** @dataProvider backends */
    public function testActivityBitmap(string $backend): void
    {
        $start = 1767225600; // 2026-01-01
        $days = new ActivityBitmap(self::store($backend), self::name('days'), $start, 86_400_000);
        $this->assertFalse($days->get(4));
        $this->assertFalse($days->set(4));
        $this->assertTrue($days->set(4));
        $this->assertTrue($days->get(4));
        $this->assertFalse($days->mark(($start + 86400 * 9 + 5) * 1000), 'day 9');
        $this->assertTrue($days->get(9));
        $this->assertSame(2, $days->count(0, 30));
        $this->assertSame(1, $days->count(5, 30));
        $this->assertFalse($days->mark(), 'now: a day not marked yet');
        $this->assertTrue($days->mark());
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $days->mark(($start - 1) * 1000);
    }
}
