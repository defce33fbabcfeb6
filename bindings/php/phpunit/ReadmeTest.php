<?php
declare(strict_types=1);

namespace McdsTests;

/** The README's PHP examples under php-cli, on the embedded store and on memcached (CgiTest runs the first under php-cgi). */
final class ReadmeTest extends StoreTestCase
{
    public function testTheReadmeExampleRuns(): void
    {
        $script = ReadmeExample::write();
        $r = Php::wait(Php::start($script));
        $this->assertSame(0, $r['status'], $r['stderr']);
        $this->assertSame(ReadmeExample::expected(1), $r['stdout'], $r['stderr']);
        $server = new Memcached();
        foreach ([1, 2] as $run) {
            $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => $server->addr]));
            $this->assertSame(0, $r['status'], $r['stderr']);
            $this->assertSame(ReadmeExample::expected($run), $r['stdout'], "run $run: " . $r['stderr']);
        }
    }

    public function testTheSecondExampleRuns(): void
    {
        $script = ReadmeExample::write(1);
        $r = Php::wait(Php::start($script));
        $this->assertSame(0, $r['status'], $r['stderr']);
        $this->assertSame(ReadmeExample::expectedSecond(1), $r['stdout'], $r['stderr']);
        $server = new Memcached();
        foreach ([1, 2] as $run) {
            $r = Php::wait(Php::start($script, [], ['MCDS_SERVERS' => $server->addr]));
            $this->assertSame(0, $r['status'], $r['stderr']);
            $this->assertSame(ReadmeExample::expectedSecond($run), $r['stdout'], "run $run: " . $r['stderr']);
        }
        // The prefix, on the server.
        $this->assertMatchesRegularExpression("/^VALUE blog\\/views:post%3A42:value \\d+ \\d+\r\n1002 *\r\nEND/",
            $server->command('get blog/views:post%3A42:value'));
        $this->assertStringStartsWith('VALUE blog/lock:reindex:fence ', $server->command('get blog/lock:reindex:fence'));
    }
}
