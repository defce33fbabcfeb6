<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Cursor;
use Mcds\IntArray;
use Mcds\Set;
use Mcds\ShadowCounter;
use Mcds\ShardedSet;

/**
 * What the C ABI parity work brought: ShadowCounter, ShardedSet, IntArray,
 * Set batches, compact and clear, Table::entries, EventLog::putAt and
 * since, HyperLogLog::countUnion.
 */
final class ParityTest extends StoreTestCase
{
    /** @dataProvider backends */
    public function testShadowCounter(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('shadow');
        // Start early in a second, so the counting below stays in one period.
        self::sleepToNextSecond(0.02);
        $c = new ShadowCounter($store, $name, 1);
        $this->assertSame(0, $c->value(), 'no previous period yet');
        $this->assertSame(1, $c->incr());
        $this->assertSame(4, $store->shadowCounter($name, 1)->incr(3));
        $this->assertSame(0, $c->value(), 'the current period is not shown');
        self::sleepToNextSecond(0.05);
        $this->assertSame(4, $c->value(), 'the previous period');
        $this->assertSame(1, $c->incr(), 'a new period counts from 0');
        try {
            new ShadowCounter($store, $name, -1);
            $this->fail('negative period');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Argument #3 ($periodSeconds)', $e->getMessage());
        }
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $store->shadowCounter($name, 0);
    }

    /** Sleep until $after seconds into the next second of Unix time. */
    private static function sleepToNextSecond(float $after): void
    {
        $now = microtime(true);
        usleep((int)((floor($now) + 1 + $after - $now) * 1e6));
    }

    /** @dataProvider backends */
    public function testSetBatchesCompactAndClear(string $backend): void
    {
        $s = new Set(self::store($backend), self::name('set'));
        $s->addMany([]);
        $this->assertSame([], $s->members());
        $s->addMany(['a', 'b', "c\x00", '', 'a']);
        $s->addMany(['k' => 'keyed', 7 => 'numbered']); // the keys do not matter
        $this->assertSame(['a', 'b', "c\x00", '', 'keyed', 'numbered'], $s->members());
        $s->removeMany(['a', 'keyed', 'absent']);
        $this->assertSame(['b', "c\x00", '', 'numbered'], $s->members());
        $this->assertFalse($s->contains('a'));
        $this->assertTrue($s->compact(), 'the tokens of removed members went');
        $this->assertFalse($s->compact(), 'nothing left to compact');
        $this->assertSame(['b', "c\x00", '', 'numbered'], $s->members());
        $s->clear();
        $this->assertSame([], $s->members());
        $this->assertFalse($s->contains('b'));
        $s->clear(); // a missing set stays missing
        $s->add('again');
        $this->assertSame(['again'], $s->members());
    }

    public function testBatchMembersMustBeStrings(): void
    {
        $s = \Mcds\Store::memory()->set('typed');
        foreach ([[1], ['a', null], ['a', ['nested']], [new \stdClass()]] as $members) {
            try {
                $s->addMany($members);
                $this->fail('accepted ' . json_encode($members));
            } catch (\TypeError $e) {
                $this->assertStringContainsString('Mcds\Set::addMany(): Argument #1 ($members) must contain only strings', $e->getMessage());
            }
        }
        $this->assertSame([], $s->members(), 'nothing was written');
        // Without strict_types, as a string parameter: ints, floats and Stringables become strings.
        $stringable = new class {
            public function __toString(): string
            {
                return 'str';
            }
        };
        (static function (Set $s, object $stringable): void {
            eval('$s->addMany([1, 2.5, $stringable]); $s->removeMany([1]);');
        })($s, $stringable);
        $this->assertSame(['2.5', 'str'], $s->members());
    }

    /** @dataProvider backends */
    public function testShardedSet(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('sharded');
        $s = new ShardedSet($store, $name, 8);
        $this->assertSame([], $s->members());
        $members = [];
        for ($i = 0; $i < 50; $i++) {
            $members[] = "user:$i";
        }
        $s->addMany($members);
        $s->add('one more');
        $s->add("bin\x00\xff");
        $expected = [...$members, 'one more', "bin\x00\xff"];
        $this->assertEqualsCanonicalizing($expected, $s->members());
        $other = $store->shardedSet($name, 8);
        $this->assertTrue($other->contains('user:7'));
        $this->assertTrue($other->contains("bin\x00\xff"));
        $this->assertFalse($other->contains('user:50'));
        $s->remove('one more');
        $s->removeMany(['user:0', 'user:1', 'absent']);
        $this->assertFalse($s->contains('user:0'));
        $this->assertEqualsCanonicalizing(array_values(array_diff($expected, ['one more', 'user:0', 'user:1'])), $other->members());
        $s->compact();
        $this->assertCount(49, $s->members());
        $s->clear();
        $this->assertSame([], $other->members());
        foreach ([0, 4097] as $shards) {
            try {
                $store->shardedSet($name, $shards);
                $this->fail("$shards shards");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            }
        }
        $this->expectException(\TypeError::class);
        $s->addMany([1]);
    }

    /** @dataProvider backends */
    public function testIntArray(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('ints');
        $a = new IntArray($store, $name);
        $this->assertSame([], $a->members());
        $a->add(); // nothing to do
        $a->add(3, 1, 2);
        $a->add(...[PHP_INT_MAX, PHP_INT_MIN, -7, 0, 1]);
        $this->assertSame([3, 1, 2, PHP_INT_MAX, PHP_INT_MIN, -7, 0], $a->members());
        $this->assertTrue($a->contains(PHP_INT_MIN));
        $this->assertFalse($a->contains(4));
        $a->remove(1, -7, 99);
        $this->assertSame([3, 2, PHP_INT_MAX, PHP_INT_MIN, 0], $store->intArray($name)->members());
        $a->clear();
        $this->assertSame([], $a->members());
        try {
            $a->add(1, '2'); // @phpstan-ignore-line
            $this->fail('a string in strict mode');
        } catch (\TypeError $e) {
            $this->assertStringContainsString('Mcds\IntArray::add(): Argument #2 must be of type int, string given', $e->getMessage());
        }
        $this->assertSame([], $a->members(), 'nothing was written');
        (static function (IntArray $a): void {
            eval('$a->add("5", 6.0);');
        })($a);
        $this->assertSame([5, 6], $a->members(), 'coercive mode, as an int parameter');
    }

    /** @dataProvider backends */
    public function testTableEntries(string $backend): void
    {
        $t = self::store($backend)->table(self::name('table'));
        $this->assertSame([], $t->entries());
        $t->set('alice', '{"age":30}');
        $t->set("b\x00b", "\xff");
        $t->set('carol', '');
        $t->set('alice', 'v2');
        $this->assertSame(['alice' => 'v2', "b\x00b" => "\xff", 'carol' => ''], $t->entries());
        $t->delete('carol');
        $t->set('42', 'numeric');
        $this->assertSame(['alice' => 'v2', "b\x00b" => "\xff", 42 => 'numeric'], $t->entries(), 'as in any PHP array');
    }

    /** @dataProvider backends */
    public function testEventLogPutAtAndSince(string $backend): void
    {
        $log = self::store($backend)->eventLog(self::name('log'), 10, 7);
        [$events, $start] = $log->since();
        $this->assertSame([], $events);
        $this->assertInstanceOf(Cursor::class, $start);
        $now = (int)floor(microtime(true) * 1000);
        $log->putAt($now - 30_000, 'late');
        $at = $log->put('now');
        [$events, $cursor] = $log->since();
        $this->assertSame([['at_ms' => $now - 30_000, 'payload' => 'late'], ['at_ms' => $at, 'payload' => 'now']], $events);
        $this->assertSame($at, $cursor->atMs);
        $this->assertSame(1, $cursor->seenAtMs);
        [$events, $same] = $log->since($cursor);
        $this->assertSame([], $events, 'nothing new');
        $this->assertEquals($cursor, $same);
        $log->putAt($at, 'same ms'); // a second event at the cursor's timestamp is still seen
        usleep(2000);
        $at3 = $log->put("\x00third");
        [$events, $next] = $log->since($cursor);
        $this->assertSame([['at_ms' => $at, 'payload' => 'same ms'], ['at_ms' => $at3, 'payload' => "\x00third"]], $events);
        $this->assertSame($at3, $next->atMs);
        // A cursor is a plain value: kept as two integers, or serialized.
        [$events] = $log->since(new Cursor($next->atMs, $next->seenAtMs));
        $this->assertSame([], $events);
        [$events] = $log->since(unserialize(serialize($cursor)));
        $this->assertCount(2, $events);
        [$events] = $log->since(Cursor::after($at));
        $this->assertSame([['at_ms' => $at3, 'payload' => "\x00third"]], $events);
        [$events] = $log->since(new Cursor());
        $this->assertCount(4, $events);
        $this->assertSame($log->fetch(0, PHP_INT_MAX), $events);
        // Outside the current chunk and the log's capacity before it.
        foreach ([$now - 3_600_000, $now + 3_600_000] as $bad) {
            try {
                $log->putAt($bad, 'x');
                $this->fail("putAt($bad)");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            }
        }
        $this->expectException(\ValueError::class);
        $log->putAt(-1, 'x');
    }

    public function testCursorValues(): void
    {
        $c = new Cursor(5, 2);
        $this->assertSame([5, 2], [$c->atMs, $c->seenAtMs]);
        $this->assertEquals(new Cursor(0, 0), new Cursor());
        $this->assertEquals(new Cursor(1001, 0), Cursor::after(1000));
        try {
            $c->atMs = 1; // @phpstan-ignore-line
            $this->fail('a cursor changed');
        } catch (\Error $e) {
            $this->assertStringContainsString('readonly', $e->getMessage());
        }
        foreach ([fn () => new Cursor(-1), fn () => new Cursor(0, -1), fn () => Cursor::after(PHP_INT_MAX)] as $bad) {
            try {
                $bad();
                $this->fail('a bad cursor');
            } catch (\ValueError $e) {
                $this->assertStringContainsString('Argument #', $e->getMessage());
            }
        }
        $this->expectException(\Error::class);
        $c->__construct(1, 1); // readonly: constructed once
    }

    /** @dataProvider backends */
    public function testHyperLogLogCountUnion(string $backend): void
    {
        $store = self::store($backend);
        $a = $store->hyperLogLog(self::name('hll'));
        $b = $store->hyperLogLog(self::name('hll'));
        $c = $store->withPrefix('other/')->hyperLogLog(self::name('hll'));
        for ($i = 0; $i < 100; $i++) {
            $a->add("/page/$i");
            $b->add('/page/' . ($i + 50));
            $c->add("/other/$i");
        }
        $this->assertSame(0, $store->hyperLogLog(self::name('hll'))->countUnion(), 'an empty sketch alone');
        $this->assertEqualsWithDelta(100, $a->countUnion(), 3, 'itself alone');
        $this->assertEqualsWithDelta(150, $a->countUnion($b), 5);
        $this->assertEqualsWithDelta(250, $a->countUnion($b, $c), 8, 'a prefixed handle of the same store');
        $this->assertEqualsWithDelta(100, $a->count(), 3, 'nothing was written');
        $this->assertEqualsWithDelta(100, $b->count(), 3);
        try {
            $a->countUnion(\Mcds\Store::memory()->hyperLogLog('elsewhere'));
            $this->fail('sketches of two stores');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
        }
        $this->expectException(\TypeError::class);
        $this->expectExceptionMessage('Argument #2 must be of type Mcds\HyperLogLog, Mcds\Set given');
        $a->countUnion($b, $store->set('x')); // @phpstan-ignore-line
    }
}
