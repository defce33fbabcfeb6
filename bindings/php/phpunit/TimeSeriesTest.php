<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\PackedSeries;
use Mcds\TimeSeries;

/**
 * TimeSeries and PackedSeries on both stores: exact aggregates (sums past
 * PHP_INT_MAX as numeric strings), union and intersection, saturating
 * slots, the loss check, and bad input refused with a clear error.
 *
 * The tests record samples of ten minutes ago, before their memcached
 * started: a read with the loss check cannot vouch for those buckets (see
 * testReadsCannotVouchForDataFromBeforeTheServerStarted), so the other
 * tests read without it.
 */
final class TimeSeriesTest extends StoreTestCase
{
    private const SECOND = 1000;
    private const MINUTE = 60_000;
    private const HOUR = 3_600_000;
    private const DAY = 86_400_000;

    private static function nowMs(): int
    {
        return (int)floor(microtime(true) * 1000);
    }

    /** A minute start ten minutes ago: closed buckets, within retention. */
    private static function tenMinutesAgo(): int
    {
        return intdiv(self::nowMs(), self::MINUTE) * self::MINUTE - 10 * self::MINUTE;
    }

    private static function series(\Mcds\Store $store, string $what): TimeSeries
    {
        // Coarsest first: the series keeps them finest first.
        return $store->timeSeries(self::name($what), [[self::MINUTE, self::DAY], [self::SECOND, self::HOUR]])
            ->withLossCheck(false);
    }

    /** @return array{start_ms: int, count: int, sum: int|string, min: int, max: int} */
    private static function bucket(int $start, int $count, int|string $sum, int $min, int $max): array
    {
        return ['start_ms' => $start, 'count' => $count, 'sum' => $sum, 'min' => $min, 'max' => $max];
    }

    /** @dataProvider backends */
    public function testAggregates(string $backend): void
    {
        $t0 = self::tenMinutesAgo();
        $name = self::name('latency');
        $ts = (new TimeSeries(self::store($backend), $name, [[self::MINUTE, self::DAY], [self::SECOND, self::HOUR]]))
            ->withLossCheck(false);
        $this->assertSame($name, $ts->name());
        $this->assertSame([[self::SECOND, self::HOUR], [self::MINUTE, self::DAY]], $ts->resolutions());
        $this->assertNull($ts->aggregate($t0, $t0, self::MINUTE));
        $this->assertSame(0, $ts->count($t0, $t0, self::MINUTE));
        $this->assertSame(0, $ts->sum($t0, $t0, self::MINUTE));
        $this->assertNull($ts->avg($t0, $t0, self::MINUTE));
        $this->assertNull($ts->min($t0, $t0, self::MINUTE));
        $this->assertNull($ts->max($t0, $t0, self::MINUTE));

        $ts->record($t0, 12);
        $ts->record($t0 + 500, -3); // same second
        $ts->record($t0 + 1000, 40); // next second, same minute
        $this->assertSame([self::bucket($t0, 2, 9, -3, 12), self::bucket($t0 + 1000, 1, 40, 40, 40)],
            $ts->range($t0, $t0 + self::MINUTE - 1, self::SECOND));
        $this->assertSame(['count' => 3, 'sum' => 49, 'min' => -3, 'max' => 40],
            $ts->aggregate($t0, $t0, self::MINUTE));
        $this->assertSame(3, $ts->count($t0, $t0 + self::MINUTE - 1, self::SECOND));
        $this->assertSame(49, $ts->sum($t0, $t0 + self::MINUTE - 1, self::SECOND));
        $this->assertSame(49 / 3, $ts->avg($t0, $t0 + self::MINUTE - 1, self::SECOND));
        $this->assertSame(-3, $ts->min($t0, $t0, self::MINUTE));
        $this->assertSame(40, $ts->max($t0, $t0, self::MINUTE));
        $this->assertSame([], $ts->range($t0 + self::SECOND, $t0, self::SECOND), 'backwards');

        $before = self::nowMs();
        $ts->recordNow(-8);
        $this->assertSame(['count' => 1, 'sum' => -8, 'min' => -8, 'max' => -8],
            $ts->aggregate($before, self::nowMs(), self::SECOND));
        $ts->record(5000, 1); // long past retention: not written, no error
        $this->assertSame(0, $ts->count(0, 9999, self::SECOND));
    }

    /** @dataProvider backends */
    public function testSumsPastPhpIntMaxAreExactStrings(string $backend): void
    {
        $t0 = self::tenMinutesAgo();
        $ts = self::series(self::store($backend), 'big');
        for ($i = 0; $i < 3; $i++) {
            $ts->record($t0 + 2000, PHP_INT_MAX);
            $ts->record($t0 + 3000, PHP_INT_MIN);
        }
        $this->assertSame('27670116110564327421', $ts->sum($t0 + 2000, $t0 + 2000, self::SECOND), '3 * (2^63 - 1)');
        $this->assertSame([self::bucket($t0 + 3000, 3, '-27670116110564327424', PHP_INT_MIN, PHP_INT_MIN)],
            $ts->range($t0 + 3000, $t0 + 3000, self::SECOND), '3 * -2^63');
        // Back inside an int: 3 (2^63 - 1) - 3 * 2^63 = -3.
        $this->assertSame(['count' => 6, 'sum' => -3, 'min' => PHP_INT_MIN, 'max' => PHP_INT_MAX],
            $ts->aggregate($t0, $t0, self::MINUTE));
        $ts->record($t0 + 4000, PHP_INT_MAX);
        $ts->record($t0 + 4000, 1);
        $this->assertSame('9223372036854775808', $ts->sum($t0 + 4000, $t0 + 4000, self::SECOND), 'just past');
    }

    /** @dataProvider backends */
    public function testUnionAndIntersection(string $backend): void
    {
        $t0 = self::tenMinutesAgo();
        $store = self::store($backend);
        $a = self::series($store, 'a');
        $b = self::series($store->withPrefix('elsewhere:'), 'b');
        $a->record($t0, 12);
        $a->record($t0 + 500, -3);
        $a->record($t0 + 1000, 40);
        $b->record($t0, 100);
        $b->record($t0 + 5000, 7);
        $this->assertSame([self::bucket($t0, 3, 109, -3, 100)],
            TimeSeries::intersection([$a, $b], $t0, $t0 + self::MINUTE - 1, self::SECOND));
        $this->assertSame([self::bucket($t0, 3, 109, -3, 100), self::bucket($t0 + 1000, 1, 40, 40, 40),
            self::bucket($t0 + 5000, 1, 7, 7, 7)],
            TimeSeries::union([$a, $b], $t0, $t0 + self::MINUTE - 1, self::SECOND));
        $this->assertSame([self::bucket($t0, 5, 156, -3, 100)], TimeSeries::union([$a, $b], $t0, $t0, self::MINUTE));
        $this->assertSame([], TimeSeries::union([], $t0, $t0, self::SECOND));
        $this->assertSame([], TimeSeries::intersection([], $t0, $t0, self::SECOND));
        try {
            TimeSeries::union([$a, self::series(\Mcds\Store::memory(), 'x')], $t0, $t0, self::SECOND);
            $this->fail('series of two stores');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringContainsString('different stores', $e->getMessage());
        }
        try {
            TimeSeries::union([$a, $b], $t0, $t0, 5000);
            $this->fail('a step the series do not record at');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringContainsString('does not record at a step', $e->getMessage());
        }
        $this->expectException(\TypeError::class);
        TimeSeries::union([$a, $store->counter('c')], $t0, $t0, self::SECOND);
    }

    /** @dataProvider backends */
    public function testTimeSeriesRefusesBadInput(string $backend): void
    {
        $store = self::store($backend);
        foreach ([[], [[1000, 3_600_000], [1000, 3_600_000]], [[0, 1000]], [[60_000, 1000]],
            [[1, 10], [2, 10], [3, 10], [4, 10], [5, 10], [6, 10], [7, 10], [8, 10], [9, 10]]] as $bad) {
            try {
                $store->timeSeries(self::name('bad'), $bad);
                $this->fail('resolutions ' . json_encode($bad));
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            }
        }
        foreach ([[1000], [[1000]], [['1000', 3_600_000]], [[1000, 3_600_000, 5]]] as $bad) {
            try {
                $store->timeSeries(self::name('bad'), $bad);
                $this->fail('resolutions ' . json_encode($bad));
            } catch (\TypeError $e) {
                $this->assertStringContainsString('[stepMs, retentionMs] pairs', $e->getMessage());
            }
        }
        try {
            $store->timeSeries('has space', [[1000, 3_600_000]]);
            $this->fail('a bad name');
        } catch (\Mcds\InvalidKeyException $e) {
            $this->assertSame(\Mcds\Exception::INVALID_KEY, $e->getCode());
        }
        $ts = self::series($store, 'bad');
        try {
            $ts->count(0, PHP_INT_MAX, self::SECOND);
            $this->fail('more than 10000 buckets');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringContainsString('at most 10000', $e->getMessage());
        }
        try {
            $ts->sum(0, 0, 0);
            $this->fail('a step of 0');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
        }
        $this->expectException(\ValueError::class);
        $ts->record(-1, 0);
    }

    /** @dataProvider backends */
    public function testPackedSeries(string $backend): void
    {
        $t0 = self::tenMinutesAgo();
        $store = self::store($backend);
        $logins = $store->packedSeries(self::name('logins'), self::MINUTE, 1440, 1, 7 * self::DAY)
            ->withLossCheck(false);
        $this->assertSame(0, $logins->get($t0));
        $this->assertSame(3, $logins->incr($t0, 3));
        $this->assertSame(4, $logins->incr($t0 + 59_000)); // same minute, a delta of 1
        $this->assertSame(255, $logins->incr($t0 + self::MINUTE, 300), 'saturates');
        $this->assertSame([['start_ms' => $t0, 'value' => 4], ['start_ms' => $t0 + self::MINUTE, 'value' => 255],
            ['start_ms' => $t0 + 2 * self::MINUTE, 'value' => 0]], $logins->range($t0, $t0 + 2 * self::MINUTE));
        $this->assertSame(259, $logins->sum($t0, $t0 + 2 * self::MINUTE));
        $this->assertSame([], $logins->range($t0 + self::MINUTE, $t0), 'backwards');
        $before = self::nowMs();
        $value = $logins->incrNow(2);
        $this->assertGreaterThanOrEqual(2, $value);
        $this->assertSame($value, $logins->sum($before, self::nowMs()));

        $wide = (new PackedSeries($store, self::name('wide'), self::MINUTE, 60, 4, self::DAY))->withLossCheck(false);
        $this->assertSame(4294967294, $wide->incr($t0, 4294967294));
        $this->assertSame(4294967295, $wide->incr($t0, 5));
        $this->assertSame(4294967295, $wide->sum($t0, $t0 + self::HOUR));
    }

    /** @dataProvider backends */
    public function testPackedSeriesRefusesBadInput(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('bad');
        foreach ([[self::MINUTE, 60, 3, self::DAY], [0, 60, 1, self::DAY], [self::MINUTE, 0, 1, self::DAY],
            [self::MINUTE, 65_537, 1, self::DAY], [self::MINUTE, 60, 1, self::MINUTE],
            [PHP_INT_MAX, 60, 1, PHP_INT_MAX]] as $bad) {
            try {
                $store->packedSeries($name, ...$bad);
                $this->fail('packed series ' . json_encode($bad));
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            }
        }
        $p = $store->packedSeries($name, self::MINUTE, 60, 2, self::DAY)->withLossCheck(false);
        try {
            $p->incr(1000);
            $this->fail('a slot past retention');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringContainsString('past the retention', $e->getMessage());
        }
        try {
            $p->range(0, self::nowMs() + 400 * self::DAY);
            $this->fail('more than 100000 slots');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringContainsString('at most 100000', $e->getMessage());
        }
        $t0 = self::tenMinutesAgo();
        $p->incr($t0);
        try {
            $store->packedSeries($name, self::MINUTE, 60, 1, self::DAY)->withLossCheck(false)->get($t0);
            $this->fail('the same shape with another width');
        } catch (\Mcds\CorruptException $e) {
            $this->assertSame(\Mcds\Exception::CORRUPT, $e->getCode());
        }
        try {
            $p->incr(self::nowMs(), 4294967296);
            $this->fail('a delta past uint32');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Argument #2', $e->getMessage());
        }
        $this->expectException(\ValueError::class);
        new PackedSeries($store, $name, -1, 60, 1, self::DAY);
    }

    /**
     * A bucket of ten minutes ago on a memcached started since: the server
     * may have lost it (a restart looks the same), so a read with the loss
     * check (the default) is a CorruptException rather than a possibly
     * short answer. The embedded store has lost nothing.
     *
     * @dataProvider backends
     */
    public function testReadsCannotVouchForDataFromBeforeTheServerStarted(string $backend): void
    {
        $t0 = self::tenMinutesAgo();
        $store = self::store($backend);
        $ts = $store->timeSeries(self::name('vouch'), [[self::MINUTE, self::DAY]]);
        $ts->withLossCheck(false)->record($t0, 5);
        $exact = ['count' => 1, 'sum' => 5, 'min' => 5, 'max' => 5];
        if ($backend === 'memory') {
            $this->assertSame($exact, $ts->aggregate($t0, $t0, self::MINUTE));
        } else {
            try {
                $ts->aggregate($t0, $t0, self::MINUTE);
                $this->fail('a bucket from before the server started');
            } catch (\Mcds\LostException $e) {
                $this->assertStringContainsString('may have lost data', $e->getMessage());
                $this->assertSame(\Mcds\Exception::LOST, $e->getCode());
                $this->assertInstanceOf(\Mcds\CorruptException::class, $e);
            }
        }
        $this->assertSame($exact, $ts->withLossCheck(false)->aggregate($t0, $t0, self::MINUTE));
        $packed = $store->packedSeries(self::name('vouch'), self::MINUTE, 60, 1, self::DAY);
        $packed->withLossCheck(false)->incr($t0);
        if ($backend !== 'memory') {
            $this->expectException(\Mcds\LostException::class);
        }
        $this->assertSame(1, $packed->get($t0));
    }

    /** @dataProvider backends */
    public function testSamplesAheadOfTheClockAreRefused(string $backend): void
    {
        $store = self::store($backend);
        $ts = $store->timeSeries(self::name('ahead'), [[self::SECOND, self::HOUR]]);
        $ts->record(self::nowMs() + 5000, 1); // within the default 60 s
        try {
            $ts->withMaxClockSkew(0)->record(self::nowMs() + 5000, 1);
            $this->fail('a sample 5 s ahead, no skew allowed');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringContainsString('when its time comes', $e->getMessage());
        }
        try {
            $store->packedSeries(self::name('ahead'), self::MINUTE, 60, 1, self::DAY)
                ->withMaxClockSkew(0)->incr(self::nowMs() + 5000);
            $this->fail('a slot 5 s ahead, no skew allowed');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
        }
        $this->expectException(\ValueError::class);
        $ts->withMaxClockSkew(-1);
    }
}
