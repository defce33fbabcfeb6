<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Store;

/**
 * After pcntl_fork a child never uses its parent's handles (their
 * connections and leases are the parent's): an object made before the fork
 * throws in the child, and a persistent store is made again there.
 *
 * @requires extension pcntl
 */
final class ForkTest extends StoreTestCase
{
    /** Run $child in a forked process; its exit code (0: it returned true). */
    private static function inChild(callable $child): int
    {
        $pid = pcntl_fork();
        if ($pid === -1) {
            self::fail('pcntl_fork failed');
        }
        if ($pid === 0) {
            $ok = false;
            try {
                $ok = $child();
            } catch (\Throwable $e) {
                fwrite(STDERR, 'child: ' . get_class($e) . ': ' . $e->getMessage() . "\n");
            }
            // Out at once: no PHPUnit shutdown, no destructors of the parent's objects.
            posix_kill(getmypid(), $ok ? SIGUSR1 : SIGUSR2);
        }
        pcntl_waitpid($pid, $status);
        return pcntl_wifsignaled($status) && pcntl_wtermsig($status) === SIGUSR1 ? 0 : 1;
    }

    public function testAnObjectMadeBeforeAForkThrowsInTheChild(): void
    {
        $store = Store::memcached(Memcached::shared()->addr);
        $name = self::name('fork');
        $counter = $store->counter($name);
        $lock = $store->lock(self::name('fork-lock'));
        $this->assertTrue($lock->acquire());
        $this->assertSame(1, $counter->incr());
        $lockName = $lock->getName();
        $code = self::inChild(function () use ($counter, $name, $lockName): bool {
            try {
                $counter->incr();
                return false;
            } catch (\Error $e) {
                if (!str_contains($e->getMessage(), 'before a fork')) {
                    return false;
                }
            }
            // A store made in the child works, on its own connections.
            $own = Store::memcached(Memcached::shared()->addr);
            $mine = $own->lock($lockName);
            return $own->counter($name)->incr() === 2 && !$mine->acquire();
        });
        $this->assertSame(0, $code, 'see the child\'s message on stderr');
        // The parent's connections and lease are intact.
        $this->assertSame(3, $counter->incr());
        $this->assertTrue($lock->isAcquired());
        $this->assertTrue($lock->release());
    }

    public function testAPersistentStoreIsMadeAgainInTheChild(): void
    {
        $server = new Memcached();
        $id = self::name('fork-persistent');
        $store = Store::memcached($server->addr, persistentId: $id);
        $counter = $store->counter('c');
        $this->assertSame(1, $counter->incr());
        $before = $server->stat('total_connections');
        $code = self::inChild(function () use ($server, $id): bool {
            $again = Store::memcached($server->addr, persistentId: $id);
            return $again->isPersistent() && $again->counter('c')->incr() === 2;
        });
        $this->assertSame(0, $code, 'see the child\'s message on stderr');
        $this->assertGreaterThan($before, $server->stat('total_connections'), 'the child dialed its own');
        // The parent's stream is in step: its next reply is its own.
        $this->assertSame(3, Store::memcached($server->addr, persistentId: $id)->counter('c')->incr());
    }
}
