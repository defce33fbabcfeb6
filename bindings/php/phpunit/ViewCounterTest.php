<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\ViewCounter;

/** Mcds\ViewCounter: its loader is PHP code that libmcds calls back. */
final class ViewCounterTest extends StoreTestCase
{
    /** @dataProvider backends */
    public function testTheLoaderRunsOnAMissOnly(string $backend): void
    {
        $store = self::store($backend);
        $calls = 0;
        $views = new ViewCounter($store, self::name('views'), function () use (&$calls) {
            $calls++;
            return 1000; // SELECT views FROM posts WHERE id = 42
        });
        $this->assertSame(1001, $views->view(), 'a miss: loaded, then counted');
        $this->assertSame(1, $calls);
        $this->assertSame(1002, $views->view());
        $this->assertSame(1012, $views->view(10));
        $this->assertSame(1012, $views->get());
        $this->assertSame(1, $calls, 'hits never call the loader');
        $views->invalidate();
        $this->assertSame(1000, $views->get(), 'a miss: the loader\'s total');
        $this->assertSame(2, $calls);
        $this->assertSame(1001, $views->view());
        $this->assertSame(2, $calls);
        $this->assertSame(1001, $views->view(0));
    }

    /** @dataProvider backends */
    public function testAnotherClientSharesTheCache(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('views');
        $first = $store->viewCounter($name, fn () => 5);
        $this->assertSame(6, $first->view());
        $second = $store->viewCounter($name, fn () => throw new \LogicException('the cache is warm'));
        $this->assertSame(7, $second->view());
        $this->assertSame(7, $first->get());
    }

    /** @dataProvider backends */
    public function testALoaderThatThrows(string $backend): void
    {
        $store = self::store($backend);
        $name = self::name('views');
        $thrown = new \RuntimeException('the database is down', 42);
        $calls = 0;
        $failing = $store->viewCounter($name, function () use ($thrown, &$calls) {
            $calls++;
            throw $thrown;
        });
        foreach (['view' => fn () => $failing->view(), 'get' => fn () => $failing->get()] as $method => $call) {
            try {
                $call();
                $this->fail("$method: no exception");
            } catch (\RuntimeException $e) {
                $this->assertSame($thrown, $e, "$method: the loader's own exception, as it was thrown");
                $this->assertNotInstanceOf(\Mcds\Exception::class, $e);
                $this->assertNull($e->getPrevious());
            }
        }
        $this->assertSame(2, $calls);
        // Nothing was cached or counted: the next loader runs, and the two
        // failed views are not in its total.
        $loaded = 0;
        $working = $store->viewCounter($name, function () use (&$loaded) {
            $loaded++;
            return 10;
        });
        $this->assertSame(10, $working->get());
        $this->assertSame(1, $loaded);
        $this->assertSame(11, $working->view());
    }

    /** @dataProvider backends */
    public function testWhatALoaderMayReturn(string $backend): void
    {
        $store = self::store($backend);
        $this->assertSame(42, $store->viewCounter(self::name('v'), fn () => '42')->get(), 'a numeric string, as PDO gives');
        $this->assertSame(1, $store->viewCounter(self::name('v'), fn () => null)->view(), 'null: no total yet');
        $this->assertSame(PHP_INT_MAX, $store->viewCounter(self::name('v'), fn () => PHP_INT_MAX)->get());
        // Past PHP_INT_MAX a total is a string of digits, as get() returns it
        // (and PDO a BIGINT UNSIGNED), up to 2^64 - 1.
        $this->assertSame('9223372036854775808', $store->viewCounter(self::name('v'), fn () => '9223372036854775808')->get());
        $this->assertSame('18446744073709551615', $store->viewCounter(self::name('v'), fn () => '18446744073709551615')->get());
        $bad = [
            [fn () => '18446744073709551616', \TypeError::class, 'string "18446744073709551616" returned'],
            [fn () => -1, \ValueError::class, 'must return a total >= 0, -1 returned'],
            [fn () => 1.5, \TypeError::class, 'must return an int (the stored total), float returned'],
            [fn () => false, \TypeError::class, 'must return an int (the stored total), bool returned'],
            [fn () => '12 views', \TypeError::class, 'string "12 views" returned'],
            [fn () => [1], \TypeError::class, 'array returned'],
        ];
        foreach ($bad as [$loader, $class, $message]) {
            $name = self::name('v');
            try {
                $store->viewCounter($name, $loader)->view();
                $this->fail("accepted: $message");
            } catch (\Throwable $e) {
                $this->assertInstanceOf($class, $e);
                $this->assertStringContainsString($message, $e->getMessage());
            }
            $this->assertSame(3, $store->viewCounter($name, fn () => 3)->get(), 'nothing was cached');
        }
    }

    /** @dataProvider backends */
    public function testTheLoaderMayUseMcds(string $backend): void
    {
        $store = self::store($backend);
        $db = $store->counter(self::name('db'));
        $db->incr(40);
        $views = $store->viewCounter(self::name('views'), function () use ($db, &$views) {
            // Another libmcds call, and even the same handle, from inside the callback.
            $inner = $views;
            $this->assertInstanceOf(ViewCounter::class, $inner);
            return $db->get();
        });
        $this->assertSame(41, $views->view());
        // A nested view counter whose loader runs while the outer one's does.
        $outer = $store->viewCounter(self::name('outer'), fn () => $store->viewCounter(self::name('inner'), fn () => 7)->view() + 1);
        $this->assertSame(10, $outer->view(), '7 + 1 (the inner view) + 1 (the loader) + 1 (the outer view)');
    }

    public function testAnyCallable(): void
    {
        $store = \Mcds\Store::memory();
        $this->assertSame(3, $store->viewCounter('callable-1', [new \ArrayObject([1, 2, 3]), 'count'])->get());
        $this->assertSame((int)PHP_MAJOR_VERSION, $store->viewCounter('callable-2', 'McdsTests\\phpMajor')->get());
        // A private method, callable where it was passed, is called later too.
        $this->assertSame(12, $store->viewCounter('callable-4', [$this, 'privateLoader'])->get());
        $this->assertSame(13, (new ViewCounter($store, 'callable-5', \Closure::fromCallable([$this, 'privateLoader'])))->view());
        // __call, through a trampoline PHP makes at each call.
        $magic = new class {
            public function __call(string $name, array $args): int
            {
                return strlen($name);
            }
        };
        $this->assertSame(strlen('totalViews'), $store->viewCounter('callable-6', [$magic, 'totalViews'])->get());
        $this->expectException(\TypeError::class);
        $store->viewCounter('callable-3', 'no_such_function'); // @phpstan-ignore-line
    }

    private function privateLoader(): int
    {
        return 12;
    }

    public function testTtlAndDeltaValidation(): void
    {
        $store = \Mcds\Store::memory();
        try {
            $store->viewCounter('v', fn () => 1, -1);
            $this->fail('negative ttl');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Argument #3 ($ttl)', $e->getMessage());
        }
        try {
            new ViewCounter($store, 'v', fn () => 1, -1);
            $this->fail('negative ttl');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('Argument #4 ($ttl)', $e->getMessage());
        }
        $this->expectException(\ValueError::class);
        $store->viewCounter('v', fn () => 1, 60)->view(-1);
    }

    public function testTheCachedTotalExpires(): void
    {
        $calls = 0;
        $views = \Mcds\Store::memcached(Memcached::shared()->addr)->viewCounter(self::name('ttl'), function () use (&$calls) {
            return ++$calls * 100;
        }, ttl: 1);
        $this->assertSame(100, $views->get());
        $deadline = microtime(true) + 5;
        while ($views->get() === 100 && microtime(true) < $deadline) {
            usleep(100_000);
        }
        $this->assertSame(200, $views->get(), 'reloaded once the cached total expired');
    }

    public function testALoaderHoldingItsCounterIsCollected(): void
    {
        $store = \Mcds\Store::memory();
        $views = $store->viewCounter('cycle', function () use (&$views) {
            return $views === null ? 0 : 1;
        });
        $this->assertSame(1, $views->get());
        $weak = \WeakReference::create($views);
        unset($views);
        // The closure holds the counter through $views and the counter holds
        // the closure: a cycle only the collector frees.
        gc_collect_cycles();
        $this->assertNull($weak->get());
    }

    /**
     * What PHP can do in a loader besides return or throw, in a child
     * process each: exit(), and a fatal error, which zend_try catches in
     * the callback and resumes once libmcds has returned (no longjmp over
     * its frames).
     *
     * @return array<string, array{string, int, string}>
     */
    public static function endings(): array
    {
        return [
            'exit' => ['exit(3);', 3, ''],
            'fatal error' => ['ini_set("memory_limit", "16M"); return strlen(str_repeat("x", 64 << 20));', 255,
                'Allowed memory size of 16777216 bytes exhausted'],
            'error exception' => ['return intdiv(1, 0);', 255, 'Uncaught DivisionByZeroError'],
        ];
    }

    /** @dataProvider endings */
    public function testALoaderThatEndsTheScript(string $body, int $status, string $stdout): void
    {
        $script = sys_get_temp_dir() . '/mcds-loader-' . getmypid() . '-' . bin2hex(random_bytes(4)) . '.php';
        file_put_contents($script, <<<PHP
            <?php
            \$store = isset(\$argv[1]) ? Mcds\\Store::memcached(\$argv[1]) : Mcds\\Store::memory();
            \$views = \$store->viewCounter('ending-' . getmypid(), function () { $body });
            register_shutdown_function(fn () => print("shutdown ran\\n"));
            echo "before\\n";
            \$views->view();
            echo "not reached\\n";
            PHP);
        try {
            foreach ([[], [Memcached::shared()->addr]] as $args) {
                $r = Php::wait(Php::start($script, $args));
                $this->assertSame($status, $r['status'], $r['stdout'] . $r['stderr']);
                $this->assertStringStartsWith("before\n", $r['stdout']);
                $this->assertStringContainsString($stdout, $r['stdout'] . $r['stderr']);
                $this->assertStringContainsString("shutdown ran\n", $r['stdout'], 'the request ended normally');
                $this->assertStringNotContainsString('not reached', $r['stdout']);
                $this->assertStringNotContainsString('panic', $r['stderr']);
            }
        } finally {
            @unlink($script);
        }
    }
}

function phpMajor(): int
{
    return PHP_MAJOR_VERSION;
}
