<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\KeyValue;

/** Plain key/value on a store ($store->kv()), as php-memcached has it. */
final class KeyValueTest extends StoreTestCase
{
    /** @dataProvider backends */
    public function testGetSetAddDelete(string $backend): void
    {
        $kv = self::store($backend)->kv();
        $this->assertInstanceOf(KeyValue::class, $kv);
        $key = self::name('kv');
        $this->assertNull($kv->get($key));
        $kv->set($key, 'v1');
        $this->assertSame('v1', $kv->get($key));
        $this->assertFalse($kv->add($key, 'v2'), 'add of a present key stores nothing');
        $this->assertSame('v1', $kv->get($key));
        $kv->set($key, "bin\0ary", 60);
        $this->assertSame("bin\0ary", $kv->get($key));
        $this->assertTrue($kv->delete($key));
        $this->assertFalse($kv->delete($key));
        $this->assertTrue($kv->add($key, ''));
        $this->assertSame('', $kv->get($key), 'an empty value is a value');
    }

    /** @dataProvider backends */
    public function testIncrCreatesNothingUnlessGivenAnInitialValue(string $backend): void
    {
        $kv = new KeyValue(self::store($backend));
        $key = self::name('n');
        $this->assertNull($kv->incr($key), "memcached's incr creates nothing");
        $this->assertNull($kv->get($key));
        $this->assertSame(10, $kv->incr($key, 5, 10, 60), 'created with initial, not initial + delta');
        $this->assertSame(15, $kv->incr($key, 5));
        $this->assertSame(20, $kv->incr($key, 5, 10), 'initial only applies to an absent counter');
        $this->assertSame('20', $kv->get($key));
        $this->assertSame('9223372036854775827', $kv->incr($key, PHP_INT_MAX), 'past PHP_INT_MAX: a numeric string');
        $kv->set($key, 'not a number');
        try {
            $kv->incr($key);
            $this->fail('incr of a non-number');
        } catch (\Mcds\NonNumericException $e) {
            $this->assertSame(\Mcds\Exception::NON_NUMERIC, $e->getCode());
        }
        $this->expectException(\ValueError::class);
        $kv->incr($key, -1);
    }

    /** @dataProvider backends */
    public function testKeysGoThroughThePrefixAndBadOnesAreRefused(string $backend): void
    {
        $store = self::store($backend);
        $key = self::name('p');
        $app = $store->withPrefix('app/')->kv();
        $app->set($key, 'x');
        $this->assertSame('x', $store->kv()->get('app/' . $key));
        $this->assertNull($store->kv()->get($key));
        foreach (['', 'a b', "line\nbreak", str_repeat('x', 251), str_repeat('x', 247)] as $bad) {
            try {
                $app->set($bad, 'v');
                $this->fail('a bad key accepted: ' . json_encode($bad));
            } catch (\Mcds\InvalidKeyException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_KEY, $e->getCode());
            }
        }
        $this->expectException(\ValueError::class);
        $app->set($key, 'v', -1);
    }
}
