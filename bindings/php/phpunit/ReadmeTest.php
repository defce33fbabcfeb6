<?php
declare(strict_types=1);

namespace McdsTests;

/** The README's PHP examples under php-cli, on the embedded store and on memcached (CgiTest runs the first under php-cgi). */
final class ReadmeTest extends StoreTestCase
{
    public function testTheReadmeExampleRuns(): void
    {
        $script = ReadmeExample::write();
        // memory:// names the embedded store (MCDS_SERVERS, as under php-cli).
        $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => 'memory://']));
        $this->assertSame(0, $r['status'], $r['stderr']);
        $this->assertSame(ReadmeExample::expected(1), $r['stdout'], $r['stderr']);
        $server = new Memcached();
        foreach ([1, 2] as $run) {
            $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => $server->addr]));
            $this->assertSame(0, $r['status'], $r['stderr']);
            $this->assertSame(ReadmeExample::expected($run), $r['stdout'], "run $run: " . $r['stderr']);
        }
        // The ini setting, as php-fpm has it; it comes before the environment.
        $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => '127.0.0.1:' . Memcached::freePort()],
            ['mcds.servers' => $server->addr]));
        $this->assertSame(ReadmeExample::expected(3), $r['stdout'], $r['stderr']);
        // Neither: the error says so (never the embedded store unasked).
        $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => '']));
        $this->assertNotSame(0, $r['status']);
        $this->assertStringContainsString('no store is configured', $r['stdout'] . $r['stderr']);
        $this->assertStringNotContainsString('hits =', $r['stdout']);
    }

    public function testTheSecondExampleRuns(): void
    {
        $script = ReadmeExample::write(1);
        $server = new Memcached();
        foreach ([1, 2] as $run) {
            $r = Php::wait(Php::start($script, [], [], ['mcds.servers' => $server->addr]));
            $this->assertSame(0, $r['status'], $r['stderr']);
            $this->assertSame(ReadmeExample::expectedSecond($run), $r['stdout'], "run $run: " . $r['stderr']);
        }
        // The prefix, on the server.
        $this->assertMatchesRegularExpression("/^VALUE blog\\/views:post%3A42:value \\d+ \\d+\r\n1002 *\r\nEND/",
            $server->command('get blog/views:post%3A42:value'));
        $this->assertStringStartsWith('VALUE blog/lock:reindex:fence ', $server->command('get blog/lock:reindex:fence'));
    }
}
