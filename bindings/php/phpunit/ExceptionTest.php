<?php
declare(strict_types=1);

namespace McdsTests;

use Mcds\Exception;
use Mcds\Store;

final class ExceptionTest extends StoreTestCase
{
    public function testTheHierarchy(): void
    {
        $this->assertSame(['RuntimeException', 'Exception'], array_values(class_parents(Exception::class)));
        $direct = ['InternalException', 'CallbackFailedException', 'InvalidKeyException', 'ValueTooLargeException', 'InvalidArgumentException',
            'NonNumericException', 'CorruptException', 'BackendException', 'ConflictException',
            'UnsupportedException', 'WaitTimeoutException', 'LockLostException'];
        foreach ($direct as $class) {
            $this->assertSame(Exception::class, get_parent_class("Mcds\\$class"), $class);
        }
        $backend = ['IoException', 'ServerDownException', 'TimeoutException', 'AmbiguousException',
            'OutOfMemoryException', 'ServerErrorException', 'ProtocolException'];
        foreach ($backend as $class) {
            $this->assertSame(\Mcds\BackendException::class, get_parent_class("Mcds\\$class"), $class);
        }
        // Data a server may have dropped is a kind of unusable stored data.
        $this->assertSame(\Mcds\CorruptException::class, get_parent_class(\Mcds\LostException::class));
    }

    public function testTheCodeConstantsAreLibmcdsCodes(): void
    {
        $constants = (new \ReflectionClass(Exception::class))->getConstants();
        $this->assertCount(22, $constants);
        $this->assertSame(105, Exception::LOST);
        $this->assertSame(5, Exception::CALLBACK_FAILED);
        $this->assertSame(100, Exception::INVALID_KEY);
        $this->assertSame(202, Exception::TIMEOUT);
        $this->assertSame(302, Exception::WAIT_TIMEOUT);
        foreach ($constants as $name => $code) {
            $e = new Exception('x', $code);
            $this->assertSame("MCDS_$name", $e->getResultName());
        }
        $this->assertSame('MCDS_UNKNOWN', (new Exception('x', 12345))->getResultName());
        $this->assertSame('MCDS_OK', (new Exception('x'))->getResultName());
    }

    /** @dataProvider backends */
    public function testABadKeyIsAnInvalidKeyExceptionWithTheMessage(string $backend): void
    {
        try {
            self::store($backend)->counter('bad key');
            $this->fail('no exception');
        } catch (\Mcds\InvalidKeyException $e) {
            $this->assertSame(Exception::INVALID_KEY, $e->getCode());
            $this->assertSame('MCDS_INVALID_KEY', $e->getResultName());
            $this->assertStringContainsString('invalid key', $e->getMessage());
            $this->assertStringContainsString('contains a space', $e->getMessage());
        }
        try {
            self::store($backend)->set(str_repeat('x', 300));
            $this->fail('no exception');
        } catch (\Mcds\InvalidKeyException $e) {
            $this->assertStringContainsString('250', $e->getMessage());
        }
    }

    public function testANameThatIsNotUtf8(): void
    {
        $this->expectException(\Mcds\InvalidKeyException::class);
        $this->expectExceptionCode(Exception::INVALID_UTF8);
        Store::memory()->table("caf\xe9");
    }

    public function testNulBytesInNamesAreValueErrors(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('must not contain any null bytes');
        Store::memory()->lock("a\0b");
    }

    public function testADeadServerIsABackendException(): void
    {
        $store = Store::memcached('127.0.0.1:' . Memcached::freePort());
        $counter = $store->counter('dead'); // connections are made on first use
        try {
            $counter->incr();
            $this->fail('no exception');
        } catch (\Mcds\IoException $e) {
            $this->assertSame(Exception::IO, $e->getCode());
            $this->assertNotSame('', $e->getMessage());
        }
        // Then the server is marked down for a while.
        try {
            $counter->get();
            $this->fail('no exception');
        } catch (\Mcds\BackendException $e) {
            $this->assertContains($e->getCode(), [Exception::IO, Exception::SERVER_DOWN], $e->getMessage());
        }
    }

    public function testAServerThatDiesMidwayIsABackendException(): void
    {
        $server = new Memcached();
        $store = Store::memcached($server->addr);
        $lock = $store->lock('dying');
        $this->assertTrue($lock->acquire());
        $server->kill();
        try {
            $lock->release();
            $this->fail('no exception');
        } catch (\Mcds\BackendException $e) {
            $this->assertNotSame('', $e->getMessage());
        }
        $this->assertNotNull($lock->getOwnerToken(), 'a failed release keeps the lease: release() again retries');
        try {
            $lock->isAcquired();
            $this->fail('isAcquired() answered without the server');
        } catch (\Mcds\BackendException $e) {
            $this->assertNotSame('', $e->getMessage());
        }
        $this->expectException(\Mcds\BackendException::class);
        $store->counter('dying')->incr();
    }

    public function testServersMustBeAList(): void
    {
        $this->expectException(\Mcds\Exception::class);
        Store::memcached('');
    }
}
