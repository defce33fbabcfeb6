<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Leaderboard;
use Mcds\ScalableBloomFilter;

/** Leaderboard and ScalableBloomFilter, on both backends. */
final class LeaderboardTest extends StoreTestCase
{
    /** @return array{member: string, count: int, error: int} */
    private static function entry(string $member, int $count, int $error): array
    {
        return ['member' => $member, 'count' => $count, 'error' => $error];
    }

    /** @dataProvider backends */
    public function testLeaderboardIsExactBelowItsCapacity(string $backend): void
    {
        $name = self::name('board');
        $b = new Leaderboard(self::store($backend), $name, 3);
        $this->assertSame(3, $b->capacity());
        $this->assertSame("topk:$name:board", $b->key());
        $this->assertSame(['capacity' => 3, 'total' => 0, 'exact' => true, 'maxError' => 0, 'members' => 0],
            $b->summary());
        $this->assertNull($b->score('ann'));
        $this->assertSame(5, $b->incr('ann', 5));
        $this->assertSame(3, $b->incr('bob', 3));
        $this->assertSame(1, $b->incr('cy'));
        $this->assertSame(7, $b->incr('ann', 2));
        $this->assertSame([self::entry('ann', 7, 0), self::entry('bob', 3, 0), self::entry('cy', 1, 0)],
            $b->top(10));
        $this->assertSame([], $b->top(0));
        $this->assertSame(self::entry('bob', 3, 0), $b->score('bob'));
        $this->assertSame(['capacity' => 3, 'total' => 11, 'exact' => true, 'maxError' => 0, 'members' => 3],
            $b->summary());
    }

    /**
     * Counts past PHP_INT_MAX come back as numeric strings: an increment
     * that was applied is never reported as a failure (a retry would count
     * it twice).
     *
     * @dataProvider backends
     */
    public function testCountsPastPhpIntMaxAreNumericStrings(string $backend): void
    {
        $b = self::store($backend)->leaderboard(self::name('board'), 3);
        $this->assertSame(PHP_INT_MAX, $b->incr('big', PHP_INT_MAX));
        $this->assertSame('9223372036854775808', $b->incr('big', 1));
        $this->assertSame(['member' => 'big', 'count' => '9223372036854775808', 'error' => 0],
            $b->score('big'));
        $this->assertSame([['member' => 'big', 'count' => '9223372036854775808', 'error' => 0]],
            $b->top(1));
        $this->assertSame('9223372036854775808', $b->summary()['total']);
    }

    /** @dataProvider backends */
    public function testLeaderboardReportsItsErrorPastItsCapacity(string $backend): void
    {
        $b = self::store($backend)->leaderboard(self::name('board'), 3);
        $b->incrMany(['ann' => 7, 'bob' => 3, '42' => 1]);
        $this->assertSame(self::entry('42', 1, 0), $b->score('42'));
        // Full: dan replaces 42 (the smallest, 1) and starts at 1 + 2, error 1.
        $this->assertSame(3, $b->incr('dan', 2));
        $this->assertSame(self::entry('dan', 3, 1), $b->score('dan'));
        $this->assertNull($b->score('42'));
        $this->assertSame(['capacity' => 3, 'total' => 13, 'exact' => false, 'maxError' => 3, 'members' => 3],
            $b->summary());
        // bob and dan tie at 3: by member bytes.
        $this->assertSame([self::entry('ann', 7, 0), self::entry('bob', 3, 0)], $b->top(2));
        $this->assertSame(self::entry('dan', 3, 1), $b->top(PHP_INT_MAX)[2]);
        $ttl = $b->withTtl(3600);
        $this->assertSame(8, $ttl->incr('ann'));
        $b->clear();
        $this->assertSame(0, $b->summary()['total']);
        $this->assertSame([], $b->top(5));
    }

    /** @dataProvider backends */
    public function testLeaderboardRefusesBadInputAndCountsNothing(string $backend): void
    {
        $store = self::store($backend);
        $b = new Leaderboard($store, self::name('board'), 4);
        $b->incr('ann', 2);
        $refused = [
            fn () => $b->incr('ann', 0),
            fn () => $b->incr(str_repeat('m', 129)),
            fn () => $b->incrMany(['bob' => 1, str_repeat('m', 129) => 1]),
            fn () => $b->incrMany(['bob' => 1, 'cy' => 0]),
            fn () => new Leaderboard($store, self::name('board'), 0),
            fn () => new Leaderboard($store, self::name('board'), 4294967295),
        ];
        foreach ($refused as $i => $call) {
            try {
                $call();
                $this->fail("call $i was accepted");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            }
        }
        $this->assertSame(2, $b->summary()['total'], 'nothing was counted');
        $this->assertSame(3, $b->incr(str_repeat('m', 128), 3));
        $this->assertSame(1, $b->incr(''));
        $this->assertSame(self::entry('', 1, 0), $b->score(''));
    }

    /** @dataProvider backends */
    public function testLeaderboardRefusesOutOfRangeArguments(string $backend): void
    {
        $b = new Leaderboard(self::store($backend), self::name('board'), 4);
        foreach ([fn () => $b->incr('a', -1), fn () => $b->top(-1), fn () => $b->withTtl(-1),
                  fn () => new Leaderboard(self::store($backend), 'x', -1)] as $i => $call) {
            try {
                $call();
                $this->fail("call $i was accepted");
            } catch (\ValueError $e) {
                $this->assertStringContainsString('must be ', $e->getMessage());
            }
        }
        $this->expectException(\TypeError::class);
        $b->incrMany(['a' => 'one']);
    }

    /** @dataProvider backends */
    public function testLeaderboardOfAnotherCapacityIsRefused(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('board');
        (new Leaderboard($store, $name, 3))->incr('ann');
        $this->expectException(\Mcds\CorruptException::class);
        $this->expectExceptionMessage('capacity 3');
        (new Leaderboard($store, $name, 5))->summary();
    }

    /** @dataProvider backends */
    public function testScalableBloomFilterGrowsAndForgetsNothing(string $backend): void
    {
        $name = self::name('sbloom');
        $f = new ScalableBloomFilter(self::store($backend), $name, 100, 0.01);
        $this->assertSame("sbloom:$name:meta", $f->headerKey());
        $this->assertSame(1, $f->layers());
        $added = [];
        $others = [];
        for ($i = 0; $i < 1000; $i++) {
            $added[] = "e$i";
            $others[] = "o$i";
        }
        $new = 0;
        foreach ($added as $e) {
            $new += $f->add($e) ? 1 : 0;
        }
        $this->assertGreaterThan(980, $new, 'a few false positives at most');
        $this->assertGreaterThanOrEqual(4, $f->layers(), '100, 200, 400, 800');
        $this->assertLessThanOrEqual(6, $f->layers());
        $this->assertFalse($f->add('e7'));
        $this->assertTrue($f->contains('e999'));
        $this->assertSame(array_fill(0, 1000, true), $f->containsMany($added), 'no false negatives');
        $this->assertLessThan(30, count(array_filter($f->containsMany($others))), 'rate 0.01: about 10');
        $this->assertSame([], $f->containsMany([]));
        $f->clear();
        $this->assertSame(1, $f->layers());
        $this->assertFalse($f->contains('e7'));
    }

    /** @dataProvider backends */
    public function testScalableBloomFilterGrowth(string $backend): void
    {
        $f = self::store($backend)->scalableBloomFilter(self::name('sbloom'), 100, 0.01);
        foreach ([0, 17, 4294967295] as $growth) {
            try {
                $f->withGrowth($growth);
                $this->fail("growth $growth was accepted");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertStringContainsString('1 to 16', $e->getMessage());
            }
        }
        $wide = $f->withGrowth(4);
        $this->assertInstanceOf(ScalableBloomFilter::class, $wide);
        for ($i = 0; $i < 1000; $i++) {
            $wide->add("e$i");
        }
        $this->assertContains($wide->layers(), [2, 3], '100, 400, 1600');
        // Made with growth 4: growth 2 is refused, not misread.
        $this->expectException(\Mcds\CorruptException::class);
        $f->contains('e1');
    }

    /** @dataProvider backends */
    public function testScalableBloomFilterRefusesBadNumbers(string $backend): void
    {
        $store = self::store($backend);
        foreach ([[0, 0.01], [100, 1.5], [100, NAN]] as [$capacity, $rate]) {
            try {
                new ScalableBloomFilter($store, self::name('sbloom'), $capacity, $rate);
                $this->fail("($capacity, $rate) was accepted");
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            }
        }
        $this->expectException(\ValueError::class);
        new ScalableBloomFilter($store, self::name('sbloom'), -1, 0.01);
    }
}
