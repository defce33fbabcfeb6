<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Store;

/**
 * Persistent stores ($persistentId) and the ini settings of Store::fromConfig
 * (mcds.servers, mcds.connect_timeout, mcds.io_timeout, mcds.prefix), under
 * php-cli. scripts/check-php-fpm.sh checks them across requests of php-fpm.
 */
final class PersistentStoreTest extends StoreTestCase
{
    private string|false $envServers;

    protected function setUp(): void
    {
        $this->envServers = getenv('MCDS_SERVERS');
        putenv('MCDS_SERVERS'); // unset: every test says what it wants
    }

    protected function tearDown(): void
    {
        foreach (['mcds.servers', 'mcds.connect_timeout', 'mcds.io_timeout', 'mcds.prefix'] as $name) {
            ini_restore($name);
        }
        putenv($this->envServers === false ? 'MCDS_SERVERS' : "MCDS_SERVERS={$this->envServers}");
    }

    private static function id(string $what): string
    {
        return self::name("pid-$what");
    }

    public function testAPersistentStoreKeepsItsConnections(): void
    {
        $server = new Memcached();
        $id = self::id('conns');
        $name = self::name('hits');
        $before = $server->stat('total_connections');
        for ($i = 1; $i <= 10; $i++) {
            // As a request would: a store, a structure, both gone at the end.
            $store = Store::memcached($server->addr, persistentId: $id);
            $this->assertTrue($store->isPersistent());
            $this->assertSame($i, $store->counter($name)->incr());
            unset($store);
        }
        $opened = $server->stat('total_connections') - $before - 1; // the second stats connection
        $this->assertGreaterThanOrEqual(1, $opened);
        $this->assertLessThanOrEqual(2, $opened, 'at most its connections per server (2), once');

        // Without an id, each store opens its own.
        $before = $server->stat('total_connections');
        for ($i = 0; $i < 5; $i++) {
            $store = Store::memcached($server->addr);
            $this->assertFalse($store->isPersistent());
            $store->counter($name)->incr();
            unset($store);
        }
        $this->assertGreaterThanOrEqual(5, $server->stat('total_connections') - $before - 1);
    }

    public function testTheSameIdAndArgumentsShareOneStore(): void
    {
        $id = self::id('memory');
        $a = Store::memory(memoryLimit: 1 << 20, persistentId: $id);
        $a->counter('k')->incr(5);
        unset($a);
        $b = Store::memory(memoryLimit: 1 << 20, persistentId: $id);
        $this->assertSame(5, $b->counter('k')->get(), 'the same embedded store, items and all');
        $this->assertSame(0, Store::memory(memoryLimit: 1 << 20)->counter('k')->get(), 'not without the id');
        $this->assertSame(0, Store::memory(memoryLimit: 1 << 20, persistentId: self::id('other'))->counter('k')->get());
        // Structures outlive the Store objects; a prefixed handle is on the same store.
        $counter = $b->counter('k');
        $prefixed = $b->withPrefix('p/');
        unset($b);
        $this->assertSame(6, $counter->incr());
        $this->assertTrue($prefixed->isPersistent());
        $this->assertSame(1, $prefixed->counter('k')->incr());
        $this->assertSame(7, Store::memory(memoryLimit: 1 << 20, persistentId: $id)->counter('k')->incr());
    }

    /** @return array<string, array{callable(string): Store, callable(string): Store}> */
    public static function mismatches(): array
    {
        $addr = static fn () => Memcached::shared()->addr;
        return [
            'other servers' => [
                static fn (string $id) => Store::memcached($addr(), persistentId: $id),
                static fn (string $id) => Store::memcached('127.0.0.1:' . Memcached::freePort(), persistentId: $id),
            ],
            'other options' => [
                static fn (string $id) => Store::memcached($addr(), ioTimeout: 0.5, persistentId: $id),
                static fn (string $id) => Store::memcached($addr(), ioTimeout: 0.25, persistentId: $id),
            ],
            'an option left out' => [
                static fn (string $id) => Store::memcached($addr(), ioTimeout: 0.5, persistentId: $id),
                static fn (string $id) => Store::memcached($addr(), persistentId: $id),
            ],
            'another factory' => [
                static fn (string $id) => Store::memcached($addr(), persistentId: $id),
                static fn (string $id) => Store::fromUrl($addr(), persistentId: $id),
            ],
            'memory and memcached' => [
                static fn (string $id) => Store::memory(persistentId: $id),
                static fn (string $id) => Store::memcached($addr(), persistentId: $id),
            ],
            'other memory limits' => [
                static fn (string $id) => Store::memory(memoryLimit: 1 << 20, persistentId: $id),
                static fn (string $id) => Store::memory(memoryLimit: 2 << 20, persistentId: $id),
            ],
            'other URLs' => [
                static fn (string $id) => Store::fromUrl("memcached://{$addr()}?timeout_ms=500", persistentId: $id),
                static fn (string $id) => Store::fromUrl("memcached://{$addr()}?timeout_ms=400", persistentId: $id),
            ],
        ];
    }

    /** @dataProvider mismatches */
    public function testTheSameIdWithOtherArgumentsIsRefused(callable $first, callable $second): void
    {
        $id = self::id('mismatch');
        $c = self::name('c');
        $store = $first($id);
        $store->counter($c)->incr();
        try {
            $second($id);
            $this->fail('a persistent id returned a store made with other arguments');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
            $this->assertStringContainsString("the persistent id \"$id\" is already a store of this process", $e->getMessage());
            $this->assertStringContainsString('with other servers or options', $e->getMessage());
        }
        // The first is still there, unchanged.
        $this->assertSame(2, $first($id)->counter($c)->incr());
    }

    public function testTheMismatchMessageRepeatsNoCredentials(): void
    {
        $id = self::id('secret');
        Store::fromUrl('memcached://app:s3cret@' . Memcached::shared()->addr, persistentId: $id);
        try {
            Store::fromUrl('memcached://app:0ther@' . Memcached::shared()->addr, persistentId: $id);
            $this->fail('other credentials reused the store');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringNotContainsString('s3cret', $e->getMessage());
            $this->assertStringNotContainsString('0ther', $e->getMessage());
            $this->assertStringContainsString('made by Mcds\Store::fromUrl()', $e->getMessage());
        }
    }

    /** @return array<string, array{mixed, string}> */
    public static function badIds(): array
    {
        return [
            'empty' => ['', 'must be a persistent id of 1 to 255 bytes, or null'],
            '256 bytes' => [str_repeat('x', 256), 'must be a persistent id of 1 to 255 bytes, or null'],
            'a NUL byte' => ["a\0b", 'must not contain any null bytes'],
        ];
    }

    /** @dataProvider badIds */
    public function testABadIdIsAValueError(string $id, string $message): void
    {
        $calls = [
            'memcached' => fn () => Store::memcached(Memcached::shared()->addr, persistentId: $id),
            'memory' => fn () => Store::memory(persistentId: $id),
            'fromUrl' => fn () => Store::fromUrl('memory://', persistentId: $id),
            'fromConfig' => fn () => Store::fromConfig($id),
        ];
        ini_set('mcds.servers', 'memory://');
        foreach ($calls as $what => $call) {
            try {
                $call();
                $this->fail("$what took the persistent id");
            } catch (\ValueError $e) {
                $this->assertStringContainsString('($persistentId) ' . $message, $e->getMessage(), $what);
            }
        }
    }

    public function testA255ByteIdIsTaken(): void
    {
        $this->assertTrue(Store::memory(persistentId: substr(self::id('long') . str_repeat('z', 255), 0, 255))->isPersistent());
    }

    public function testTheSignatures(): void
    {
        $sig = static fn (string $method) => (string)(new \ReflectionMethod($method));
        foreach (['memcached', 'memory', 'fromUrl', 'fromConfig'] as $factory) {
            $this->assertStringContainsString('<optional> ?string $persistentId = null', $sig("Mcds\\Store::$factory"));
            $this->assertTrue((new \ReflectionMethod('Mcds\Store', $factory))->isStatic());
        }
        $this->assertSame('Mcds\Store', (string)(new \ReflectionMethod('Mcds\Store', 'fromConfig'))->getReturnType());
        $this->assertSame('bool', (string)(new \ReflectionMethod('Mcds\Store', 'isPersistent'))->getReturnType());
    }

    public function testTheIniSettingsAreDeclared(): void
    {
        $all = ini_get_all('mcds', false);
        $this->assertSame(['mcds.connect_timeout' => '', 'mcds.io_timeout' => '', 'mcds.prefix' => '', 'mcds.servers' => ''], $all);
    }

    public function testFromConfigUsesMcdsServers(): void
    {
        $addr = Memcached::shared()->addr;
        $name = self::name('ini');
        ini_set('mcds.servers', $addr);
        putenv('MCDS_SERVERS=127.0.0.1:' . Memcached::freePort()); // the ini setting comes first
        $store = Store::fromConfig();
        $this->assertFalse($store->isPersistent());
        $this->assertSame(3, $store->counter($name)->incr(3));
        $this->assertSame(3, Store::memcached($addr)->counter($name)->get(), 'the server of mcds.servers');
        $this->assertSame(4, Store::fromConfig(self::id('ini'))->counter($name)->incr());
        // A store URL, with its options.
        ini_set('mcds.servers', " memcached://$addr?timeout_ms=500 ");
        $this->assertSame(5, Store::fromConfig()->counter($name)->incr());
        ini_set('mcds.servers', 'memory://');
        $this->assertSame(1, Store::fromConfig()->counter($name)->incr(), 'memory:// is the embedded store');
    }

    public function testFromConfigFallsBackToTheEnvironment(): void
    {
        $addr = Memcached::shared()->addr;
        $name = self::name('env');
        putenv("MCDS_SERVERS=$addr");
        $this->assertSame(2, Store::fromConfig()->counter($name)->incr(2));
        $this->assertSame(2, Store::memcached($addr)->counter($name)->get());
        putenv('MCDS_SERVERS=memcached://127.0.0.1:1?bogus');
        try {
            Store::fromConfig();
            $this->fail('a bad MCDS_SERVERS was taken');
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertStringStartsWith('Mcds\Store::fromConfig(): MCDS_SERVERS in the environment', $e->getMessage());
            $this->assertStringContainsString('bogus', $e->getMessage());
        }
    }

    public function testNothingConfiguredIsAClearError(): void
    {
        foreach (['', '   '] as $value) {
            ini_set('mcds.servers', $value);
            try {
                Store::fromConfig('unconfigured');
                $this->fail('a store without configured servers');
            } catch (\Mcds\InvalidArgumentException $e) {
                $this->assertSame(\Mcds\Exception::INVALID_ARGUMENT, $e->getCode());
                $this->assertStringContainsString('no store is configured: the ini setting mcds.servers is empty '
                    . 'and so is MCDS_SERVERS in the environment (php-fpm clears', $e->getMessage());
                $this->assertStringContainsString('memory:// for the embedded store', $e->getMessage());
            }
        }
        // In a fresh php-cli, no ini setting and no environment: the same error, not the embedded store.
        $script = sys_get_temp_dir() . '/mcds-unconfigured-' . getmypid() . '.php';
        file_put_contents($script, '<?php echo Mcds\Store::fromConfig()->counter("x")->incr();');
        try {
            $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => '']));
            $this->assertNotSame(0, $r['status']);
            $this->assertStringContainsString('Mcds\InvalidArgumentException: Mcds\Store::fromConfig(): no store is configured',
                $r['stdout'] . $r['stderr']);
            $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => ''], ['mcds.servers' => 'memory://']));
            $this->assertSame(['status' => 0, 'stdout' => '1', 'stderr' => ''], $r);
        } finally {
            @unlink($script);
        }
    }

    /** @return array<string, array{string, string}> */
    public static function badTimeouts(): array
    {
        $bad = [];
        foreach (['mcds.connect_timeout', 'mcds.io_timeout'] as $name) {
            foreach (['abc', '0', '-1', '3600.5', 'nan', 'inf', '1e400', '1.5s'] as $v) {
                $bad["$name = $v"] = [$name, $v];
            }
        }
        return $bad;
    }

    /** @dataProvider badTimeouts */
    public function testABadTimeoutSettingIsNamed(string $name, string $value): void
    {
        ini_set('mcds.servers', Memcached::shared()->addr);
        ini_set($name, $value);
        try {
            Store::fromConfig();
            $this->fail("$name = $value was taken");
        } catch (\Mcds\InvalidArgumentException $e) {
            $this->assertSame("Mcds\\Store::fromConfig(): the ini setting $name = \"$value\" must be a number of seconds "
                . 'greater than 0 and at most 3600 (or empty for the default, 1.0)', $e->getMessage());
        }
    }

    public function testTheIoTimeoutSettingIsTaken(): void
    {
        $server = new Memcached();
        ini_set('mcds.servers', $server->addr);
        ini_set('mcds.io_timeout', '0.2');
        ini_set('mcds.connect_timeout', ' 0.5 ');
        $counter = Store::fromConfig()->counter('stalled');
        $this->assertSame(1, $counter->incr());
        $server->pause();
        try {
            $t0 = microtime(true);
            try {
                $counter->incr();
                $this->fail('a stalled server answered');
            } catch (\Mcds\BackendException $e) {
                $this->assertLessThan(0.9, microtime(true) - $t0, 'well under the default timeout of 1 s');
            }
        } finally {
            $server->resume();
        }
        // memory:// has no timeouts: libmcds says so.
        ini_set('mcds.servers', 'memory://');
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $this->expectExceptionMessage('connect_timeout_ms is for memcached');
        Store::fromConfig();
    }

    public function testThePrefixSetting(): void
    {
        $server = Memcached::shared();
        $name = self::name('prefixed');
        ini_set('mcds.servers', $server->addr);
        ini_set('mcds.prefix', 'app&1/');
        Store::fromConfig()->counter($name)->incr(7);
        $this->assertMatchesRegularExpression("/^VALUE app&1\\/counter:$name:value \\d+ \\d+\r\n7/",
            $server->command("get app&1/counter:$name:value"));
        ini_set('mcds.prefix', 'has space');
        try {
            Store::fromConfig();
            $this->fail('a prefix with a space was taken');
        } catch (\Mcds\InvalidKeyException $e) {
            $this->assertStringStartsWith('Mcds\Store::fromConfig(): the ini settings mcds.servers (and mcds.*)', $e->getMessage());
        }
        // A URL with its own prefix and mcds.prefix: libmcds refuses the repetition.
        ini_set('mcds.prefix', 'a/');
        ini_set('mcds.servers', "memcached://{$server->addr}?prefix=b/");
        $this->expectException(\Mcds\InvalidArgumentException::class);
        $this->expectExceptionMessage('prefix is given twice');
        Store::fromConfig();
    }
}
