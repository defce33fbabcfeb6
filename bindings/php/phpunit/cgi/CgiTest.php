<?php
declare(strict_types=1);

namespace McdsTests;

use PHPUnit\Framework\TestCase;

/**
 * Every *_check.php script beside this file, and the README's PHP example,
 * run as CGI requests through php-cgi with Debian's default ini (so
 * ffi.enable=preload), against the embedded store and real memcached.
 */
final class CgiTest extends TestCase
{
    private static int $checks = 0;

    /** @return array<string, array{string}> */
    public static function scripts(): array
    {
        $scripts = [];
        foreach (glob(__DIR__ . '/*_check.php') as $path) {
            $scripts[basename($path)] = [$path];
        }
        return $scripts;
    }

    /** @dataProvider scripts */
    public function testScript(string $script): void
    {
        $r = Php::cgi($script, [
            'MCDS_SERVERS' => Memcached::shared()->addr,
            'MCDS_DEAD_SERVER' => '127.0.0.1:' . Memcached::freePort(),
        ]);
        $this->assertSame(0, $r['status'], $r['body'] . $r['stderr']);
        $this->assertStringContainsString('Content-type: text/html', $r['headers'], 'a CGI response');
        $lines = array_filter(explode("\n", $r['body']), fn ($l) => $l !== '');
        $this->assertNotEmpty($lines, 'no checks ran: ' . $r['stderr']);
        foreach ($lines as $line) {
            $this->assertStringStartsWith('ok - ', $line, $r['body'] . $r['stderr']);
            self::$checks++;
        }
    }

    public function testTheReadmeExample(): void
    {
        $script = ReadmeExample::write();
        $r = Php::cgi($script, [], ['mcds.servers' => 'memory://']);
        $this->assertSame(0, $r['status'], $r['body'] . $r['stderr']);
        $this->assertSame(ReadmeExample::expected(1), $r['body'], $r['stderr']);
        $server = new Memcached();
        foreach ([1, 2] as $run) {
            $r = Php::cgi($script, ['MCDS_SERVERS' => $server->addr]);
            $this->assertSame(ReadmeExample::expected($run), $r['body'], $r['stderr']);
            self::$checks++;
        }
        $r = Php::cgi($script, [], ['mcds.servers' => $server->addr]);
        $this->assertSame(ReadmeExample::expected(3), $r['body'], $r['stderr']);
        // Nothing configured: an error, not hits = 1 from an embedded store.
        $r = Php::cgi($script);
        $this->assertStringContainsString('no store is configured', $r['body'] . $r['stderr']);
        $this->assertStringNotContainsString('hits =', $r['body']);
        self::$checks += 3;
    }

    public static function tearDownAfterClass(): void
    {
        fwrite(STDERR, sprintf("\nphp-cgi: %d checks passed\n", self::$checks));
    }
}
