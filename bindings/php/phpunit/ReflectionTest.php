<?php
declare(strict_types=1);

namespace McdsTests;

use PHPUnit\Framework\TestCase;

/** The arginfo (mcds_arginfo.h, generated from mcds.stub.php) is what reflection sees. */
final class ReflectionTest extends TestCase
{
    private const CLASSES = ['Store', 'Counter', 'ShadowCounter', 'ViewCounter', 'Lock', 'Set', 'ShardedSet',
        'IntArray', 'WindowCounter', 'Decision', 'RateLimiter', 'EventLog', 'Cursor', 'Table', 'HyperLogLog',
        'BloomFilter', 'ActivityBitmap', 'Leaderboard', 'ScalableBloomFilter', 'KeyValue'];

    public function testEveryParameterAndReturnHasAType(): void
    {
        $checked = 0;
        foreach (self::CLASSES as $class) {
            $rc = new \ReflectionClass("Mcds\\$class");
            $this->assertTrue($rc->isFinal(), $class);
            $this->assertTrue($rc->isInternal(), $class);
            $this->assertSame('mcds', $rc->getExtensionName());
            foreach ($rc->getMethods() as $m) {
                foreach ($m->getParameters() as $p) {
                    $this->assertTrue($p->hasType(), "$class::{$m->name}(\${$p->name}) has no type");
                    $checked++;
                }
                if ($m->name !== '__construct') {
                    $this->assertTrue($m->hasReturnType(), "$class::{$m->name}() has no return type");
                }
            }
        }
        $this->assertGreaterThan(70, $checked);
        $this->assertSame('string', (string)(new \ReflectionFunction('Mcds\version'))->getReturnType());
    }

    public function testSomeSignaturesExactly(): void
    {
        $sig = static fn (string $method) => (string)(new \ReflectionMethod($method));
        $lock = new \ReflectionMethod('Mcds\Lock', 'acquire');
        $this->assertSame('bool', (string)$lock->getParameters()[0]->getType());
        $this->assertTrue($lock->getParameters()[0]->isDefaultValueAvailable());
        $this->assertFalse($lock->getParameters()[0]->getDefaultValue());
        $this->assertSame('bool', (string)$lock->getReturnType());
        $refresh = (new \ReflectionMethod('Mcds\Lock', 'refresh'))->getParameters()[0];
        $this->assertSame('?float', (string)$refresh->getType());
        $sync = new \ReflectionMethod('Mcds\Lock', 'synchronized');
        $this->assertSame('callable', (string)$sync->getParameters()[0]->getType());
        $this->assertSame('mixed', (string)$sync->getReturnType());
        $merge = (new \ReflectionMethod('Mcds\HyperLogLog', 'merge'))->getParameters()[0];
        $this->assertTrue($merge->isVariadic());
        $this->assertSame('Mcds\HyperLogLog', (string)$merge->getType());
        $this->assertSame('?string', (string)(new \ReflectionMethod('Mcds\Table', 'get'))->getReturnType());
        $this->assertSame('Mcds\Store', (string)(new \ReflectionMethod('Mcds\Store', 'memory'))->getReturnType());
        $this->assertStringContainsString('<optional> bool $sliding = false', $sig('Mcds\RateLimiter::__construct'));
        $this->assertStringContainsString('<optional> float $ttl = 30.0', $sig('Mcds\Store::lock'));
        // The additions of the C ABI parity work.
        $this->assertStringContainsString('<optional> ?float $connectTimeout = null', $sig('Mcds\Store::memcached'));
        $this->assertStringContainsString('<optional> ?float $ioTimeout = null', $sig('Mcds\Store::memcached'));
        $this->assertStringContainsString('<optional> ?int $itemSizeLimit = null', $sig('Mcds\Store::memcached'));
        $this->assertStringContainsString('<optional> ?int $memoryLimit = null', $sig('Mcds\Store::memory'));
        $this->assertStringContainsString('<optional> ?bool $evict = null', $sig('Mcds\Store::memory'));
        $this->assertSame('Mcds\Store', (string)(new \ReflectionMethod('Mcds\Store', 'withPrefix'))->getReturnType());
        $this->assertStringContainsString('<optional> bool $fencing = false', $sig('Mcds\Lock::__construct'));
        $this->assertStringContainsString('<optional> ?string $ownerLabel = null', $sig('Mcds\Store::lock'));
        $this->assertSame('?string', (string)(new \ReflectionMethod('Mcds\Lock', 'getHolder'))->getReturnType());
        $this->assertSame('string|int', (string)(new \ReflectionMethod('Mcds\Lock', 'getFencingToken'))->getReturnType());
        $this->assertStringContainsString('callable $loader', $sig('Mcds\ViewCounter::__construct'));
        $this->assertStringContainsString('<optional> int $ttl = 0', $sig('Mcds\Store::viewCounter'));
        $add = (new \ReflectionMethod('Mcds\IntArray', 'add'))->getParameters()[0];
        $this->assertTrue($add->isVariadic());
        $this->assertSame('int', (string)$add->getType());
        $this->assertSame('?Mcds\Cursor', (string)(new \ReflectionMethod('Mcds\EventLog', 'since'))->getParameters()[0]->getType());
        $this->assertSame('array', (string)(new \ReflectionMethod('Mcds\Set', 'addMany'))->getParameters()[0]->getType());
        $this->assertTrue((new \ReflectionMethod('Mcds\HyperLogLog', 'countUnion'))->getParameters()[0]->isVariadic());
        $this->assertTrue((new \ReflectionProperty('Mcds\Cursor', 'atMs'))->isReadOnly());
        // Counter::reset and incrMany, the sketch batches and clear, withTtl.
        $this->assertSame('void', (string)(new \ReflectionMethod('Mcds\Counter', 'reset'))->getReturnType());
        $incrMany = new \ReflectionMethod('Mcds\Counter', 'incrMany');
        $this->assertTrue($incrMany->isStatic());
        $this->assertSame('array', (string)$incrMany->getReturnType());
        $this->assertSame('array', (string)$incrMany->getParameters()[0]->getType());
        foreach (['Counter', 'Set', 'BloomFilter', 'HyperLogLog', 'ActivityBitmap'] as $class) {
            $withTtl = new \ReflectionMethod("Mcds\\$class", 'withTtl');
            $this->assertSame("Mcds\\$class", (string)$withTtl->getReturnType());
            $this->assertSame('int $seconds', $withTtl->getParameters()[0]->getType() . ' $' . $withTtl->getParameters()[0]->name);
            $this->assertFalse($withTtl->isStatic());
        }
        $this->assertSame('int', (string)(new \ReflectionMethod('Mcds\BloomFilter', 'addMany'))->getReturnType());
        $this->assertSame('array', (string)(new \ReflectionMethod('Mcds\BloomFilter', 'containsMany'))->getReturnType());
        $this->assertSame('bool', (string)(new \ReflectionMethod('Mcds\HyperLogLog', 'addMany'))->getReturnType());
        foreach (['BloomFilter', 'HyperLogLog'] as $class) {
            $this->assertSame('void', (string)(new \ReflectionMethod("Mcds\\$class", 'clear'))->getReturnType());
        }
        // Counter::withKey and Lock::withKey: static constructors on an exact key.
        foreach (['Counter' => 2, 'Lock' => 7] as $class => $count) {
            $withKey = new \ReflectionMethod("Mcds\\$class", 'withKey');
            $this->assertTrue($withKey->isStatic());
            $this->assertSame("Mcds\\$class", (string)$withKey->getReturnType());
            $this->assertSame($count, $withKey->getNumberOfParameters());
            $this->assertStringContainsString('Parameter #0 [ <required> Mcds\Store $store ]', $sig("Mcds\\$class::withKey"));
            $this->assertStringContainsString('Parameter #1 [ <required> string $key ]', $sig("Mcds\\$class::withKey"));
        }
        $this->assertStringContainsString('<optional> float $ttl = 30.0', $sig('Mcds\Lock::withKey'));
        $this->assertStringContainsString('<optional> ?string $ownerLabel = null', $sig('Mcds\Lock::withKey'));
    }

    /**
     * C functions the extension reaches another way, or not at all, on
     * purpose: IntArray::members() reads an mcds_int_list at once with
     * mcds_int_list_data rather than value by value; and a PHP request
     * has no event loop whose tasks could cancel a call waiting on another
     * thread, which is what the mcds_cancel_* tokens are for.
     */
    private const NOT_CALLED_ON_PURPOSE = [
        'mcds_cancel_free', 'mcds_cancel_new', 'mcds_cancel_set_current', 'mcds_cancel_trigger',
        'mcds_int_list_get', 'mcds_int_list_len',
    ];

    /**
     * Every function of include/mcds.h is called from the extension's C
     * sources (as the stub says): a function added to the C ABI must get
     * its PHP method before this passes, or be listed above with its reason.
     */
    public function testEveryFunctionOfTheHeaderIsReached(): void
    {
        $header = file_get_contents(__DIR__ . '/../../../include/mcds.h');
        // Declarations start a line with their return type; comments and
        // continuation lines start with a space, "*" or "/".
        preg_match_all('/^[A-Za-z][^(\n]*?\b(mcds_\w+)\(/m', $header, $m);
        $functions = array_unique($m[1]);
        sort($functions);
        $this->assertGreaterThan(130, count($functions));
        $source = '';
        foreach (glob(__DIR__ . '/../*.c') as $file) {
            // Without comments; a function counts when called or passed on
            // (counter_step(..., mcds_counter_incr)).
            $source .= preg_replace(['#/\*.*?\*/#s', '#//[^\n]*#'], '', file_get_contents($file));
        }
        $this->assertStringContainsString('mcds_counter_new(', $source);
        $notReached = array_values(array_filter($functions, fn ($f) => !preg_match("/\\b$f\\b/", $source)));
        $this->assertSame(self::NOT_CALLED_ON_PURPOSE, $notReached,
            'C functions the extension does not reach, but for NOT_CALLED_ON_PURPOSE (each needs its PHP method)');
    }

    /** The committed arginfo matches the stub: same classes, methods and parameters. */
    public function testTheStubAndTheExtensionAgree(): void
    {
        $stub = file_get_contents(__DIR__ . '/../mcds.stub.php');
        $this->assertStringContainsString(sha1($stub), file_get_contents(__DIR__ . '/../mcds_arginfo.h'),
            'mcds_arginfo.h is stale: run ./gen-arginfo.sh');
        $fromStub = [];
        $class = null;
        foreach (explode("\n", $stub) as $line) {
            if (preg_match('/^\s*(?:final\s+)?class\s+(\w+)/', $line, $m)) {
                $class = $m[1];
                $fromStub[$class] = [];
            } elseif ($class !== null && preg_match('/function\s+(\w+)\s*\(([^)]*)\)/', $line, $m)) {
                preg_match_all('/\$(\w+)/', $m[2], $params);
                $fromStub[$class][$m[1]] = $params[1];
            }
        }
        foreach ($fromStub as $class => $methods) {
            $rc = new \ReflectionClass("Mcds\\$class");
            $own = array_filter($rc->getMethods(), fn ($m) => $m->getDeclaringClass()->name === "Mcds\\$class");
            $fromExt = [];
            foreach ($own as $m) {
                $fromExt[$m->name] = array_map(fn ($p) => $p->name, $m->getParameters());
            }
            ksort($methods);
            ksort($fromExt);
            $this->assertSame($methods, $fromExt, $class);
        }
        $this->assertCount(44, $fromStub, 'classes in the stub: 23 and 21 exceptions');
    }
}
