<?php

/**
 * A redis-server process on a free loopback port in a temp dir. Whatever
 * `redis-server` is first on PATH: Redis 6.0 and later, Valkey, Redict
 * (`make test-servers` puts each in front); the arguments follow what it
 * can do (see features()).
 */
final class RedisServer
{
    public static ?RedisServer $main = null;

    /** @var array{name: string, version: string, debugCommand: bool, clusterPort: bool, aclChannels: bool, pauseWrite: bool, tls: bool}|null */
    private static ?array $features = null;

    /**
     * What the redis-server on PATH is and can do: its name and version
     * (`redis-server --version`), the DEBUG command needing
     * `--enable-debug-command` (>= 7.0), `--cluster-port` (>= 7.0; before,
     * the bus is the port + 10000), ACL channel rules `&*` (>= 6.2), `CLIENT
     * PAUSE ms WRITE` (>= 6.2), and TLS (some builds have none: asked).
     */
    public static function features(): array
    {
        if (self::$features !== null) {
            return self::$features;
        }
        $said = (string) shell_exec('redis-server --version 2>&1');
        if (!preg_match('/^(\w+) server v=(\d+)\.(\d+)\.(\d+)/', $said, $m)) {
            throw new RuntimeException("redis-server --version said: $said");
        }
        $at = fn (int $major, int $minor) => [(int) $m[2], (int) $m[3]] >= [$major, $minor];
        // A build without TLS does not know the directive (Redis) or has no
        // TLS connection type (Valkey); one with TLS complains of the
        // missing key file instead. None starts.
        $tls = (string) shell_exec('timeout 10 redis-server --port 0 --tls-port ' . self::freePort() . ' 2>&1');
        return self::$features = [
            'name' => $m[1],
            'version' => "$m[2].$m[3].$m[4]",
            'debugCommand' => $at(7, 0),
            'clusterPort' => $at(7, 0),
            'aclChannels' => $at(6, 2),
            'pauseWrite' => $at(6, 2),
            'tls' => !str_contains($tls, 'Bad directive') && !str_contains($tls, 'Failed finding TLS support'),
        ];
    }

    /** Skips the running test, saying which server lacks what. */
    public static function requires(string $feature, string $what): void
    {
        if (!self::features()[$feature]) {
            $f = self::features();
            \PHPUnit\Framework\Assert::markTestSkipped("{$f['name']} {$f['version']} has no $what");
        }
    }

    private $process;
    private string $dir;
    /** The process that started it: a forked child (pcntl_fork in a test) must not stop it. */
    private int $owner;

    /**
     * @param array $args further redis-server arguments, or a function of the directory returning them
     * @param list<string> $under the command that runs redis-server (FakeClock::server())
     */
    private function __construct(public readonly int $port, private array|Closure $args = [], private array $under = [])
    {
        $this->owner = getmypid();
        $this->dir = sys_get_temp_dir() . '/redislock-php-' . getmypid() . '-' . $port;
        @mkdir($this->dir);
        if ($args instanceof Closure) {
            $this->args = $args($this->dir);
        }
        $this->spawn();
    }

    /**
     * A free loopback port; with $bus, one whose port + 10000 is free too
     * (a cluster node's bus before `--cluster-port`).
     */
    public static function freePort(bool $bus = false): int
    {
        while (true) {
            $socket = stream_socket_server('tcp://127.0.0.1:0');
            $port = (int) substr(strrchr(stream_socket_get_name($socket, false), ':'), 1);
            fclose($socket);
            if (!$bus) {
                return $port;
            }
            if ($port <= 55535 && ($probe = @stream_socket_server('tcp://127.0.0.1:' . ($port + 10000))) !== false) {
                fclose($probe);
                return $port;
            }
        }
    }

    public static function start(): self
    {
        return new self(self::freePort());
    }

    /** A server with further arguments (an array, or a function of its directory returning them). */
    public static function startWith(array|Closure $args, ?int $port = null): self
    {
        return new self($port ?? self::freePort(), $args);
    }

    /** A server whose clock is the libfaketime clock file $clock (FakeClock); skips the test when it cannot be. */
    public static function startWithClock(string $clock): self
    {
        FakeClock::skipUnlessServersCanHaveOne();
        return new self(self::freePort(), [], FakeClock::server([], $clock));
    }

    public function dir(): string
    {
        return $this->dir;
    }

    private function spawn(): void
    {
        $cmd = [...$this->under, 'redis-server', ...$this->args, '--port', (string) $this->port, '--bind', '127.0.0.1',
                '--save', '', '--appendonly', 'no', '--dir', $this->dir,
                ...(self::features()['debugCommand'] ? ['--enable-debug-command', 'local'] : [])];
        $log = "{$this->dir}/server.log";
        $this->process = proc_open($cmd, [1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes);
        for ($i = 0; $i < 200; $i++) {
            try {
                $r = $this->client();
                if ($r->ping()) {
                    return;
                }
            } catch (Throwable) {
            }
            if (!proc_get_status($this->process)['running']) {
                break;
            }
            usleep(20000);
        }
        $said = trim(implode("\n", array_slice(file($log, FILE_IGNORE_NEW_LINES) ?: [], -5)));
        $this->stop();
        $this->removeDir();
        throw new RuntimeException("redis-server on port {$this->port} did not start: $said");
    }

    public function dsn(): string
    {
        return "redis://127.0.0.1:{$this->port}";
    }

    /** A phpredis connection, to look at what the extension left in Redis. */
    /**
     * Whether this server's Lua has the library `$global` (Redis ships
     * cjson in every version; Debian 11's build links it but does not
     * expose it).
     */
    public function luaHas(string $global): bool
    {
        return $this->client()->eval('return type(rawget(_G, ARGV[1]))', [$global], 0) === 'table';
    }

    public function client(): Redis
    {
        $r = new Redis();
        $r->connect('127.0.0.1', $this->port, 2.0);
        $pass = is_array($this->args) ? array_search('--requirepass', $this->args, true) : false;
        if ($pass !== false) {
            $r->auth($this->args[$pass + 1]);
        }
        return $r;
    }

    /** The server's process id (for SIGSTOP/SIGCONT). */
    public function pid(): int
    {
        return proc_get_status($this->process)['pid'];
    }

    public function stop(): void
    {
        if ($this->process) {
            proc_terminate($this->process, 9);
            proc_close($this->process);
            $this->process = null;
        }
    }

    public function restart(): void
    {
        $this->stop();
        $this->spawn();
    }

    public function __destruct()
    {
        if (getmypid() !== $this->owner) {
            return;
        }
        $this->stop();
        $this->removeDir();
    }

    private function removeDir(): void
    {
        @array_map('unlink', glob($this->dir . '/*') ?: []);
        @rmdir($this->dir);
    }
}
