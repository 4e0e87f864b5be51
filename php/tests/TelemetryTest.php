<?php

/**
 * OpenTelemetry against a real OTLP/HTTP receiver (tools/otlp_receiver.py,
 * decoding with OpenTelemetry's own Python classes): the spans and metrics
 * of queues, locks, stocks and limiters arrive with their names, kinds,
 * attributes, parents and links; a task's trace context goes from the
 * process that enqueued it to the one that ran it, through a dead letter
 * and its retry; nothing is lost or stuck while the collector is down.
 */
final class TelemetryTest extends RedisLockTestCase
{
    private const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

    private static $receiver;
    private static string $received;
    private static int $port;

    public static function setUpBeforeClass(): void
    {
        $root = dirname(__DIR__, 2);
        if (!is_dir("$root/target/otlp-python/opentelemetry/proto")) {
            self::markTestSkipped('the OTLP receiver needs opentelemetry-proto: make test installs it (tools/deps.sh)');
        }
        self::$received = sys_get_temp_dir() . '/redislock-otlp-' . getmypid() . '.jsonl';
        self::$receiver = proc_open(['python3', "$root/tools/otlp_receiver.py", self::$received],
            [1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::$port = (int) fgets($pipes[1]);
        if (self::$port <= 0) {
            self::fail('the OTLP receiver did not start');
        }
    }

    public static function tearDownAfterClass(): void
    {
        if (self::$receiver) {
            proc_terminate(self::$receiver);
            proc_close(self::$receiver);
        }
        @unlink(self::$received);
    }

    protected function setUp(): void
    {
        parent::setUp();
        file_put_contents(self::$received, '');
    }

    /** The environment that points the extension at the receiver. */
    private static function collector(array $more = []): array
    {
        return $more + getenv() + [
            'OTEL_EXPORTER_OTLP_ENDPOINT' => 'http://127.0.0.1:' . self::$port,
            'OTEL_SERVICE_NAME' => 'shop',
        ];
    }

    /** Runs $code in a new PHP process with $env; returns its output. */
    private static function inProcess(string $code, array $env): string
    {
        $p = proc_open(self::command($code), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        proc_close($p);
        return $out;
    }

    /** What the receiver got: spans by name (each name's list), and metric points. */
    private static function received(): array
    {
        $spans = $points = [];
        foreach (file(self::$received, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
            $r = json_decode($line, true);
            if ($r['type'] === 'span') {
                $spans[$r['name']][] = $r;
            } else {
                $points[] = $r;
            }
        }
        return [$spans, $points];
    }

    private static function one(array $spans, string $name): array
    {
        self::assertCount(1, $spans[$name] ?? [], "one span $name among " . implode(', ', array_keys($spans)));
        return $spans[$name][0];
    }

    public function testATaskCarriesItsTraceFromTheRequestThatEnqueuedItToTheWorker(): void
    {
        $out = self::inProcess('$q = (new RedisLock\Client())->queue("orders");
            var_dump(RedisLock\Telemetry::enabled(), RedisLock\Telemetry::setParent("' . self::PARENT . '"));
            echo $q->enqueue("t1", "payload", 0, null, ["vip", "eu"], "acme"), "\n";', self::collector());
        $this->assertSame("bool(true)\nbool(true)\nadded\n", $out);
        // Another process (a worker) runs it.
        $out = self::inProcess('$q = (new RedisLock\Client())->queue("orders");
            $t = $q->reserve()[0];
            $found = $q->find("t1");
            echo $t->id(), " ", $t->payload(), " ", implode(",", $found["tags"]), " ", $found["group"], " ", count($q->tagged("eu")), "\n";
            var_dump($q->ack($t));', self::collector());
        $this->assertSame("t1 payload vip,eu acme 1\nbool(true)\n", $out);

        [$spans, $points] = self::received();
        $send = self::one($spans, 'enqueue orders');
        $this->assertSame('producer', $send['kind']);
        $this->assertSame('shop', $send['service']);
        $this->assertSame('redislock', $send['scope']);
        $this->assertSame('0af7651916cd43dd8448eb211c80319c', $send['trace_id'], 'the parent PHP code set');
        $this->assertSame('b7ad6b7169203331', $send['parent_span_id']);
        $this->assertSame([
            'messaging.system' => 'redislock',
            'messaging.operation.name' => 'enqueue',
            'messaging.operation.type' => 'send',
            'messaging.destination.name' => 'orders',
            'messaging.message.id' => 't1',
            'redislock.task.group' => 'acme',
        ], $send['attributes']);

        $receive = self::one($spans, 'reserve orders');
        $this->assertSame('client', $receive['kind']);
        $this->assertSame('receive', $receive['attributes']['messaging.operation.type']);
        $this->assertSame('t1', $receive['attributes']['messaging.message.id']);
        $this->assertNotSame($send['trace_id'], $receive['trace_id'], "the worker's reserve is its own trace");

        $process = self::one($spans, 'process orders');
        $this->assertSame('consumer', $process['kind']);
        $this->assertSame($send['trace_id'], $process['trace_id'], 'one trace from the request to the worker');
        $this->assertSame($send['span_id'], $process['parent_span_id']);
        $this->assertSame([['trace_id' => $send['trace_id'], 'span_id' => $send['span_id']]], $process['links']);
        $this->assertSame(1, $process['attributes']['messaging.message.delivery_count']);
        $this->assertSame('acme', $process['attributes']['redislock.task.group'], 'the tenant, on the worker side too');
        $this->assertSame('ack', $process['attributes']['redislock.outcome']);
        $this->assertSame(0, $process['status']['code'], 'unset: processed');

        $ack = self::one($spans, 'ack orders');
        $this->assertSame('client', $ack['kind']);
        $this->assertSame('settle', $ack['attributes']['messaging.operation.type']);
        $this->assertSame($process['span_id'], $ack['parent_span_id']);

        $counts = [];
        foreach ($points as $p) {
            $key = $p['name'] . ' ' . ($p['attributes']['messaging.operation.name'] ?? '');
            $counts[$key] = ($counts[$key] ?? 0) + ($p['count'] ?? $p['value']);
        }
        $this->assertSame(1, $counts['messaging.client.operation.duration enqueue']);
        $this->assertSame(1, $counts['messaging.client.operation.duration reserve']);
        $this->assertSame(1, $counts['messaging.client.operation.duration ack']);
        $this->assertSame(1, $counts['messaging.process.duration process']);
        $this->assertSame(1, $counts['messaging.client.sent.messages enqueue']);
        $this->assertSame(1, $counts['messaging.client.consumed.messages reserve']);
    }

    public function testTheTraceAndThePayloadOutliveAFailureADeadLetterAndItsRetry(): void
    {
        $out = self::inProcess('$q = (new RedisLock\Client())->queue("mail", ["maxAttempts" => 1]);
            $q->enqueue("m1", "hello\0world", 0, null, ["a", "b", "c"], "g");
            $t = $q->reserve()[0];
            var_dump($q->nack($t, 0, "smtp down"));
            $dead = $q->dead();
            echo $dead[0]["id"], " ", bin2hex($dead[0]["payload"]), " ", implode(",", $dead[0]["tags"]), " ", $dead[0]["group"], "\n";
            echo $q->retryDead(), "\n";
            $t = $q->reserve()[0];
            echo bin2hex($t->payload()), "\n";
            var_dump($q->ack($t));', self::collector());
        $this->assertSame("bool(true)\nm1 68656c6c6f00776f726c64 a,b,c g\n1\n68656c6c6f00776f726c64\nbool(true)\n", $out);

        [$spans] = self::received();
        $send = self::one($spans, 'enqueue mail');
        $this->assertCount(2, $spans['process mail']);
        [$failed, $done] = $spans['process mail'];
        foreach ([$failed, $done] as $process) {
            $this->assertSame($send['trace_id'], $process['trace_id']);
            $this->assertSame($send['span_id'], $process['parent_span_id'], 'the retried task still has its trace');
        }
        $this->assertSame('nack', $failed['attributes']['redislock.outcome']);
        $this->assertSame(2, $failed['status']['code'], 'error');
        $this->assertSame('nacked', $failed['attributes']['error.type']);
        $this->assertSame('ack', $done['attributes']['redislock.outcome']);
        $this->assertSame(0, $done['status']['code']);
        self::one($spans, 'nack mail');
    }

    public function testLocksStocksAndLimitersHaveSpansOfTheirOwn(): void
    {
        $out = self::inProcess('$c = new RedisLock\Client();
            $l = $c->lock("job");
            var_dump($l->acquire());
            $l->release();
            $s = $c->stock("sale");
            $s->set(1);
            var_dump($s->take(1), $s->take(1));
            $r = $c->limiter("api", ["limit" => 1, "per" => 60]);
            var_dump($r->attempt("203.0.113.9")->allowed(), $r->attempt("203.0.113.9")->allowed());
            // The drop-in classes go through the same engines.
            $id = Lock_Service::addLock(7);
            var_dump(Lock_Service::releaseLock(7, $id));
            $seed = new RedisLock();
            var_dump($seed->lock("report"), $seed->unlock("report"));', self::collector());
        $this->assertSame("bool(true)\nint(0)\nbool(false)\nbool(true)\nbool(false)\nbool(true)\nbool(true)\nbool(true)\n", $out);

        [$spans, $points] = self::received();
        $acquire = self::one($spans, 'lock.acquire lock:{job}');
        $this->assertSame('client', $acquire['kind']);
        $this->assertSame(['redislock.lock.key' => 'lock:{job}', 'redislock.lock.acquired' => true], $acquire['attributes']);
        $hold = self::one($spans, 'lock.hold lock:{job}');
        $this->assertSame('internal', $hold['kind']);
        $this->assertSame(0, $hold['status']['code']);

        $this->assertCount(2, $spans['stock.take sale']);
        $this->assertSame([true, false], array_map(fn ($s) => $s['attributes']['redislock.granted'], $spans['stock.take sale']));
        $this->assertSame(1, $spans['stock.take sale'][0]['attributes']['redislock.stock.units']);

        $this->assertCount(2, $spans['limit.attempt api']);
        $this->assertSame([true, false], array_map(fn ($s) => $s['attributes']['redislock.granted'], $spans['limit.attempt api']));
        $this->assertStringNotContainsString('203.0.113.9', file_get_contents(self::$received), 'a limited key (an address) is not recorded');

        foreach (['order_lock_7', 'Lock:report'] as $key) {
            $this->assertTrue(self::one($spans, "lock.acquire $key")['attributes']['redislock.lock.acquired'], $key);
            $this->assertSame(0, self::one($spans, "lock.hold $key")['status']['code'], "$key: released, not lost");
        }

        $names = array_unique(array_column($points, 'name'));
        $this->assertContains('redislock.lock.wait.duration', $names);
        $this->assertContains('redislock.lock.hold.duration', $names);
    }

    public function testALockNotTakenInTimeAndALockLostSayWhatHappened(): void
    {
        $this->redis->set('lock:{busy}', 'someone else');
        $out = self::inProcess('$c = new RedisLock\Client();
            var_dump($c->lock("busy")->acquire(0.1));
            $l = $c->lock("gone");
            $l->acquire();
            (new RedisLock\Client())->lock("gone")->forceRelease();
            try { $l->release(); } catch (RedisLock\LockLostException $e) { echo "lost\n"; }', self::collector());
        $this->assertSame("bool(false)\nlost\n", $out);
        [$spans] = self::received();
        $this->assertFalse(self::one($spans, 'lock.acquire lock:{busy}')['attributes']['redislock.lock.acquired']);
        $this->assertArrayNotHasKey('lock.hold lock:{busy}', $spans);
        $hold = self::one($spans, 'lock.hold lock:{gone}');
        $this->assertSame(2, $hold['status']['code']);
        $this->assertSame('lost', $hold['attributes']['error.type']);
    }

    public function testOffUnlessACollectorIsNamedAndNothingStoredThen(): void
    {
        $env = getenv();
        unset($env['OTEL_EXPORTER_OTLP_ENDPOINT'], $env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'], $env['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT']);
        $code = '$q = (new RedisLock\Client())->queue("quiet");
            var_dump(RedisLock\Telemetry::enabled(), RedisLock\Telemetry::flush());
            $q->enqueue("t", "p", 0, null, ["x"]);';
        $this->assertSame("bool(false)\nbool(true)\n", self::inProcess($code, $env));
        $this->assertSame("bool(false)\nbool(true)\n", self::inProcess($code, self::collector(['OTEL_SDK_DISABLED' => 'true'])));
        $this->assertSame(['t' => 'x'], $this->redis->hGetAll('{Queue:quiet}:tags'), 'no trace context stored');
        $this->assertSame('', file_get_contents(self::$received));
    }

    public function testACollectorDownLosesNoResultAndHoldsNothingUp(): void
    {
        // A port nobody listens on (the receiver's, once it is closed, is
        // not known to stay free: a socket bound and closed at once is).
        $s = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($s, false), ':'), 1);
        fclose($s);
        $out = self::inProcess('$q = (new RedisLock\Client())->queue("down");
            foreach (range(1, 50) as $i) { $q->enqueue("t$i", "p$i"); }
            $n = 0;
            while ($ts = $q->reserve(10)) { foreach ($ts as $t) { $n += $q->ack($t); } }
            var_dump(RedisLock\Telemetry::enabled(), $n, RedisLock\Telemetry::flush());',
            self::collector(['OTEL_EXPORTER_OTLP_ENDPOINT' => "http://127.0.0.1:$port"]));
        $this->assertSame("bool(true)\nint(50)\nbool(false)\n", $out);
    }

    public function testAForkedChildExportsItsOwnSpans(): void
    {
        if (!function_exists('pcntl_fork')) {
            $this->markTestSkipped('pcntl');
        }
        $out = self::inProcess('$q = (new RedisLock\Client())->queue("forked");
            $q->enqueue("before", "p");
            $pid = pcntl_fork();
            $q->enqueue($pid === 0 ? "child" : "parent", "p");
            if ($pid === 0) { exit(0); }
            pcntl_waitpid($pid, $status);
            echo $status, "\n";', self::collector());
        $this->assertSame("0\n", $out);
        [$spans] = self::received();
        $ids = array_map(fn ($s) => $s['attributes']['messaging.message.id'], $spans['enqueue forked']);
        sort($ids);
        $this->assertSame(['before', 'child', 'parent'], $ids, 'each span once: the child never sends its parent\'s');
    }

    public function testAnFpmWorkerExportsWithTheEnvironmentOfItsPool(): void
    {
        $pool = new FpmPool(['enqueue.php' => '<?php
            RedisLock\Telemetry::setParent($_SERVER["HTTP_TRACEPARENT"] ?? null);
            echo (new RedisLock\Client())->queue("web")->enqueue($_GET["id"], "p"), " ", RedisLock\Telemetry::parent() ?? "none";'],
            ['env[OTEL_EXPORTER_OTLP_ENDPOINT]' => 'http://127.0.0.1:' . self::$port, 'env[OTEL_SERVICE_NAME]' => 'web',
             'env[OTEL_BSP_SCHEDULE_DELAY]' => '100']);
        $this->assertTrue($pool->started());
        $this->assertStringEndsWith('added ' . self::PARENT, $pool->request('enqueue.php', 'id=w1', ['HTTP_TRACEPARENT' => self::PARENT]));
        $this->assertStringEndsWith('added none', $pool->request('enqueue.php', 'id=w2'), 'a parent lasts one request');
        // The worker exports from its own thread, within the schedule delay.
        for ($i = 0; $i < 100 && count(self::received()[0]['enqueue web'] ?? []) < 2; $i++) {
            usleep(100000);
        }
        [$spans] = self::received();
        $this->assertCount(2, $spans['enqueue web'] ?? []);
        $byId = array_column(array_map(fn ($s) => [$s['attributes']['messaging.message.id'], $s], $spans['enqueue web']), 1, 0);
        $this->assertSame('0af7651916cd43dd8448eb211c80319c', $byId['w1']['trace_id']);
        $this->assertNotSame('0af7651916cd43dd8448eb211c80319c', $byId['w2']['trace_id']);
        $this->assertSame('web', $byId['w1']['service']);
        $pool->stop();
    }

    public function testPhpinfoSaysWhetherItIsOnAndNeverTheEndpoint(): void
    {
        $on = self::inProcess('phpinfo(INFO_MODULES);', self::collector(['OTEL_EXPORTER_OTLP_ENDPOINT' => 'http://otel:s3cret@127.0.0.1:1']));
        $this->assertStringContainsString('OpenTelemetry => on: traces, metrics (OTLP/HTTP)', $on);
        $this->assertStringNotContainsString('s3cret', $on);
        $traces = self::inProcess('phpinfo(INFO_MODULES);', self::collector(['OTEL_METRICS_EXPORTER' => 'none']));
        $this->assertStringContainsString('OpenTelemetry => on: traces (OTLP/HTTP)', $traces);
        $off = self::inProcess('phpinfo(INFO_MODULES);', self::collector(['OTEL_SDK_DISABLED' => 'TRUE']));
        $this->assertStringContainsString('OpenTelemetry => off (OTEL_SDK_DISABLED)', $off);
    }

    public function testSetParentTakesOnlyAW3cTraceparent(): void
    {
        $out = self::inProcess('foreach ([null, "", "junk", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "' . self::PARENT . '\0x", " ' . self::PARENT . ' "] as $tp) {
                var_dump(RedisLock\Telemetry::setParent($tp), RedisLock\Telemetry::parent());
            }
            var_dump(RedisLock\Telemetry::setParent("' . self::PARENT . '", "vendor=1"), RedisLock\Telemetry::parent());
            RedisLock\Runtime::endRequest();
            var_dump(RedisLock\Telemetry::parent());
            try { RedisLock\Telemetry::setParent([]); } catch (TypeError $e) { echo $e->getMessage(), "\n"; }
            try { new RedisLock\Telemetry(); } catch (Error $e) { echo $e->getMessage(), "\n"; }', self::collector());
        $p = self::PARENT;
        $this->assertSame("bool(true)\nNULL\nbool(true)\nNULL\nbool(false)\nNULL\nbool(false)\nNULL\nbool(false)\nNULL\n"
            . "bool(true)\nstring(55) \"$p\"\nbool(true)\nstring(55) \"$p\"\nNULL\n"
            . "RedisLock\\Telemetry::setParent(): Argument #1 (\$traceparent) must be of type string|int|float, array given\n"
            . "Cannot create RedisLock\\Telemetry with new: its methods are static (RedisLock\\Telemetry::enabled())\n", $out);
    }
}
