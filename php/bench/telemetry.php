<?php
// OpenTelemetry on vs off (docs/operating.md#opentelemetry): the leased
// queue's one-task cycle (enqueue, reserve, ack) and a lock's acquire +
// release, in a PHP process of their own with telemetry off (no collector
// named), then on, exporting to tools/otlp_receiver.py (which decodes every
// span, as a collector would, on the same machine). Rounds alternate off and
// on; the medians are compared.
//   php telemetry.php <redis dsn> [seconds per run]
[, $dsn] = $argv;
$seconds = (float) ($argv[2] ?? 2);
$so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
$root = dirname(__DIR__, 2);

$receiver = proc_open(['python3', "$root/tools/otlp_receiver.py", '/dev/null'], [1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
$port = (int) fgets($pipes[1]);
if ($port <= 0) {
    fwrite(STDERR, "telemetry.php: the OTLP receiver did not start (make test-deps installs opentelemetry-proto)\n");
    exit(1);
}

$code = <<<'PHP'
[$dsn, $seconds] = [$argv[1], (float) $argv[2]];
$c = new RedisLock\Client($dsn);
$q = $c->queue('otel-' . getmypid());
$n = 0;
$t0 = hrtime(true);
$end = microtime(true) + $seconds;
while (microtime(true) < $end) {
    for ($i = 0; $i < 100; $i++) {
        $q->enqueue('t' . $n++, 'p');
        $q->ack($q->reserve()[0]);
    }
}
$cycle = $n / ((hrtime(true) - $t0) / 1e9);
$l = $c->lock('otel-' . getmypid());
$m = 0;
$t0 = hrtime(true);
$end = microtime(true) + $seconds;
while (microtime(true) < $end) {
    for ($i = 0; $i < 100; $i++) {
        $l->acquire();
        $l->release();
        $m++;
    }
}
$lock = $m / ((hrtime(true) - $t0) / 1e9);
$q->clear();
printf("%.0f %.0f %d\n", $cycle, $lock, RedisLock\Telemetry::enabled());
PHP;

$env = getenv();
unset($env['OTEL_EXPORTER_OTLP_ENDPOINT'], $env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'], $env['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT']);
$envs = ['off' => $env, 'on' => $env + ['OTEL_EXPORTER_OTLP_ENDPOINT' => "http://127.0.0.1:$port", 'OTEL_SERVICE_NAME' => 'bench']];
$runs = ['off' => [], 'on' => []];
for ($round = 0; $round < 3; $round++) {
    foreach ($envs as $label => $e) {
        $p = proc_open([PHP_BINARY, '-n', '-d', "extension=$so", '-r', $code, '--', $dsn, (string) $seconds],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pp, null, $e);
        $line = trim(stream_get_contents($pp[1]));
        $err = stream_get_contents($pp[2]);
        proc_close($p);
        [$cycle, $lock, $enabled] = array_map('floatval', explode(' ', $line) + [0, 0, -1]);
        if ($enabled !== ($label === 'on' ? 1.0 : 0.0)) {
            fwrite(STDERR, "telemetry.php: the $label run said enabled=$enabled: $line $err\n");
            exit(1);
        }
        $runs[$label][] = [$cycle, $lock];
    }
}
proc_terminate($receiver);
proc_close($receiver);

$median = function (array $runs, int $i): float {
    $v = array_column($runs, $i);
    sort($v);
    return $v[intdiv(count($v), 2)];
};
echo "### OpenTelemetry on vs off\n\n";
echo "One process, 3 alternating rounds of {$seconds} s each, medians; *on* exports every span and metric\n";
echo "to a local OTLP/HTTP receiver (tools/otlp_receiver.py) on the same machine.\n\n";
echo "| Loop | off (/s) | on (/s) | on / off |\n|---|---:|---:|---:|\n";
foreach (['leased queue: enqueue + reserve + ack' => 0, 'RedisLock\\Lock: acquire + release' => 1] as $name => $i) {
    $off = $median($runs['off'], $i);
    $on = $median($runs['on'], $i);
    printf("| %s | %.0f | %.0f | %.2fx |\n", $name, $off, $on, $off > 0 ? $on / $off : 0);
}
echo "\n";
