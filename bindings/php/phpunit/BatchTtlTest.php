<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\ActivityBitmap;
use Mcds\BloomFilter;
use Mcds\Counter;
use Mcds\Exception;
use Mcds\HyperLogLog;
use Mcds\Set;
use Mcds\Store;

/**
 * Counter::reset and incrMany, the BloomFilter and HyperLogLog batches and
 * clear, and withTtl on Counter, Set, BloomFilter, HyperLogLog and
 * ActivityBitmap.
 */
final class BatchTtlTest extends StoreTestCase
{
    /** @dataProvider backends */
    public function testCounterReset(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('reset');
        $c = new Counter($store, $name);
        $c->reset(); // a missing counter: no error
        $this->assertSame(9, $c->incr(9));
        $c->reset();
        $this->assertSame(0, $c->get(), 'it reads 0 again');
        $this->assertSame(0, $store->counter($name)->get(), 'for every handle');
        $this->assertSame(2, $c->incr(2), 'the next increment creates it anew');
        $c->reset();
        $this->assertSame(0, $c->decr(), 'decr of a reset counter');
    }

    /** @dataProvider backends */
    public function testIncrMany(string $backend): void
    {
        $store = self::store($backend);
        $a = $store->counter(self::name('batch'));
        $b = new Counter($store, self::name('batch'));
        $prefixed = $store->withPrefix('php-app/')->counter(self::name('batch'));
        $a->incr(2);
        $this->assertSame([], Counter::incrMany([]), 'none: nothing to do');
        $this->assertSame([12, 1, 17, 3], Counter::incrMany([[$a, 10], [$b, 1], [$a, 5], [$prefixed, 3]]),
            'a counter twice (in order), a prefixed store of the same one');
        $this->assertSame([17, 1, 3], [$a->get(), $b->get(), $prefixed->get()]);
        $this->assertSame([17, 2], Counter::incrMany(['x' => [$a, 0], 7 => [$b, 1]]), 'the keys do not matter');
        $big = $store->counter(self::name('big'));
        $this->assertSame([PHP_INT_MAX], Counter::incrMany([[$big, PHP_INT_MAX]]));
        // Past PHP_INT_MAX a new value is its numeric string, as incr() returns it.
        $this->assertSame([18, '9223372036854775808'], Counter::incrMany([[$a, 1], [$big, 1]]));
        $this->assertSame(18, $a->get(), 'the batch was applied');
        // Without strict_types, deltas convert as an int parameter would.
        $values = (static function (Counter $a): array {
            return eval('return Mcds\Counter::incrMany([[$a, "2"], [$a, 1.0], [$a, true]]);');
        })($a);
        $this->assertSame([20, 21, 22], $values);
    }

    /** Plant a value that is no number where the counter $name of the returned store keeps its value. */
    private static function nonNumericCounter(Store $store, string $name): Counter
    {
        // A table keeps a member's value under "table:<name>:v:<member>".
        $store->table($name)->set("counter:$name:value", 'not a number');
        return $store->withPrefix("table:$name:v:")->counter($name);
    }

    /** @dataProvider backends */
    public function testIncrManyThrowsTheFirstFailureAfterSendingAll(string $backend): void
    {
        $store = self::store($backend);
        $a = $store->counter(self::name('batch'));
        $b = $store->counter(self::name('batch'));
        $name = self::name('nn');
        $nn = self::nonNumericCounter($store, $name);
        try {
            $nn->incr();
            $this->fail('the planted value is a number');
        } catch (\Mcds\NonNumericException $e) {
        }
        try {
            Counter::incrMany([[$a, 1], [$nn, 1], [$b, 5], [$nn, 2]]);
            $this->fail('no exception');
        } catch (\Mcds\NonNumericException $e) {
            $this->assertSame(Exception::NON_NUMERIC, $e->getCode());
            $this->assertStringStartsWith('increments[1]: ', $e->getMessage(), 'the first failure, by position');
            $this->assertStringContainsString($name, $e->getMessage());
        }
        $this->assertSame([1, 5], [$a->get(), $b->get()], 'the others were applied');

        // A server that is down: every increment fails; the first is reported.
        $down = Store::memcached('127.0.0.1:' . Memcached::freePort(), 0.5, 0.5);
        $c = $down->counter('c');
        try {
            Counter::incrMany([[$c, 1], [$down->counter('d'), 1]]);
            $this->fail('no exception');
        } catch (\Mcds\BackendException $e) {
            $this->assertStringStartsWith('increments[0]: ', $e->getMessage());
        }
    }

    /** @dataProvider backends */
    public function testIncrManyRefusesBadInputAndSendsNothing(string $backend): void
    {
        $store = self::store($backend);
        $a = $store->counter(self::name('batch'));
        $other = Store::memory()->counter(self::name('elsewhere'));
        try {
            Counter::incrMany([[$a, 1], [$other, 1]]);
            $this->fail('counters of two stores');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame(Exception::INVALID_ARGUMENT, $e->getCode());
            $this->assertStringContainsString('counters[1] is on another store', $e->getMessage());
        }
        try {
            Counter::incrMany(array_fill(0, 100_001, [$a, 1]));
            $this->fail('over 100 000 increments');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringContainsString('100000', $e->getMessage());
        }
        $bad = [
            'not an array' => ['x', 'string'],
            'null' => [null, 'null'],
            'one element' => [[$a], 'array'],
            'three elements' => [[$a, 1, 2], 'array'],
            'swapped' => [[1, $a], '[int, Mcds\Counter]'],
            'keyed' => [['counter' => $a, 'delta' => 1], 'array'],
            'a counter' => [$a, 'Mcds\Counter'],
            'not a counter' => [[$store->set('s'), 1], '[Mcds\Set, int]'],
            'a string delta' => [[$a, '1'], '[Mcds\Counter, string]'],
            'a float delta' => [[$a, 1.0], '[Mcds\Counter, float]'],
            'a null delta' => [[$a, null], '[Mcds\Counter, null]'],
        ];
        foreach ($bad as $what => [$pair, $given]) {
            try {
                Counter::incrMany([[$a, 1], $pair]);
                $this->fail("accepted $what");
            } catch (\TypeError $e) {
                $this->assertSame('Mcds\Counter::incrMany(): Argument #1 ($increments) must contain only '
                    . "[Mcds\\Counter, int] pairs, $given given at increments[1]", $e->getMessage(), $what);
            }
        }
        try {
            Counter::incrMany([[$a, 1], [$a, -1]]);
            $this->fail('a negative delta');
        } catch (\ValueError $e) {
            $this->assertSame('Mcds\Counter::incrMany(): Argument #1 ($increments) must contain deltas greater '
                . 'than or equal to 0, -1 given at increments[1]', $e->getMessage());
        }
        $this->assertSame(0, $a->get(), 'nothing was sent');
        $this->expectException(\TypeError::class);
        Counter::incrMany('not an array'); // @phpstan-ignore-line
    }

    /** @dataProvider backends */
    public function testBloomFilterBatchesAndClear(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('bloom');
        $f = new BloomFilter($store, $name, 1000, 0.01);
        $this->assertSame(0, $f->addMany([]));
        $this->assertSame([], $f->containsMany([]));
        $this->assertSame(3, $f->addMany(['alice', 'bob', "\x00\xff", 'alice']), 'a repeat counts once');
        $this->assertSame(1, $f->addMany(['k' => 'bob', 9 => 'carol']), 'the keys do not matter');
        $this->assertFalse($f->add('carol'));
        $this->assertSame([true, false, true, true, true], $f->containsMany(['alice', 'dave', "\x00\xff", 'carol', 'bob']));
        $this->assertSame([true, false], $f->containsMany(['x' => 'alice', 'y' => 'dave']), 'a list, in order');
        $in = $out = [];
        for ($i = 0; $i < 300; $i++) {
            $in[] = "in-$i";
            $out[] = "out-$i";
        }
        $this->assertGreaterThan(290, $f->addMany($in));
        $this->assertSame(array_fill(0, 300, true), $f->containsMany($in), 'no false negatives');
        $other = $store->bloomFilter($name, 1000, 0.01);
        $this->assertSame(array_map([$other, 'contains'], $out), $other->containsMany($out), 'as contains() says');
        $f->clear();
        $this->assertSame([false, false], $other->containsMany(['alice', 'in-7']), 'empty again');
        $f->clear(); // an empty filter: no error
        $this->assertSame(1, $f->addMany(['alice']));
        foreach (['addMany', 'containsMany'] as $method) {
            foreach ([[1], ['a', null], [['nested']], [new \stdClass()]] as $elements) {
                try {
                    $f->$method($elements);
                    $this->fail("$method accepted " . json_encode($elements));
                } catch (\TypeError $e) {
                    $this->assertStringContainsString("Mcds\\BloomFilter::$method(): Argument #1 (\$elements) must contain only strings",
                        $e->getMessage());
                }
            }
        }
        $this->assertFalse($f->contains('a'), 'nothing was written');
        (static function (BloomFilter $f): void {
            eval('$f->addMany([42, 2.5]);');
        })($f);
        $this->assertSame([true, true], $f->containsMany(['42', '2.5']), 'coercive mode, as a string parameter');
    }

    /** @dataProvider backends */
    public function testHyperLogLogBatchesAndClear(string $backend): void
    {
        $store = self::store($backend);
        $batch = new HyperLogLog($store, self::name('hll'));
        $one = $store->hyperLogLog(self::name('hll'));
        $this->assertFalse($batch->addMany([]), 'none: nothing changes');
        $elements = [];
        for ($i = 0; $i < 500; $i++) {
            $elements[] = '/page/' . ($i % 200);
            $one->add('/page/' . ($i % 200));
        }
        $this->assertTrue($batch->addMany($elements));
        $this->assertFalse($batch->addMany(['/page/3', '/page/4']), 'nothing new');
        $this->assertSame($one->count(), $batch->count(), 'as one add() each');
        $this->assertEqualsWithDelta(200, $batch->count(), 6);
        $this->assertTrue($batch->addMany(['k' => "\x00bin", 'l' => '']));
        $batch->clear();
        $this->assertSame(0, $batch->count(), 'it counts 0 again');
        $batch->clear(); // a missing sketch: no error
        $this->assertTrue($batch->add('again'));
        $this->assertSame(1, $batch->count());
        try {
            $batch->addMany(['a', 1]);
            $this->fail('an int in strict mode');
        } catch (\TypeError $e) {
            $this->assertStringContainsString('Mcds\HyperLogLog::addMany(): Argument #1 ($elements) must contain only strings, int given',
                $e->getMessage());
        }
        $this->assertSame(1, $batch->count(), 'nothing was written');
        $this->expectException(\TypeError::class);
        $batch->addMany(null); // @phpstan-ignore-line
    }

    /** @dataProvider backends */
    public function testWithTtlMakesANewObjectOnTheSameStructure(string $backend): void
    {
        $store = self::store($backend);
        $c = $store->counter(self::name('c'));
        $s = $store->set(self::name('s'));
        $f = $store->bloomFilter(self::name('f'), 100, 0.01);
        $h = $store->hyperLogLog(self::name('h'));
        $m = $store->activityBitmap(self::name('m'), 1767225600, 1000);
        foreach ([$c, $s, $f, $h, $m] as $original) {
            foreach ([0, 60, 40 * 86400, 4294967295] as $ttl) {
                $derived = $original->withTtl($ttl);
                $this->assertInstanceOf(get_class($original), $derived);
                $this->assertNotSame($original, $derived);
            }
        }
        $ct = $c->withTtl(3600);
        $this->assertSame(2, $ct->incr(2));
        $this->assertSame(5, $c->incr(3), 'the same counter');
        $this->assertSame(5, $ct->get());
        $ct->reset();
        $this->assertSame(0, $c->get());
        $this->assertSame([1, 1], Counter::incrMany([[$c, 1], [$ct, 0]]), 'one store: they go in one batch');
        $st = $s->withTtl(3600);
        $st->addMany(['a', 'b']);
        $s->add('c');
        $this->assertSame(['a', 'b', 'c'], $st->members());
        $ft = $f->withTtl(3600);
        $this->assertSame(2, $ft->addMany(['x', 'y']));
        $this->assertSame([true, true, false], $f->containsMany(['x', 'y', 'z']));
        $ht = $h->withTtl(3600);
        $ht->addMany(['p', 'q']);
        $h->add('r');
        $this->assertSame(3, $ht->count());
        $other = $store->hyperLogLog(self::name('h'));
        $other->add('s');
        $ht->merge($other);
        $this->assertSame(4, $h->count(), 'merge() takes sketches of the same store');
        $this->assertSame(4, $other->countUnion($ht));
        $mt = $m->withTtl(3600);
        $this->assertFalse($mt->set(5));
        $this->assertTrue($m->get(5));
        unset($store, $c, $s, $f, $h, $m, $other);
        gc_collect_cycles();
        $this->assertSame(2, $ct->incr(), 'a derived object keeps the store alive');
        foreach ([$ct, $st, $ft, $ht, $mt] as $derived) {
            foreach ([-1, 4294967296, PHP_INT_MIN] as $bad) {
                try {
                    $derived->withTtl($bad);
                    $this->fail(get_class($derived) . "::withTtl($bad)");
                } catch (\ValueError $e) {
                    $this->assertSame(get_class($derived) . '::withTtl(): Argument #1 ($seconds) must be between 0 and '
                        . '4294967295 seconds', $e->getMessage());
                }
            }
        }
        $this->expectException(\TypeError::class);
        $ct->withTtl(1.5); // @phpstan-ignore-line
    }

    /**
     * Items written through a 2 s TTL go, and those of the original and of
     * TTLs of 0, 40 days (past memcached's 30-day limit for relative
     * times) and the largest stay: one sleep for both stores.
     */
    public function testItemsWrittenWithATtlExpire(): void
    {
        $ttls = ['expires' => 2, 'original' => null, 'ttl 0' => 0, 'ttl 40 days' => 40 * 86400, 'ttl max' => 4294967295];
        $items = [];
        foreach (['memory', 'memcached'] as $backend) {
            $store = self::store($backend);
            $new = [
                'counter' => fn (string $n) => $store->counter($n),
                'set' => fn (string $n) => $store->set($n),
                'bloom' => fn (string $n) => $store->bloomFilter($n, 100, 0.01),
                'hll' => fn (string $n) => $store->hyperLogLog($n),
                'bitmap' => fn (string $n) => $store->activityBitmap($n, 1767225600, 1000),
            ];
            foreach ($new as $what => $make) {
                foreach ($ttls as $how => $ttl) {
                    $o = $make(self::name("ttl-$what"));
                    $o = $ttl === null ? $o : $o->withTtl($ttl);
                    match ($what) {
                        'counter' => $o->incr(),
                        'set' => $o->add('m'),
                        'bloom' => $o->addMany(['e']),
                        'hll' => $o->addMany(['e']),
                        'bitmap' => $o->set(3),
                    };
                    $items["$backend $what $how"] = [$what, $o];
                }
            }
        }
        $present = static fn (string $what, object $o): bool => match ($what) {
            'counter' => $o->get() === 1,
            'set' => $o->members() === ['m'],
            'bloom' => $o->contains('e'),
            'hll' => $o->count() === 1,
            'bitmap' => $o->get(3),
        };
        foreach ($items as $which => [$what, $o]) {
            $this->assertTrue($present($what, $o), "$which: written");
        }
        usleep(3_500_000); // memcached: an item with a TTL of 2 s lives 1 to 3 s
        foreach ($items as $which => [$what, $o]) {
            $this->assertSame(!str_ends_with($which, 'expires'), $present($what, $o), $which);
        }
    }
}
