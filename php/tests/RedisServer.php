<?php

/** A redis-server process on a free loopback port in a temp dir. */
final class RedisServer
{
    public static ?RedisServer $main = null;

    private $process;
    private string $dir;
    /** The process that started it: a forked child (pcntl_fork in a test) must not stop it. */
    private int $owner;

    /** @param array $args further redis-server arguments, or a function of the directory returning them */
    private function __construct(public readonly int $port, private array|Closure $args = [])
    {
        $this->owner = getmypid();
        $this->dir = sys_get_temp_dir() . '/redislock-php-' . getmypid() . '-' . $port;
        @mkdir($this->dir);
        if ($args instanceof Closure) {
            $this->args = $args($this->dir);
        }
        $this->spawn();
    }

    public static function freePort(): int
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($socket, false), ':'), 1);
        fclose($socket);
        return $port;
    }

    public static function start(): self
    {
        return new self(self::freePort());
    }

    /** A server with further arguments (an array, or a function of its directory returning them). */
    public static function startWith(array|Closure $args): self
    {
        return new self(self::freePort(), $args);
    }

    public function dir(): string
    {
        return $this->dir;
    }

    private function spawn(): void
    {
        $cmd = ['redis-server', ...$this->args, '--port', (string) $this->port, '--bind', '127.0.0.1',
                '--save', '', '--appendonly', 'no', '--dir', $this->dir, '--enable-debug-command', 'local'];
        $this->process = proc_open($cmd, [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        for ($i = 0; $i < 200; $i++) {
            try {
                $r = $this->client();
                if ($r->ping()) {
                    return;
                }
            } catch (Throwable) {
            }
            usleep(20000);
        }
        throw new RuntimeException("redis-server on port {$this->port} did not start");
    }

    public function dsn(): string
    {
        return "redis://127.0.0.1:{$this->port}";
    }

    /** A phpredis connection, to look at what the extension left in Redis. */
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
        @array_map('unlink', glob($this->dir . '/*') ?: []);
        @rmdir($this->dir);
    }
}
