<?php
declare(strict_types=1);

namespace McdsTests;

/** The README's PHP example under php-cli, on the embedded store and on memcached (CgiTest runs it under php-cgi). */
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
}
