<?php
// Test helpers: real memcached servers on free loopback ports, child PHP
// processes with the extension loaded, and a base test case. Every process
// started here runs under `setpriv --pdeathsig KILL`, so the kernel kills
// it when this PHP process dies, even by SIGKILL; a normal exit stops them
// first.
declare(strict_types=1);

namespace McdsTests;

use PHPUnit\Framework\TestCase;

/** A memcached process on a free loopback port, killed with its test. */
final class Memcached
{
    /** @var resource */
    private $proc;
    public readonly string $addr;
    private static ?Memcached $shared = null;

    /** @param list<string> $extraArgs */
    public function __construct(array $extraArgs = [])
    {
        for ($try = 1; ; $try++) {
            $port = self::freePort();
            $cmd = ['setpriv', '--pdeathsig', 'KILL', 'memcached', '-l', '127.0.0.1', '-p', (string)$port,
                '-U', '0', '-m', '16', ...$extraArgs];
            if (function_exists('posix_getuid') && posix_getuid() === 0) {
                $cmd[] = '-u';
                $cmd[] = 'root'; // memcached refuses to run as root without it
            }
            $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'],
                2 => ['file', '/dev/null', 'w']], $pipes);
            if ($proc === false) {
                throw new \RuntimeException('cannot start memcached: ' . implode(' ', $cmd));
            }
            for ($i = 0; $i < 100; $i++) {
                $s = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 0.2);
                if ($s !== false) {
                    fclose($s);
                    $this->proc = $proc;
                    $this->addr = "127.0.0.1:$port";
                    return;
                }
                if (!proc_get_status($proc)['running']) {
                    break; // the port was taken in between: try another
                }
                usleep(20_000);
            }
            proc_terminate($proc, 9);
            proc_close($proc);
            if ($try >= 3) {
                throw new \RuntimeException('memcached did not start on a free port');
            }
        }
    }

    /** One server for the whole run (tests use names of their own on it). */
    public static function shared(): Memcached
    {
        return self::$shared ??= new Memcached();
    }

    public static function freePort(): int
    {
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($server === false) {
            throw new \RuntimeException("no free port: $errstr");
        }
        $name = stream_socket_get_name($server, false);
        fclose($server);
        return (int)substr($name, strrpos($name, ':') + 1);
    }

    /** One number of this server's `stats` (total_connections, ...); the connection asking counts. */
    public function stat(string $name): int
    {
        if (!preg_match('/^STAT ' . preg_quote($name, '/') . ' (\d+)\r?$/m', $this->command('stats'), $m)) {
            throw new \RuntimeException("memcached at {$this->addr} has no stat $name");
        }
        return (int)$m[1];
    }

    /** Send one text-protocol command to this server (flush_all, get KEY, ...); its reply. */
    public function command(string $command): string
    {
        $s = stream_socket_client("tcp://{$this->addr}", $errno, $errstr, 2);
        if ($s === false) {
            throw new \RuntimeException("cannot reach {$this->addr}: $errstr");
        }
        stream_set_timeout($s, 2);
        fwrite($s, "$command\r\n");
        $reply = '';
        $last = ['END', 'OK', 'ERROR', 'STORED', 'NOT_STORED', 'DELETED', 'NOT_FOUND', 'EXISTS'];
        while (($line = fgets($s)) !== false) {
            $reply .= $line;
            if (in_array(rtrim($line), $last, true) || preg_match('/^(?:CLIENT|SERVER)_ERROR/', $line)) {
                break;
            }
        }
        fclose($s);
        return $reply;
    }

    /**
     * Stop the process (SIGSTOP): it still accepts connections, but answers nothing until resume().
     * Returns once every thread has stopped: the signal is delivered asynchronously, and a worker
     * thread still running could answer one more request (the flaky "a stalled server answered").
     */
    public function pause(): void
    {
        $pid = proc_get_status($this->proc)['pid'];
        posix_kill($pid, SIGSTOP);
        $this->waitForThreads($pid, true);
    }

    /** SIGCONT after pause(); returns once every thread runs again. */
    public function resume(): void
    {
        $pid = proc_get_status($this->proc)['pid'];
        posix_kill($pid, SIGCONT);
        $this->waitForThreads($pid, false);
    }

    /** Wait (up to 5 s) until every thread of $pid is stopped, or none is (Linux /proc). */
    private function waitForThreads(int $pid, bool $stopped): void
    {
        $deadline = microtime(true) + 5.0;
        while (microtime(true) < $deadline) {
            $all = true;
            foreach (glob("/proc/$pid/task/*/stat") ?: [] as $stat) {
                $text = @file_get_contents($stat);
                if ($text === false) {
                    continue; // a thread that just ended
                }
                // "pid (comm) S ...": the state follows the last ')'.
                $state = substr($text, strrpos($text, ')') + 2, 1);
                $isStopped = $state === 'T' || $state === 't';
                if ($isStopped !== $stopped) {
                    $all = false;
                    break;
                }
            }
            if ($all) {
                return;
            }
            usleep(1000);
        }
    }

    public function kill(): void
    {
        if (isset($this->proc)) {
            proc_terminate($this->proc, 9);
            proc_close($this->proc);
            unset($this->proc);
        }
    }

    public function __destruct()
    {
        $this->kill();
    }
}

/** Child PHP processes with the extension loaded. */
final class Php
{
    /** The extension under test: MCDS_PHP_EXTENSION, else modules/mcds.so. */
    public static function extension(): string
    {
        $ext = getenv('MCDS_PHP_EXTENSION') ?: __DIR__ . '/../modules/mcds.so';
        $real = realpath($ext);
        if ($real === false) {
            throw new \RuntimeException("extension not found: $ext");
        }
        return $real;
    }

    /**
     * Start `php -d extension=... $script ...$args` (php-cli, Debian's ini).
     *
     * @param list<string> $args
     * @param array<string, string> $env
     * @param array<string, string> $ini settings given with -d (mcds.servers, ...)
     * @return array{0: resource, 1: array<int, resource>}
     */
    public static function start(string $script, array $args = [], array $env = [], array $ini = []): array
    {
        $cmd = ['setpriv', '--pdeathsig', 'KILL', PHP_BINARY, '-d', 'extension=' . self::extension()];
        foreach ($ini as $name => $value) {
            $cmd[] = '-d';
            $cmd[] = "$name=$value";
        }
        array_push($cmd, $script, ...$args);
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes, null, $env + getenv());
        if ($proc === false) {
            throw new \RuntimeException('cannot start ' . implode(' ', $cmd));
        }
        return [$proc, $pipes];
    }

    /** @return array{status: int, stdout: string, stderr: string} */
    public static function wait(array $started): array
    {
        [$proc, $pipes] = $started;
        $stdout = stream_get_contents($pipes[1]);
        $stderr = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $status = proc_close($proc);
        return ['status' => $status, 'stdout' => (string)$stdout, 'stderr' => (string)$stderr];
    }

    /**
     * Run $script as a CGI request through php-cgi, as a web server would:
     * the CGI variables in the environment (REDIRECT_STATUS, which
     * php-cgi's cgi.force_redirect wants), Debian's default ini, the
     * extension added with -d. Returns the status, the headers and the body.
     *
     * @param array<string, string> $env
     * @param array<string, string> $ini settings given with -d (mcds.servers, ...)
     * @return array{status: int, headers: string, body: string, stderr: string}
     */
    public static function cgi(string $script, array $env = [], array $ini = []): array
    {
        $cgi = trim((string)shell_exec('command -v php-cgi'));
        if ($cgi === '') {
            throw new \RuntimeException('php-cgi not found (apt-get install php-cgi)');
        }
        $script = realpath($script);
        $cgiEnv = [
            'PATH' => getenv('PATH') ?: '/usr/bin:/bin',
            'GATEWAY_INTERFACE' => 'CGI/1.1',
            'SERVER_PROTOCOL' => 'HTTP/1.1',
            'REQUEST_METHOD' => 'GET',
            'SCRIPT_FILENAME' => $script,
            'SCRIPT_NAME' => '/' . basename($script),
            'REQUEST_URI' => '/' . basename($script),
            'QUERY_STRING' => '',
            'REDIRECT_STATUS' => '200',
        ] + $env;
        $cmd = ['setpriv', '--pdeathsig', 'KILL', $cgi, '-d', 'extension=' . self::extension()];
        foreach ($ini as $name => $value) {
            $cmd[] = '-d';
            $cmd[] = "$name=$value";
        }
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes, dirname($script), $cgiEnv);
        if ($proc === false) {
            throw new \RuntimeException('cannot start php-cgi');
        }
        $out = (string)stream_get_contents($pipes[1]);
        $stderr = (string)stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $status = proc_close($proc);
        $split = strpos($out, "\r\n\r\n");
        return [
            'status' => $status,
            'headers' => $split === false ? '' : substr($out, 0, $split),
            'body' => $split === false ? $out : substr($out, $split + 4),
            'stderr' => $stderr,
        ];
    }
}

/** Tests that run once on the embedded store and once on real memcached. */
abstract class StoreTestCase extends TestCase
{
    /** @return array<string, array{string}> */
    public static function backends(): array
    {
        return ['memory' => ['memory'], 'memcached' => ['memcached']];
    }

    protected static function store(string $backend): \Mcds\Store
    {
        return $backend === 'memory'
            ? \Mcds\Store::memory()
            : \Mcds\Store::memcached(Memcached::shared()->addr);
    }

    /** A name no other test uses on the shared server. */
    protected static function name(string $what): string
    {
        static $n = 0;
        return sprintf('php-%s-%d-%d-%d', $what, getmypid(), hrtime(true) % 1_000_000_000, ++$n);
    }
}

/** The README's PHP examples, exactly as written there. */
final class ReadmeExample
{
    /** The $n-th ```php block (from 0) of the README's "Using mcds from C, PHP and Python". */
    public static function source(int $n = 0): string
    {
        $readme = file_get_contents(__DIR__ . '/../../../README.md');
        $section = strstr($readme, '## Using mcds from C, PHP and Python');
        if ($section === false || !preg_match_all('/^```php\n(.*?)^```$/ms', $section, $m) || !isset($m[1][$n])) {
            throw new \RuntimeException("no ```php block $n in the README's \"Using mcds from C, PHP and Python\"");
        }
        return $m[1][$n];
    }

    /** Write it to a scratch file (removed at exit); returns its path. */
    public static function write(int $n = 0): string
    {
        $path = sys_get_temp_dir() . "/mcds-readme-$n-" . getmypid() . '.php';
        file_put_contents($path, self::source($n));
        register_shutdown_function(static fn () => @unlink($path));
        return $path;
    }

    /** What the first prints on its $run-th run against one store. */
    public static function expected(int $run): string
    {
        return "hits = $run\nreport written\nMCDS_INVALID_KEY\n";
    }

    /** What the second prints on its $run-th run against one store. */
    public static function expectedSecond(int $run): string
    {
        return 'views = ' . (1000 + $run) . "\nheld by host=" . gethostname() . ", token ok\n";
    }
}
