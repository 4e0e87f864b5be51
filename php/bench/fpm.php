<?php
/**
 * PHP-FPM end to end: Debian's nginx in front of this PHP's php-fpm (static
 * pool, its php.ini and conf.d with opcache, less an installed redislock), a flash-sale endpoint under wrk at fixed
 * concurrency. The endpoint takes a lock, reads the stock, decrements it
 * and counts the sale (phpredis, a new connection per request, the same
 * for every variant); variants: redislock's `RedisLock`, the seed's
 * userland RedisLock on phpredis, and no lock (the ceiling, which oversells).
 * Also reports the resident memory of the workers with and without the
 * extension loaded.
 *
 *   php php/bench/fpm.php [redis-url] [seconds] [connections]   (REDISLOCK_SO set)
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$seconds = (int) ($argv[2] ?? 10);
$connections = (int) ($argv[3] ?? 16);
$so = getenv('REDISLOCK_SO') ?: exit("REDISLOCK_SO must name the built extension\n");
$p = parse_url($url);
[$host, $port] = [$p['host'], $p['port'] ?? 6379];
$workers = 4;
$stock = 3000;

$dir = sys_get_temp_dir() . '/redislock-bench-fpm-' . getmypid();
@mkdir($dir, 0755);
chmod($dir, 0755);
copy(__DIR__ . '/seed.php', "$dir/seed.php");
file_put_contents("$dir/flash.php", <<<PHP
<?php
\$redis = new Redis();
// Not pconnect(): a persistent phpredis connection was seen handing a GET
// the reply of an earlier request's command, which skewed the counts.
\$redis->connect('$host', $port);
\$impl = \$_GET['impl'] ?? 'none';
if (\$impl === 'redislock') {
    \$lock = new RedisLock();
    \$ok = \$lock->lock('flash', 5, 5);
    \$unlock = fn () => \$lock->unlock('flash');
} elseif (\$impl === 'seed') {
    require __DIR__ . '/seed.php';
    \$lock = new Seed\RedisLock(\$redis);
    \$ok = \$lock->lock('flash', 5, 5);
    \$unlock = fn () => \$lock->unlock('flash');
} else {
    \$ok = true;
    \$unlock = fn () => null;
}
if (!\$ok) { http_response_code(503); echo "busy"; return; }
\$left = (int) \$redis->get('stock');
if (\$left > 0) {
    \$redis->set('stock', \$left - 1);
    \$redis->incr('sold');
    echo "sold";
} else {
    echo "sold out";
}
\$unlock();
PHP);

function free_port(): int
{
    $s = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int) substr(strrchr(stream_socket_get_name($s, false), ':'), 1);
    fclose($s);
    return $port;
}

require dirname(__DIR__, 2) . '/tools/php-fpm.php';

function start_fpm(string $dir, ?string $so, int $workers, string $dsn)
{
    $sock = "$dir/fpm.sock";
    @unlink($sock);
    file_put_contents("$dir/fpm.conf", implode("\n", [
        '[global]', "error_log = $dir/fpm.log", 'daemonize = no',
        '[bench]', "listen = $sock", 'listen.mode = 0666', 'pm = static', "pm.max_children = $workers", '',
    ]));
    $bin = php_fpm_binary() ?? exit("no php-fpm for " . PHP_BINARY . "\n");
    $cmd = [$bin, '-R', '-y', "$dir/fpm.conf", '-F', '-d', "redislock.default_dsn=$dsn"];
    if ($so) {
        array_push($cmd, '-d', "extension=$so");
    }
    // Its conf.d less an installed redislock, which would shadow the build.
    exec(implode(' ', array_map('escapeshellarg', [dirname(__DIR__, 2) . '/tools/ini-dir.sh', $bin, "$dir/conf.d"])));
    $env = ['PHP_INI_SCAN_DIR' => "$dir/conf.d"] + getenv();
    $proc = proc_open($cmd, [1 => ['file', '/dev/null', 'w'], 2 => ['file', "$dir/fpm.err", 'a']], $pipes, null, $env);
    for ($i = 0; $i < 100 && !file_exists($sock); $i++) {
        usleep(50000);
    }
    return $proc;
}

function start_nginx(string $dir, int $port)
{
    file_put_contents("$dir/nginx.conf", "
        worker_processes 1; error_log $dir/nginx.err; pid $dir/nginx.pid; daemon off;
        events { worker_connections 1024; }
        http {
            access_log off;
            client_body_temp_path $dir; fastcgi_temp_path $dir; proxy_temp_path $dir;
            uwsgi_temp_path $dir; scgi_temp_path $dir;
            upstream fpm { server unix:$dir/fpm.sock; }
            server {
                listen 127.0.0.1:$port;
                location / {
                    fastcgi_pass fpm;
                    include /etc/nginx/fastcgi_params;
                    fastcgi_param SCRIPT_FILENAME $dir\$fastcgi_script_name;
                }
            }
        }");
    $proc = proc_open(['/usr/sbin/nginx', '-p', $dir, '-c', "$dir/nginx.conf"],
        [1 => ['file', '/dev/null', 'w'], 2 => ['file', "$dir/nginx.err", 'a']], $pipes);
    for ($i = 0; $i < 100 && !@fsockopen('127.0.0.1', $port); $i++) {
        usleep(50000);
    }
    return $proc;
}

/**
 * The memory (kB) of each child of the php-fpm master: its private pages
 * (what one more worker costs), and its resident set (shared code counted
 * in full).
 */
function worker_rss($fpm): array
{
    $master = proc_get_status($fpm)['pid'];
    $rss = [];
    foreach (glob('/proc/[0-9]*/stat') as $stat) {
        $fields = explode(' ', (string) @file_get_contents($stat));
        if ((int) ($fields[3] ?? 0) === $master) {
            $rollup = (string) @file_get_contents(dirname($stat) . '/smaps_rollup');
            preg_match('/^Rss:\s+(\d+)/m', $rollup, $r);
            preg_match_all('/^Private_(?:Clean|Dirty):\s+(\d+)/m', $rollup, $priv);
            $rss[] = [(int) ($r[1] ?? 0), array_sum(array_map('intval', $priv[1]))];
        }
    }
    return $rss;
}

function wrk(int $port, string $impl, int $seconds, int $connections): array
{
    $out = shell_exec(sprintf('wrk -t2 -c%d -d%ds --latency %s 2>&1', $connections, $seconds,
        escapeshellarg("http://127.0.0.1:$port/flash.php?impl=$impl")));
    preg_match('/Requests\/sec:\s+([\d.]+)/', $out, $rps);
    preg_match('/^\s+50%\s+([\d.]+)(\w+)/m', $out, $p50);
    preg_match('/^\s+99%\s+([\d.]+)(\w+)/m', $out, $p99);
    preg_match('/Non-2xx or 3xx responses: (\d+)/', $out, $errors);
    $ms = fn ($m) => $m ? (float) $m[1] * ['us' => 0.001, 'ms' => 1, 's' => 1000][$m[2]] : NAN;
    return [(float) ($rps[1] ?? 0), $ms($p50), $ms($p99), (int) ($errors[1] ?? 0)];
}

$redis = new Redis();
$redis->connect($host, $port);
$httpPort = free_port();
$rows = [];
$rss = [];
foreach (['with the extension' => $so, 'without it' => null] as $label => $ext) {
    $fpm = start_fpm($dir, $ext, $workers, $url);
    $nginx = start_nginx($dir, $httpPort);
    $impls = $ext ? ['redislock' => 'redislock `RedisLock`', 'seed' => 'seed userland `RedisLock` (phpredis)', 'none' => 'no lock (ceiling)']
                  : ['none' => 'no lock, extension not loaded'];
    foreach ($impls as $impl => $name) {
        $redis->flushAll();
        $redis->set('stock', $stock);
        wrk($httpPort, $impl, 1, $connections); // warm-up: opcache, connections
        // Requests the warm-up left running finish before the counts start
        // (one that counted its sale after the reset showed as oversold).
        usleep(500000);
        $redis->set('stock', $stock);
        $redis->set('sold', 0);
        [$rps, $p50, $p99, $errors] = wrk($httpPort, $impl, $seconds, $connections);
        usleep(500000); // requests still running when wrk stopped
        $sold = (int) $redis->get('sold');
        $rows[$name] = [$rps, $p50, $p99, $errors, max(0, $sold - $stock), $sold, (int) $redis->get('stock')];
    }
    $rss[$label] = worker_rss($fpm);
    proc_terminate($nginx);
    proc_close($nginx);
    proc_terminate($fpm);
    proc_close($fpm);
}
exec("rm -rf " . escapeshellarg($dir));

printf("### PHP-FPM flash sale: nginx + php-fpm (%d static workers), wrk -c%d for %d s, stock %d\n\n",
    $workers, $connections, $seconds, $stock);
echo "| endpoint | requests/s | p50 ms | p99 ms | non-2xx | sold | stock left | oversold |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
foreach ($rows as $name => [$rps, $p50, $p99, $errors, $oversold, $sold, $left]) {
    printf("| %s | %s | %.2f | %.2f | %d | %d | %d | %d |\n", $name, number_format($rps), $p50, $p99, $errors, $sold, $left, $oversold);
}
$ceiling = $rows['no lock (ceiling)'][0];
printf("\n- redislock / no-lock ceiling: %.2fx; redislock / seed userland: %.2fx\n",
    $rows['redislock `RedisLock`'][0] / $ceiling, $rows['redislock `RedisLock`'][0] / $rows['seed userland `RedisLock` (phpredis)'][0]);
$avg = fn (array $workers, int $i) => $workers ? array_sum(array_column($workers, $i)) / count($workers) / 1024 : 0;
[$with, $without] = [$rss['with the extension'], $rss['without it']];
printf("- memory per FPM worker after the runs: private %.1f MB with the extension, %.1f MB without (%+.1f MB); resident %.1f MB / %.1f MB (shared code counted in full)\n\n",
    $avg($with, 1), $avg($without, 1), $avg($with, 1) - $avg($without, 1), $avg($with, 0), $avg($without, 0));
