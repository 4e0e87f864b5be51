<?php

/**
 * Signals in real workers: a signal during a round trip never fails the
 * call (the reply is read to the end, the handler runs right after), and a
 * signal with a handler ends a blocking wait promptly, as it ends sleep().
 */
final class SignalsTest extends RedisLockTestCase
{
    public function testAStormOfSignalsDuringRoundTripsFailsNoCall(): void
    {
        $worker = self::start('
            pcntl_async_signals(true);
            $signals = 0;
            pcntl_signal(SIGUSR1, function () use (&$signals) { $signals++; });
            pcntl_signal(SIGALRM, function () use (&$signals) { $signals++; });
            $client = new RedisLock\Client();
            $seed = new RedisLock();
            $q = $client->queue("storm");
            $ops = $errors = 0;
            echo "ready\n";
            $end = microtime(true) + 2.5;
            for ($i = 0; microtime(true) < $end; $i++) {
                try {
                    $l = $client->lock("storm-$i", ["ttl" => 30]);
                    $l->acquire(); $l->release();
                    $seed->lock("seed-$i", 0, 30); $seed->unlock("seed-$i");
                    $q->enqueue("t$i", "payload");
                    foreach ($q->reserve(1) as $t) { $q->ack($t); }
                    $ops += 6;
                } catch (Throwable $e) { $errors++; echo get_class($e), ": ", $e->getMessage(), "\n"; }
            }
            echo "$ops $errors $signals";');
        fgets($worker[1][1]);
        $sent = 0;
        $end = microtime(true) + 2;
        while (microtime(true) < $end) {
            // Queue workers' own signals: stop requests and job alarms.
            posix_kill($worker[2], $sent % 2 ? SIGUSR1 : SIGALRM);
            $sent++;
            usleep(300);
        }
        $out = self::finish($worker);
        $this->assertMatchesRegularExpression('/^\d+ 0 \d+$/', $out, 'no call failed');
        [$ops, , $handled] = array_map('intval', explode(' ', $out));
        $this->assertGreaterThan(1000, $ops);
        $this->assertGreaterThan($sent / 10, $handled, "the handler ran ($handled of $sent signals; repeats coalesce)");
        // Fencing counters stay (an hour after each lease), nothing else.
        $left = array_filter(array_keys($this->snapshot()), fn ($k) => !str_ends_with($k, ':fence'));
        $this->assertSame([], array_values($left), 'no lock or task left behind');
    }

    /**
     * @testWith ["acquire"]
     *           ["reserve"]
     *           ["seed lock"]
     */
    #[PHPUnit\Framework\Attributes\TestWith(["acquire"])]
    #[PHPUnit\Framework\Attributes\TestWith(["reserve"])]
    #[PHPUnit\Framework\Attributes\TestWith(["seed lock"])]
    public function testASignalWithAHandlerEndsAnEndlessWaitPromptly(string $what): void
    {
        $holder = (new RedisLock\Client(RedisServer::$main->dsn()))->lock('busy');
        $this->assertTrue($holder->acquire());
        $this->redis->set('Lock:busy', 'someone', ['px' => 60000]);
        $wait = [
            'acquire' => '$r = (new RedisLock\Client())->lock("busy")->acquire(INF); echo var_export($r, true);',
            'reserve' => '$r = (new RedisLock\Client())->queue("empty")->reserve(1, null, INF); echo json_encode($r);',
            'seed lock' => '$r = (new RedisLock())->lock("busy", 3600); echo var_export($r, true);',
        ][$what];
        $worker = self::start('
            pcntl_async_signals(true);
            $stop = false;
            pcntl_signal(SIGTERM, function () use (&$stop) { $stop = true; });
            echo "ready\n";
            $t = microtime(true);
            ' . $wait . '
            printf(" %.3f %s", microtime(true) - $t, $stop ? "handled" : "not handled");');
        fgets($worker[1][1]);
        usleep(700000);
        posix_kill($worker[2], SIGTERM);
        $out = self::finish($worker);
        $this->assertMatchesRegularExpression('/^(false|\[\]) [\d.]+ handled$/', $out);
        $waited = (float) explode(' ', $out)[1];
        $this->assertLessThan(1.7, $waited, 'ended well under a second after the signal');
        // It left the line: the next release finds nobody waiting.
        $this->assertSame(0, $this->redis->lLen('lock:{busy}:line') + $this->redis->lLen('{Lock:busy}:line') + $this->redis->lLen('{Queue:empty}:line'));
        $holder->release();
    }

    public function testASignalWithoutAHandlerChangesNothing(): void
    {
        $holder = (new RedisLock\Client(RedisServer::$main->dsn()))->lock('still');
        $this->assertTrue($holder->acquire());
        $worker = self::start('
            pcntl_signal(SIGUSR2, SIG_IGN);
            echo "ready\n";
            $t = microtime(true);
            $r = (new RedisLock\Client())->lock("still")->acquire(2);
            printf("%s %.3f", var_export($r, true), microtime(true) - $t);');
        fgets($worker[1][1]);
        usleep(300000);
        posix_kill($worker[2], SIGUSR2);
        usleep(300000);
        posix_kill($worker[2], SIGWINCH);
        usleep(300000);
        $holder->release();
        $out = self::finish($worker);
        $this->assertMatchesRegularExpression('/^true [\d.]+$/', $out, 'it went on waiting and got the lock');
    }
}
