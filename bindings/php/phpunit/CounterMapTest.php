<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\CounterMap;

/** CounterMap: signed fields, exact decimal strings, the bounds, bad input. */
final class CounterMapTest extends StoreTestCase
{
    private const MAX_AMOUNT = (1 << 56) - 1;

    /** @dataProvider backends */
    public function testFieldsCountSignedAndListInOrder(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('stock');
        $m = $store->counterMap($name);
        $this->assertTrue($m->isEmpty());
        $this->assertSame(0, $m->len());
        $this->assertSame([], $m->getAll());
        $this->assertSame(10, $m->incr('apples', 10));
        $this->assertSame(1, $m->incr('pears'));
        $this->assertSame(-2, $m->incr('apples', -12));
        $this->assertSame(-5, $m->incr("a\0b", -5));
        $this->assertSame(7, $m->incr('42', 7));
        $this->assertSame(-2, $m->get('apples'));
        $this->assertSame(0, $m->get('plums'));
        // First-registration order; "42" is an int key, as in any PHP array.
        $this->assertSame(['apples' => -2, 'pears' => 1, "a\0b" => -5, 42 => 7], $m->getAll());
        $this->assertSame(['apples' => '-2', 'pears' => '1', "a\0b" => '-5', 42 => '7'], $m->getAllDecimal());
        $this->assertSame(['apples', 'pears', "a\0b", '42'], $m->fields());
        $this->assertSame(4, $m->len());
        $this->assertFalse($m->isEmpty());
        $this->assertTrue($m->remove('pears'));
        $this->assertFalse($m->remove('pears'));
        $this->assertSame(['apples', "a\0b", '42'], $m->fields());
        $this->assertSame($name, $m->name());
        $this->assertSame(0, $m->scale());
        $this->assertSame("cmap:$name:fields", $m->registryKey());
        $this->assertStringStartsWith("cmap:$name:v:", $m->fieldKey('apples'));
        $this->assertSame(['apples' => -2, "a\0b" => -5, 42 => 7], (new CounterMap($store, $name))->getAll());
    }

    /** @dataProvider backends */
    public function testDecimalsAreExact(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('money');
        $money = new CounterMap($store, $name, 1);
        $this->assertSame(1, $money->scale());
        $value = '';
        for ($i = 0; $i < 1000; $i++) {
            $value = $money->incrDecimal('ann', '0.1');
        }
        $this->assertSame('100.0', $value);
        $this->assertSame('100.0', $money->getDecimal('ann'));
        $this->assertSame(1000, $money->get('ann'));
        $this->assertSame(1000, $store->counterMap($name)->get('ann'), 'the same counter at scale 0');
        $this->assertSame('99.5', $money->incrDecimal('ann', '-0.50'));
        $this->assertSame('99.6', $money->incrF64('ann', 0.1));
        $this->assertSame('99.5', $money->incrF64('ann', -0.05), 'half away from zero');
        $this->assertSame('-1.5', $money->incrDecimal('bob', '-1.5'));
        $this->assertSame('-1.0', $money->incrDecimal('bob', '+0.5'));
        $this->assertSame('0.0', $money->getDecimal('carol'));
        $this->assertSame(['ann' => '99.5', 'bob' => '-1.0'], $money->getAllDecimal());
        $this->assertSame(['ann' => 995, 'bob' => -10], $money->getAll());
        $wide = $money->withScale(18);
        $this->assertSame(1, $money->scale(), 'unchanged');
        $this->assertSame('-0.000000000000000001', $wide->incrDecimal('tiny', '-0.000000000000000001'));
    }

    /** @dataProvider backends */
    public function testBoundsAndBadInput(string $backend): void
    {
        $store = self::store($backend);
        $m = $store->counterMap(self::name('bounds'));
        $money = $m->withScale(1);
        $invalid = function (callable $call, string $class = \Mcds\InvalidArgumentException::class): void {
            try {
                $call();
                $this->fail("no $class");
            } catch (\Throwable $e) {
                $this->assertInstanceOf($class, $e, $e->getMessage());
            }
        };
        foreach ([self::MAX_AMOUNT + 1, -self::MAX_AMOUNT - 1, PHP_INT_MIN] as $by) {
            $invalid(fn () => $m->incr('big', $by));
        }
        for ($i = 0; $i < 32; $i++) {
            $m->incr('big', self::MAX_AMOUNT);
        }
        $invalid(fn () => $m->incr('big', self::MAX_AMOUNT)); // past 2^61 - 1: undone and refused
        $this->assertSame((1 << 61) - 32, $m->get('big'));
        $low = 0;
        for ($i = 0; $i < 33; $i++) {
            $low = $m->incr('small', -self::MAX_AMOUNT);
        }
        $this->assertSame(-(1 << 61), $low, 'decrements stop at the bottom');
        $this->assertSame(1, $m->incr(str_repeat('f', 1024)));
        $invalid(fn () => $m->incr(str_repeat('f', 1025)));
        $invalid(fn () => $m->get(''));
        $invalid(fn () => $m->incr("\xff\xfe"), \Mcds\InvalidKeyException::class);
        foreach (['0.05', '', '-', '1.', '.5', '1e3', ' 1', '--1', '99999999999999999999', '7205759403792794'] as $bad) {
            $invalid(fn () => $money->incrDecimal('ann', $bad));
        }
        $invalid(fn () => $money->incrDecimal('ann', "1\x005"), \ValueError::class);
        foreach ([NAN, -INF, 1e300] as $bad) {
            $invalid(fn () => $money->incrF64('ann', $bad));
        }
        $invalid(fn () => $m->withScale(19));
        $invalid(fn () => $m->withScale(-1), \ValueError::class);
        $invalid(fn () => new CounterMap($store, self::name('scale'), 19));
        $invalid(fn () => $store->counterMap(self::name('scale'), -1), \ValueError::class);
        $this->assertSame(['big', 'small', str_repeat('f', 1024)], $m->fields(), 'nothing refused created a field');
        $this->assertSame('0.0', $money->getDecimal('ann'));
    }

    public function testFourProcessesCountExactly(): void
    {
        $server = Memcached::shared();
        $name = self::name('processes');
        $iterations = 100;
        $workers = [];
        for ($w = 0; $w < 4; $w++) {
            $workers[] = Php::start(__DIR__ . '/workers/counter_map_worker.php', [$server->addr, $name, (string)$iterations]);
        }
        foreach ($workers as $i => $worker) {
            $r = Php::wait($worker);
            $this->assertSame(0, $r['status'], "worker $i: {$r['stderr']}");
            $this->assertSame("done $iterations\n", $r['stdout']);
        }
        $m = \Mcds\Store::memcached($server->addr)->counterMap($name, 2);
        // Racing first touches register in either order: a process can
        // create "cents" and, before it registers the field, another can
        // increment it and create and register "units". Compare as sets.
        $all = $m->getAllDecimal();
        ksort($all);
        $this->assertSame(['cents' => '4.00', 'units' => '-4.00'], $all);
        $this->assertSame(-400, $m->get('units'));
    }
}
