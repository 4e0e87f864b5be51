<?php

/**
 * A php-fpm pool (the php-fpm of the PHP running the tests, without its
 * ini files) with the extension, serving scripts
 * from a temp dir; requests go through cgi-fcgi.
 */
final class FpmPool
{
    private $process;
    /** The process that started the pool: a forked child must not stop it. */
    private int $owner;
    public readonly string $dir;
    private string $socket;

    /**
     * @param array<string, string> $scripts file name => PHP source
     * @param array<string, string> $ini more -d settings of the master
     *                                   (zend_extension=opcache...)
     */
    public function __construct(array $scripts, array $pool = [], array $ini = [])
    {
        $bin = php_fpm_binary();
        if ($bin === null || !is_executable('/usr/bin/cgi-fcgi')) {
            throw new PHPUnit\Framework\SkippedTestError('php-fpm (of ' . PHP_BINARY . ') and libfcgi-bin are installed by make test');
        }
        $this->owner = getmypid();
        $this->dir = sys_get_temp_dir() . '/redislock-fpm-' . getmypid() . '-' . bin2hex(random_bytes(4));
        @mkdir($this->dir);
        $this->socket = $this->dir . '/fpm.sock';
        $pool += ['pm' => 'static', 'pm.max_children' => '2'];
        $lines = ['[global]', 'error_log = ' . $this->dir . '/fpm.log', 'daemonize = no',
                  '[pool]', 'listen = ' . $this->socket, 'catch_workers_output = yes'];
        foreach ($pool as $k => $v) {
            $lines[] = "$k = $v";
        }
        file_put_contents($this->dir . '/fpm.conf', implode("\n", $lines) . "\n");
        foreach ($scripts as $name => $code) {
            file_put_contents($this->dir . "/$name", $code);
        }
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $settings = [];
        foreach ($ini as $k => $v) {
            array_push($settings, '-d', "$k=$v");
        }
        $this->process = proc_open([$bin, '-n', '-R', ...$settings, '-d', "extension=$so", '-d', 'redislock.default_dsn=' . RedisServer::$main->dsn(),
                     '-y', $this->dir . '/fpm.conf', '-F'],
            [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        for ($i = 0; $i < 100 && !file_exists($this->socket); $i++) {
            usleep(50000);
        }
    }

    public function started(): bool
    {
        return file_exists($this->socket);
    }

    /** The master's process id. */
    public function pid(): int
    {
        return proc_get_status($this->process)['pid'];
    }

    /**
     * The response body of one request to `$script`; `$params`: more
     * FastCGI parameters (`HTTP_<header>` for a request header).
     */
    public function request(string $script, string $query = '', array $params = []): string
    {
        $env = ['SCRIPT_FILENAME' => $this->dir . "/$script", 'REQUEST_METHOD' => 'GET',
                'QUERY_STRING' => $query, 'SCRIPT_NAME' => "/$script"] + $params;
        $p = proc_open(['cgi-fcgi', '-bind', '-connect', $this->socket], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        $out = stream_get_contents($pipes[1]);
        proc_close($p);
        return trim(substr($out, strpos($out, "\r\n\r\n") + 4));
    }

    /** Starts a request in the background; returns its process. */
    public function requestAsync(string $script, string $query = '')
    {
        $env = ['SCRIPT_FILENAME' => $this->dir . "/$script", 'REQUEST_METHOD' => 'GET',
                'QUERY_STRING' => $query, 'SCRIPT_NAME' => "/$script"];
        return proc_open(['cgi-fcgi', '-bind', '-connect', $this->socket], [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes, null, $env);
    }

    public function stop(): void
    {
        if ($this->process) {
            proc_terminate($this->process);
            proc_close($this->process);
            $this->process = null;
        }
        @array_map('unlink', glob($this->dir . '/*') ?: []);
        @rmdir($this->dir);
    }

    public function __destruct()
    {
        if (getmypid() !== $this->owner) {
            return;
        }
        $this->stop();
    }
}
