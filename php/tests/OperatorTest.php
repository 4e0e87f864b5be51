<?php

use RedisLock\Client;

/**
 * What operators see: the queues' counters and registry, lock inspection
 * (holder process, lease, fencing token, waiters), the `redislock` CLI and
 * its JSON, and the Prometheus exposition, checked with promtool.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class OperatorTest extends RedisLockTestCase
{
    private const CLI = __DIR__ . '/../bin/redislock';

    /** @var list<array> waiter processes to stop */
    private array $waiters = [];

    protected function tearDown(): void
    {
        foreach ($this->waiters as $w) {
            proc_terminate($w[0], SIGKILL);
            self::finish($w);
        }
    }

    /**
     * Runs the CLI in a process of its own against the suite's Redis;
     * returns [exit status, stdout, stderr].
     */
    private static function cli(array $args, string $stdin = '', array $env = []): array
    {
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $p = proc_open(
            [PHP_BINARY, '-n', '-d', "extension=$so", self::CLI, ...$args],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            null,
            $env + ['REDISLOCK_URL' => RedisServer::$main->dsn(), 'PATH' => getenv('PATH')],
        );
        fwrite($pipes[0], $stdin);
        fclose($pipes[0]);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        return [proc_close($p), $out, $err];
    }

    /**
     * Every app's queues, whatever its key prefix (Laravel's
     * laravel_database_): status lists the other prefixes' queues, and
     * --prefix looks under one. Prefixes kept before this was are found
     * by SCAN once.
     */
    public function testStatusListsTheQueuesUnderEveryPrefix(): void
    {
        (new RedisLock\Client())->queue('mail')->enqueue('a');
        $laravel = new RedisLock\Client(['dsn' => RedisServer::$main->dsn(), 'prefix' => 'laravel_database_']);
        $laravel->queue('queues:default')->enqueueMany(['j1' => null, 'j2' => null]);
        $this->assertSame(['', 'laravel_database_'], (new RedisLock\Client())->queuePrefixes());
        $this->redis->del('redislock:prefixes');
        $this->assertSame(['', 'laravel_database_'], (new RedisLock\Client())->queuePrefixes(), 'found by SCAN');
        $this->assertSame(2, $this->redis->sCard('redislock:prefixes'), 'and kept');
        [$status, $out] = self::cli(['status']);
        $this->assertSame(0, $status, $out);
        $this->assertMatchesRegularExpression('/^mail +running +1 /m', $out);
        $this->assertMatchesRegularExpression('/^queues under other prefixes/m', $out);
        $this->assertMatchesRegularExpression('/^laravel_database_ +queues:default +2 +0 +0 +0$/m', $out);
        [, $out] = self::cli(['--prefix=laravel_database_', 'status']);
        $this->assertMatchesRegularExpression('/^queues:default +running +2 /m', $out);
        $this->assertMatchesRegularExpression("/^'' +mail +1 +0 +0 +0$/m", $out);
        $this->assertSame(['j1', 'j2'], array_column(self::json(['--prefix=laravel_database_', 'queue', 'queues:default'])['queued'], 'id'));
        $this->assertSame(['mail'], array_column(self::json(['status']), 'name'), 'JSON keeps its shape');
        $this->assertSame(2, self::cli(['--prefix', 'status'])[0]);
    }

    /** The CLI names framework jobs (Laravel's displayName) in a JOB column, only where there are any. */
    public function testTheCliNamesFrameworkJobs(): void
    {
        $q = (new RedisLock\Client())->queue('jobs');
        $q->enqueue('j1', json_encode(['uuid' => 'u', 'displayName' => 'App\\Jobs\\SendMail', 'data' => []]));
        $q->enqueue('p1', 'plain');
        [$status, $out] = self::cli(['queue', 'jobs']);
        $this->assertSame(0, $status, $out);
        $this->assertMatchesRegularExpression('/^QUEUED +JOB +DUE +ATTEMPTS +PAYLOAD$/m', $out);
        $this->assertMatchesRegularExpression('/^j1 +App\\\\Jobs\\\\SendMail +/m', $out);
        $this->assertMatchesRegularExpression('/^p1 +- +/m', $out);
        $this->assertMatchesRegularExpression('/^job +App\\\\Jobs\\\\SendMail$/m', self::cli(['task', 'jobs', 'j1'])[1]);
        // A search by job name: the class or its short name.
        $q->enqueue('j2', json_encode(['uuid' => 'v', 'displayName' => 'App\\Jobs\\SendMail', 'data' => []]), 60);
        $q->enqueue('j3', json_encode(['uuid' => 'w', 'displayName' => 'App\\Jobs\\Other', 'data' => []]));
        foreach (['App\\Jobs\\SendMail', 'SendMail'] as $name) {
            [$status, $out] = self::cli(['jobs', 'jobs', $name]);
            $this->assertSame(0, $status, $out);
            $this->assertMatchesRegularExpression('/^j1 +queued +/m', $out, $name);
            $this->assertMatchesRegularExpression('/^j2 +queued +/m', $out, $name);
            $this->assertDoesNotMatchRegularExpression('/^(j3|p1) /m', $out, $name);
        }
        $this->assertStringContainsString('there are more', self::cli(['jobs', 'jobs', 'SendMail', '--limit=1'])[1]);
        $this->assertStringContainsString('no tasks of the job', self::cli(['jobs', 'jobs', 'Mail'])[1]);
        $this->assertSame(2, self::cli(['jobs', 'jobs'])[0], 'a job name is needed');
        $q->remove(['j1', 'j2', 'j3']);
        $this->assertMatchesRegularExpression('/^QUEUED +DUE +ATTEMPTS +PAYLOAD$/m', self::cli(['queue', 'jobs'])[1], 'no job: no column');
    }

    public function testAnErrorIsSaidOnceAsRedislocks(): void
    {
        [$status, , $err] = self::cli(['status'], '', ['REDISLOCK_URL' => 'redis://127.0.0.1:1']);
        $this->assertSame(1, $status);
        $this->assertStringStartsWith('redislock: ', $err);
        $this->assertStringNotContainsString('redislock: redislock:', $err);
    }

    /**
     * A process of its own that is seen as a worker of $queue (a reserve
     * while the queue is paused: it takes nothing) and ends; its pid. (This
     * process's own notes are at most one per 5 s: an earlier test's may
     * hide a new one after the flush.)
     */
    private function seenWorker(string $queue): int
    {
        $q = (new Client())->queue($queue);
        $paused = $q->pause();
        $pid = (int) self::php('(new RedisLock\Client())->queue(' . var_export($queue, true) . ')->reserve(); echo getmypid();');
        if ($paused) {
            $q->resume();
        }
        return $pid;
    }

    private static function json(array $args): mixed
    {
        [$status, $out, $err] = self::cli(['--json', ...$args]);
        self::assertSame(0, $status, $err);
        return json_decode($out, true, 512, JSON_THROW_ON_ERROR);
    }

    /**
     * A known state: queue 'mail' with 2 ready, 1 delayed, 1 leased and 2
     * dead tasks (after 6 enqueued, 1 acked... see the totals below); queue
     * 'reports' with 3 ready; lock 'nightly' held by a child for 120 s with
     * two waiters in line; a seed lock 'legacy' held by another child.
     * Returns the client, queue 'mail', the leased task, and the pid and
     * fencing token of the holder of 'nightly'.
     */
    private function seed(): array
    {
        $c = new Client();
        $mail = $c->queue('mail', ['maxAttempts' => 1, 'lease' => 300]);
        foreach (['d1' => 'first', 'd2' => null, 'done' => 'x', 'busy' => 'y', 'r1' => null, 'r2' => 'z'] as $id => $payload) {
            $mail->enqueue($id, $payload);
        }
        $mail->enqueue('later', null, 3600);
        [$d1, $d2, $done, $busy] = $mail->reserve(4);
        $mail->nack($d1, 0, 'RuntimeException: smtp down');
        $mail->nack($d2);
        $mail->ack($done);
        $reports = $c->queue('reports');
        $reports->enqueueMany(['a' => null, 'b' => null, 'c' => null]);
        $holder = self::start('$l = (new RedisLock\Client())->lock("nightly", ["ttl" => 120]); $l->acquire(); echo getmypid(), " ", $l->token(), "\\n"; sleep(60);');
        $this->waiters[] = $holder;
        [$pid, $token] = array_map('intval', explode(' ', fgets($holder[1][1])));
        foreach ([1, 2] as $i) {
            $this->waiters[] = self::start('$l = (new RedisLock\Client())->lock("nightly"); $l->acquire(60); sleep(60);');
            $this->lineReaches('lock:{nightly}:line', $i);
        }
        $legacy = self::start('$l = new RedisLock(); $l->lock("legacy", 0, 100); echo "held\\n"; sleep(60);');
        $this->assertSame("held\n", fgets($legacy[1][1]));
        $this->waiters[] = $legacy;
        return [$c, $mail, $busy, $pid, $token];
    }

    public function testQueuesCountWhatHappensToTheirTasksAndListThemselves(): void
    {
        [$c, $mail] = $this->seed();
        $this->assertSame(['mail', 'reports'], $c->queues());
        $m = $mail->metrics();
        $this->assertSame(
            ['ready' => 2, 'delayed' => 1, 'leased' => 1, 'dead' => 2],
            array_intersect_key($m, ['ready' => 0, 'delayed' => 0, 'leased' => 0, 'dead' => 0]),
        );
        $this->assertSame(['enqueued' => 7, 'acked' => 1, 'nacked' => 0, 'retried' => 0, 'dead' => 2, 'expired' => 0], $m['totals']);

        $history = $mail->history();
        $this->assertCount(60, $history);
        $this->assertSame(range($history[0]['at'], $history[0]['at'] + 590, 10), array_column($history, 'at'));
        $this->assertEqualsWithDelta(time(), end($history)['at'], 11, 'the last period is the running one');
        foreach (array_keys($m['totals']) as $counter) {
            $this->assertSame($m['totals'][$counter], array_sum(array_column($history, $counter)), "$counter: all of it within the last 10 minutes");
        }

        // A lease that runs out, a retry, the seed's pop: each counted.
        $mail->retryDead(['d1']);
        $q = $c->queue('short', ['lease' => 0.05]);
        $q->enqueue('t');
        $q->reserve();
        usleep(100000);
        $this->assertCount(1, $q->reserve());
        (new RedisQueue())->enqueue('legacy', 'p');
        (new RedisQueue())->pop('legacy');
        $this->assertSame(1, $mail->metrics()['totals']['retried']);
        $this->assertSame(['enqueued' => 1, 'expired' => 1], array_intersect_key($q->metrics()['totals'], ['enqueued' => 0, 'expired' => 0]));
        $this->assertSame(['legacy', 'mail', 'reports', 'short'], $c->queues(), 'the seed queue registers itself too');
        $this->assertSame(1, $c->queue('legacy')->metrics()['totals']['acked'], 'a pop counts as acked');
    }

    public function testCountsOlderThanTenMinutesFoldIntoTheTotalsAndTheHashStaysBounded(): void
    {
        $q = (new Client())->queue('old');
        $q->enqueue('first');
        $stats = $this->redis->keys('*old*:stats');
        $this->assertCount(1, $stats);
        $stats = $stats[0];
        // 140 periods of 10 s from 33 to 11 minutes ago, one enqueue each,
        // and 3 acks 11 minutes ago, as a long-running queue leaves them.
        $now = intdiv((int) $this->redis->time()[0], 10);
        foreach (range($now - 200, $now - 61) as $p) {
            $this->redis->hSet($stats, "enqueued:$p", '1');
        }
        $this->redis->hSet($stats, 'acked:' . ($now - 65), '3');
        $this->assertSame(['enqueued' => 141, 'acked' => 3], array_intersect_key($q->metrics()['totals'], ['enqueued' => 0, 'acked' => 0]));
        $this->assertSame(1, array_sum(array_column($q->history(), 'enqueued')), 'only the last 10 minutes are history');

        // The first enqueue of a new period folds the old periods into the
        // total (waits for the next period: the one above may be running).
        while (intdiv((int) $this->redis->time()[0], 10) === $now) {
            usleep(100000);
        }
        $q->enqueue('second');
        $fields = array_keys($this->redis->hGetAll($stats));
        $enqueued = array_values(array_filter($fields, fn ($f) => str_starts_with($f, 'enqueued')));
        $this->assertCount(3, $enqueued, 'the total, and the two periods of the last 10 minutes: ' . implode(' ', $enqueued));
        $this->assertSame('140', $this->redis->hGet($stats, 'enqueued'));
        $this->assertSame(['enqueued' => 142, 'acked' => 3], array_intersect_key($q->metrics()['totals'], ['enqueued' => 0, 'acked' => 0]));
        $this->assertSame(2, array_sum(array_column($q->history(), 'enqueued')));
    }

    public function testCountersStayExactUnderConcurrentProducersAndWorkers(): void
    {
        // Each task tagged with its producer and its number's parity.
        $produce = 'for ($i = 0; $i < 250; $i++) { (new RedisLock\Client())->queue("busy")->enqueue(getmypid() . "-$i", null, 0, null, ["p" . getmypid(), "i" . $i % 2]); }';
        // No attempt limit: a task nacked five times would die (counted
        // dead, not nacked), as one did in a CI run.
        $work = '$q = (new RedisLock\Client())->queue("busy", ["maxAttempts" => 0]); $n = 0;
            while ($n < 250) { foreach ($q->reserve(min(10, 250 - $n), 30, 2) as $t) { $i = $n++; $i % 5 ? $q->ack($t) : $q->nack($t); } }';
        (new Client())->queue('busy')->keepRecent(1000);
        self::phpMany([$produce, $produce, $produce, $produce, $work, $work, $work, $work]);
        $m = (new Client())->queue('busy')->metrics();
        // Every fifth reserve is nacked: the workers stop at 250 reserves
        // each, 1000 reserves, 200 nacks, so 800 acks, and the 200 nacked
        // tasks are still queued.
        $this->assertSame(1000, $m['totals']['enqueued']);
        $this->assertSame(800, $m['totals']['acked']);
        $this->assertSame(200, $m['totals']['nacked']);
        $this->assertSame(0, $m['totals']['dead']);
        // One record per ended attempt: each of the 800 acked once, by the four workers.
        $recent = (new Client())->queue('busy')->recent(1000);
        $this->assertSame(['acked' => 800, 'nacked' => 200], array_count_values(array_column($recent, 'outcome')));
        $acked = array_column(array_filter($recent, fn ($a) => $a['outcome'] === 'acked'), 'id');
        $this->assertCount(800, array_unique($acked));
        $this->assertCount(4, array_unique(array_column($recent, 'worker')));
        $this->assertSame($m['ready'], $m['totals']['enqueued'] - $m['totals']['acked'], 'nothing lost, nothing counted twice');
        // Each record has its own task's tags; the tasks still queued keep theirs, the acked ones left none behind.
        foreach ($recent as $a) {
            [$pid, $i] = explode('-', $a['id']);
            $this->assertSame(["p$pid", 'i' . $i % 2], $a['tags'], $a['id']);
        }
        $this->assertSame($m['ready'], $this->redis->hLen('{Queue:busy}:tags'));
        $queued = array_merge((new Client())->queue('busy')->tagged('i0', 1000), (new Client())->queue('busy')->tagged('i1', 1000));
        $this->assertCount($m['ready'], array_unique(array_column($queued, 'id')));
        $this->assertSame(['queued'], array_unique(array_column($queued, 'state')));
    }

    /**
     * A worker started with a password in its command line (arguments, a
     * -d setting, its process title): the holder record says the SAPI and
     * the script's file name, and no byte of Redis holds the password.
     */
    public function testAHolderRecordNeverHoldsTheCommandLine(): void
    {
        $dir = sys_get_temp_dir() . '/holder-' . getmypid();
        @mkdir($dir);
        $script = "$dir/worker.php";
        file_put_contents($script, '<?php
            @cli_set_process_title("worker S3cretPw");
            $l = (new RedisLock\Client())->lock("argv"); $l->acquire();
            $o = (new RedisLock\Client(["prefix" => "other:"]))->lock("argv"); $o->acquire();
            $s = new RedisLock(); $s->lock("argv-seed");
            echo "held\n"; sleep(30);');
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $cmd = [PHP_BINARY, '-n', '-d', "extension=$so", '-d', 'redislock.default_dsn=' . RedisServer::$main->dsn(),
                '-d', 'mysqli.default_pw=S3cretPw', $script, 'redis://:S3cretPw@db.example:6379', '--password=S3cretPw'];
        $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        try {
            $held = fgets($pipes[1]);
            $this->assertSame("held\n", $held, $held === false ? stream_get_contents($pipes[2]) : '');
            $c = new Client();
            $this->assertSame('cli worker.php', $c->lockState('argv')['holder']['process'] ?? null);
            $this->assertSame('cli worker.php', $c->lockState('argv-seed', 'seed')['holder']['process'] ?? null);
            $other = (new Client(['prefix' => 'other:']))->lockState('argv');
            $this->assertSame('cli worker.php', $other['holder']['process'] ?? null, 'described under every prefix it locks under');
            foreach ($this->redis->keys('*') as $key) {
                $this->assertStringNotContainsString('S3cretPw', $key . $this->redis->dump($key), $key);
            }
        } finally {
            proc_terminate($p);
            proc_close($p);
            unlink($script);
            rmdir($dir);
        }
    }

    public function testLockInspectionNamesTheHolderProcessItsLeaseTokenAndWaiters(): void
    {
        [$c, , , $pid, $token] = $this->seed();
        $state = $c->lockState('nightly');
        $this->assertTrue($state['held']);
        $this->assertEqualsWithDelta(120, $state['remaining'], 5);
        $this->assertSame($token, $state['token']);
        $this->assertSame(['host' => gethostname(), 'pid' => $pid], array_slice($state['holder'], 0, 2));
        $this->assertSame('cli Standard input code', $state['holder']['process'], 'the SAPI and what PHP calls -r code; never the code itself');
        $this->assertSame(2, $state['waiting']);

        $legacy = $c->lockState('legacy', 'seed');
        $this->assertTrue($legacy['held']);
        $this->assertNull($legacy['token'], 'seed locks have no fencing tokens');
        $this->assertNotSame($pid, $legacy['holder']['pid'], 'held by the child that took it');
        $this->assertSame('cli Standard input code', $legacy['holder']['process']);

        $this->assertSame(
            ['held' => false, 'remaining' => null, 'token' => null, 'holder' => null, 'waiting' => 0, 'holders' => 0, 'permits' => 0, 'total' => null],
            $c->lockState('free'),
        );
        $this->assertSame([['legacy', 'RedisLock'], ['nightly', 'lock']], array_map(fn ($l) => [$l['name'], $l['kind']], $c->locks()));
        $this->assertSame(['nightly'], array_column($c->locks('night*'), 'name'));
        $this->assertSame([], $c->locks('nope*'));
        $this->assertCount(1, $c->locks(null, 1));
        $listed = $c->locks('nightly')[0];
        $this->assertEqualsWithDelta($state['remaining'], $listed['remaining'], 1);
        unset($state['remaining'], $listed['remaining'], $listed['name'], $listed['kind']);
        $this->assertSame($state, $listed, 'the same state as lockState()');

        // A waiter killed in line stops counting once its place runs out.
        proc_terminate($this->waiters[2][0], SIGKILL);
        $deadline = microtime(true) + 5;
        while ($c->lockState('nightly')['waiting'] !== 1 && microtime(true) < $deadline) {
            usleep(50000);
        }
        $this->assertSame(1, $c->lockState('nightly')['waiting']);
    }

    public function testListingManyLocksLooksEachHolderUpOnce(): void
    {
        // A child holds them: this process described itself to a server
        // that earlier tests flushed, and does so again only a minute later.
        $holder = self::start('$c = new RedisLock\Client(); $held = [];
            foreach (range(1, 1500) as $i) { $held[] = $l = $c->lock(sprintf("batch-%04d", $i)); $l->acquire() or exit(3); }
            echo getmypid(), " ", implode(",", array_map(fn ($l) => $l->token(), $held)), "\n"; sleep(60);');
        $this->waiters[] = $holder;
        [$pid, $tokens] = explode(' ', trim(fgets($holder[1][1])));
        $c = new Client();
        $calls = function (): array {
            $out = [];
            foreach ($this->redis->info('commandstats') as $k => $v) {
                preg_match('/calls=(\d+)/', $v, $m);
                $out[$k] = (int) $m[1];
            }
            return $out;
        };
        $before = $calls();
        $listed = $c->locks('batch-*', 10000);
        $after = $calls();
        $this->assertCount(1500, $listed);
        $this->assertSame(sprintf('batch-%04d', 1), $listed[0]['name']);
        $this->assertSame(sprintf('batch-%04d', 1500), $listed[1499]['name'], 'sorted by name');
        $this->assertSame(array_map('intval', explode(',', $tokens)), array_column($listed, 'token'));
        $this->assertSame([(int) $pid], array_values(array_unique(array_map(fn ($l) => $l['holder']['pid'] ?? null, $listed))));
        $this->assertSame(1, ($after['cmdstat_hgetall'] ?? 0) - ($before['cmdstat_hgetall'] ?? 0), 'one holder, looked up once');
        // As functions on Redis 7 and later, with EVALSHA before.
        $scripts = fn (array $calls) => ($calls['cmdstat_fcall'] ?? 0) + ($calls['cmdstat_evalsha'] ?? 0);
        $this->assertSame(1500, $scripts($after) - $scripts($before), 'one state script per lock');
    }

    public function testInspectionRefusesBadArgumentsAndChangesNothing(): void
    {
        $c = new Client();
        $lock = $c->lock('x');
        $lock->acquire();
        $c->queue('q')->enqueue('t');
        $before = $this->redis->rawCommand('DEBUG', 'DIGEST');
        $this->assertAllRefused([
            fn () => $c->lockState(''),
            fn () => $c->lockState('x', 'mutex'),
            fn () => $c->lockState('x', ''),
            fn () => $c->lockState([]),
            fn () => $c->lockState('x', []),
            fn () => $c->locks(''),
            fn () => $c->locks('*', 0),
            fn () => $c->locks('*', -1),
            fn () => $c->locks('*', 10001),
            fn () => $c->locks('*', PHP_INT_MAX),
            fn () => $c->locks([]),
            fn () => $c->locks('*', NAN),
            fn () => $c->locks('*', '5.5'),
            fn () => $c->locks('*', 'five'),
        ]);
        $this->assertSame(['held' => false, 'remaining' => null, 'token' => null, 'holder' => null, 'waiting' => 0, 'holders' => 0, 'permits' => 0, 'total' => null], $c->lockState("a\0b" . str_repeat('x', 100000)));
        $this->assertSame([], $c->locks("\0*"));
        $this->assertSame($before, $this->redis->rawCommand('DEBUG', 'DIGEST'));
    }

    public function testTheCliShowsTheSeededStateAsJson(): void
    {
        [, , , $pid] = $this->seed();
        $status = self::json(['status']);
        $this->assertSame(['mail', 'reports'], array_column($status, 'name'));
        $this->assertSame([2, 1, 1, 2], [$status[0]['ready'], $status[0]['delayed'], $status[0]['leased'], $status[0]['dead']]);
        $this->assertSame(7, $status[0]['totals']['enqueued']);
        $this->assertSame([3, 0, 0, 0], [$status[1]['ready'], $status[1]['delayed'], $status[1]['leased'], $status[1]['dead']]);
        $this->assertIsFloat($status[1]['oldestDueAge']);
        $this->assertSame(array_keys($status[0]['totals']), array_keys($status[0]['perMinute']));

        $queue = self::json(['queue', 'mail']);
        $this->assertSame(['r1', 'r2', 'later'], array_column($queue['queued'], 'id'));
        $this->assertSame(['d1', 'd2'], array_column(self::json(['dead', 'mail']), 'id'));
        $this->assertSame(['d1'], array_column(self::json(['--limit=1', 'dead', 'mail']), 'id'));
        $this->assertSame(['RuntimeException: smtp down', null], array_column(self::json(['dead', 'mail']), 'reason'));
        [, $out] = self::cli(['dead', 'mail']);
        $this->assertMatchesRegularExpression('/^ID +ATTEMPTS +DIED +PAYLOAD +REASON$/m', $out);
        $this->assertMatchesRegularExpression('/^d1 +1 +[-0-9]+ [0-9:]+ ' . date('T') . ' +first +RuntimeException: smtp down$/m', $out);
        $this->assertMatchesRegularExpression('/^d2 +1 +[-0-9]+ [0-9:]+ ' . date('T') . ' +- +-$/m', $out);

        $locks = self::json(['locks']);
        $this->assertSame([['legacy', 'RedisLock'], ['nightly', 'lock']], array_map(fn ($l) => [$l['name'], $l['kind']], $locks));
        $this->assertSame([0, 2], array_column($locks, 'waiting'));
        $this->assertSame($pid, $locks[1]['holder']['pid']);
        $this->assertSame(['nightly'], array_column(self::json(['locks', 'n*']), 'name'));

        [$status, $out] = self::cli(['status']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^QUEUE +STATE +READY +DELAYED +RUNNING +DEAD/', $out);
        $this->assertMatchesRegularExpression('/^mail +running +2 +1 +1 +2 /m', $out);
        [, $out] = self::cli(['locks']);
        $this->assertMatchesRegularExpression('/^nightly +lock +yes +\d+\.\ds +\d+ +2 +' . preg_quote(gethostname()) . ' pid ' . $pid . ' /m', $out);
        // The drop-in RedisLock's kind by its class's name, as the docs call it.
        $this->assertMatchesRegularExpression('/^legacy +RedisLock +yes /m', $out);
    }

    public function testPauseResumeAndClearFromTheCli(): void
    {
        [$c, $mail, $busy] = $this->seed();
        [$status, $out, $err] = self::cli(['pause', 'mail'], "y\n");
        $this->assertSame([0, "queue 'mail' paused\n"], [$status, $out]);
        $this->assertStringContainsString("Pause queue 'mail': its workers take no new tasks until resume (running ones finish)? [y/N]", $err);
        $this->assertSame("queue 'mail' was paused already\n", self::cli(['pause', 'mail', '--yes'])[1]);
        $this->assertSame([], $mail->reserve(), 'its workers get nothing');
        $this->assertMatchesRegularExpression('/^mail +paused +2 +1 +1 +2 /m', self::cli(['status'])[1]);
        $this->assertMatchesRegularExpression('/^reports +running +3 /m', self::cli(['status'])[1]);
        $this->assertEqualsWithDelta(microtime(true), self::json(['status'])[0]['paused'], 5);
        $this->assertNull(self::json(['status'])[1]['paused']);
        $this->assertMatchesRegularExpression('/^queue mail \(paused since [-0-9]+ [0-9:]+ ' . date('T') . '\)$/m', self::cli(['queue', 'mail'])[1]);

        $this->assertSame(['resumed' => true], self::json(['resume', 'mail', '--yes']));
        $this->assertSame("queue 'mail' was not paused\n", self::cli(['resume', 'mail', '--yes'])[1]);
        $this->assertMatchesRegularExpression('/^queue mail \(running\)$/m', self::cli(['queue', 'mail'])[1]);
        $mail->throttle(600);
        $this->assertMatchesRegularExpression('/^mail +throttled +/m', self::cli(['status'])[1]);
        $this->assertMatchesRegularExpression('/^queue mail \(running, throttled until [-0-9]+ [0-9:]+ ' . date('T') . '\)$/m', self::cli(['queue', 'mail'])[1]);
        $mail->throttle(0);

        $this->assertSame([0, "3 task(s) removed from queue 'mail'\n"], array_slice(self::cli(['clear', 'mail', '--yes']), 0, 2));
        $m = $mail->metrics();
        $this->assertSame([0, 0, 1, 2], [$m['ready'], $m['delayed'], $m['leased'], $m['dead']], 'the running task and the dead letters stay');
        $this->assertTrue($mail->ack($busy));

        [$status, , $err] = self::cli(['pause', 'mial', '--yes']);
        $this->assertSame(1, $status);
        $this->assertStringContainsString("no queue 'mial': did you mean 'mail'?", $err);
        $this->assertSame(2, self::cli(['pause'])[0], 'pause needs a name');
        $this->assertSame(2, self::cli(['clear', 'mail', 'reports'])[0], 'one queue at a time');
    }

    public function testWorkersLongUnseenAreGoneUnlessTheyRunATask(): void
    {
        $q = (new Client())->queue('jobs');
        $q->enqueueMany(['busy' => null, 'quick' => null]);
        // One worker took a long task and runs it still; another acked one and went away.
        $this->waiters[] = $busy = self::start('$q = (new RedisLock\Client())->queue("jobs"); [$t] = $q->reserve(1, 3600); echo $t->id(), "\n"; sleep(60);');
        $this->assertSame("busy\n", fgets($busy[1][1]));
        $left = (int) self::php('$q = (new RedisLock\Client())->queue("jobs"); $q->ack($q->reserve()[0]); echo getmypid();');
        $ids = array_column($q->workers(), 'id', 'pid');
        $this->assertArrayHasKey($left, $ids);
        $this->assertSame([false, false], [$this->gone($busy[2]), $this->gone($left)], 'both seen just now');
        // Both last seen 20 minutes ago (their entries in the queue's workers set).
        [$now] = $this->redis->time();
        foreach ($ids as $id) {
            $this->redis->zAdd('{Queue:jobs}:workers', $now - 1200, $id);
        }
        $this->assertFalse($this->gone($busy[2]), 'still running its task');
        $this->assertTrue($this->gone($left));
        [, $out] = self::cli(['workers', 'jobs']);
        $this->assertMatchesRegularExpression("/ pid $left .* not seen for 120\ds \(gone\) +1 /", $out);
        $this->assertMatchesRegularExpression("/ pid {$busy[2]} .* not seen for 120\ds +0 /", $out);
        // The operator sets how long unseen is gone: 20 minutes is not gone past a threshold of an hour.
        [, $out] = self::cli(['workers', 'jobs', '--gone-after=3600']);
        $this->assertMatchesRegularExpression("/ pid $left .* not seen for 120\ds +1 /", $out);
        $this->assertSame(2, self::cli(['workers', 'jobs', '--gone-after=0'])[0]);
        // Seen within the last minute: how long ago, as before.
        $this->redis->zAdd('{Queue:jobs}:workers', $now - 5, $ids[$left]);
        $this->assertMatchesRegularExpression("/ pid $left .* [56]\.\ds ago +1 /", self::cli(['workers', 'jobs'])[1]);
    }

    /** Whether `redislock workers jobs --json` says the worker of pid $pid is gone. */
    private function gone(int $pid): bool
    {
        foreach (self::json(['workers', 'jobs']) as $w) {
            if ($w['pid'] === $pid) {
                return $w['gone'];
            }
        }
        $this->fail("no worker of pid $pid");
    }

    public function testRunningAndWorkersSayWhoDoesWhat(): void
    {
        $this->seed();
        $this->waiters[] = $worker = self::start('$q = (new RedisLock\Client())->queue("reports"); [$t] = $q->reserve(1, 60); echo $t->id(), "\n"; sleep(60);');
        $this->assertSame("a\n", fgets($worker[1][1]));
        $host = preg_quote(gethostname());
        [$status, $out] = self::cli(['running', 'reports']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^ID +WORKER +RUNNING FOR +LEASE LEFT +ATTEMPTS +PAYLOAD$/m', $out);
        $this->assertMatchesRegularExpression("/^a +$host pid {$worker[2]} +\\d+\\.\\ds +(59|60)\\.\\ds +1 +-$/m", $out);
        $running = self::json(['running', 'reports']);
        $this->assertSame([['a', $worker[2]]], array_map(fn ($t) => [$t['id'], $t['worker']['pid']], $running));
        (new Client())->queue('idle')->enqueue('x');
        $this->assertSame([0, "nothing running\n"], array_slice(self::cli(['running', 'idle']), 0, 2));
        // A lease that ran out says so, until the next reserve takes the task back.
        $short = (new Client())->queue('short');
        $short->enqueue('s1');
        $this->assertCount(1, $short->reserve(1, 0.2));
        usleep(400000);
        $out = self::cli(['running', 'short'])[1];
        $this->assertMatchesRegularExpression('/^s1 +.+ expired \d+\.\ds ago +1 +-$/m', $out);
        $this->assertMatchesRegularExpression("/^nothing running\n\nleases that ran out \\(no longer their worker's: the next reserve takes each back\\):\nID +WORKER +RUNNING FOR +LEASE +ATTEMPTS +PAYLOAD\ns1 /", $out, 'apart from what runs');

        [$status, $out] = self::cli(['workers', 'reports']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^WORKER +SINCE +LAST SEEN +DONE +PROCESS$/m', $out);
        $this->assertMatchesRegularExpression("/^$host pid {$worker[2]} +[-0-9]+ [0-9:]+ \\w+ +\\d+\\.\\ds ago +0 +cli Standard input code$/m", $out);
        $this->assertSame([$worker[2]], array_column(self::json(['workers', 'reports']), 'pid'));
        $this->assertSame(1, self::cli(['workers', 'nope'])[0]);
    }

    public function testRecentAttemptsSayWhatHappenedAndHowLongItTook(): void
    {
        [, $mail] = $this->seed();
        // This process's worker: described, or by its id when its
        // description was written before the suite emptied Redis.
        $me = '(?:' . preg_quote(gethostname()) . ' pid ' . getmypid() . '|[0-9a-f]{12})';
        [$status, $out] = self::cli(['recent', 'mail']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^ENDED +ID +OUTCOME +ATTEMPTS +RUNTIME +WAIT +WORKER +REASON\n/', $out);
        $this->assertMatchesRegularExpression("/\\n[-0-9]+ [0-9:]+ \\w+ +done +acked +1 +\\d+ ms +\\d+ ms +$me +-\\n/", $out);
        $this->assertMatchesRegularExpression("/ d1 +dead +1 +\\d+ ms +\\d+ ms +$me +RuntimeException: smtp down\\n$/", $out);
        $this->assertSame(['done', 'd2', 'd1'], array_column(self::json(['recent', 'mail']), 'id'), 'newest first');
        $this->assertSame([['d1', 'dead', 1, 'RuntimeException: smtp down']],
            array_map(fn ($a) => [$a['id'], $a['outcome'], $a['attempts'], $a['reason']], self::json(['recent', 'mail', 'd1'])));
        $this->assertCount(1, array_unique(array_column(self::json(['recent', 'mail']), 'worker')), 'one worker did all three');
        $this->assertSame([0, "no recent attempts\n"], array_slice(self::cli(['recent', 'reports']), 0, 2));
        $this->assertSame(['done'], array_column(self::json(['recent', 'mail', '--limit=1']), 'id'));

        [$status, $out] = self::cli(['queue', 'mail']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^LAST 5 MINUTES +P50 +P95\nruntime +\d+ ms +\d+ ms\nwait +\d+ ms +\d+ ms\nover 3 recent attempt\(s\) \(redislock recent mail lists them\)$/m', $out);
        $timings = self::json(['queue', 'mail'])['timings'];
        $this->assertSame(3, $timings['attempts']);
        $this->assertSame(['p50', 'p95'], array_keys($timings['runtime']));
        $this->assertLessThan(5, $timings['wait']['p95']);

        // How many it keeps: asked first, changed only when confirmed.
        $llen = fn () => $this->redis->lLen('{Queue:mail}:recent');
        [$status, , $err] = self::cli(['keep-recent', 'mail', '1', '60']);
        $this->assertSame(1, $status);
        $this->assertStringContainsString("Keep-recent queue 'mail' to keep its last 1 attempts for 60 s (older ones go now)? [y/N]", $err);
        $this->assertSame(3, $llen());
        $this->assertMatchesRegularExpression('/^recent attempts kept: 3 of the last 100 for 3600s, [\d.]+kB \(redislock keep-recent mail COUNT SECONDS \[BYTES\] sets them\)$/m', self::cli(['queue', 'mail'])[1]);
        $this->assertSame([0, "queue 'mail' keeps its last 1 attempts for 60 s\n"], array_slice(self::cli(['keep-recent', 'mail', '1', '60', '--yes']), 0, 2));
        $this->assertSame(1, $llen());
        $footprint = $mail->recentFootprint();
        $this->assertSame([1, 1, 60.0], [$footprint['kept'], $footprint['keep'], $footprint['seconds']]);
        $this->assertSame($footprint, self::json(['queue', 'mail'])['recentFootprint']);
        $this->assertGreaterThan(0, $footprint['bytes']);
        $this->assertSame(['done'], array_column($mail->recent(), 'id'));
        $this->assertSame(['kept' => true], self::json(['keep-recent', 'mail', '0', '--yes']));
        $this->assertSame(0, $llen());
        $this->assertSame(['kept' => 0, 'bytes' => 0, 'keep' => 0, 'seconds' => 3600.0, 'maxBytes' => null], $mail->recentFootprint(), 'none kept: no list');
        // Within a bound of bytes: the newest records that fit.
        $this->assertSame([0, "queue 'mail' keeps its last 1000 attempts for 60 s within 1024 bytes\n"], array_slice(self::cli(['keep-recent', 'mail', '1000', '60', '1k', '--yes']), 0, 2));
        $mail->enqueueMany(array_fill_keys(array_map(fn ($i) => "b$i", range(1, 40)), null));
        foreach ($mail->reserve(40) as $t) {
            $mail->nack($t, 60, str_repeat('r', 30));
        }
        $sizes = array_map('strlen', $this->redis->lRange('{Queue:mail}:recent', 0, -1));
        $this->assertLessThanOrEqual(1024, array_sum($sizes));
        $this->assertGreaterThan(1024, array_sum($sizes) + $sizes[0], 'as many as fit');
        $this->assertSame([count($sizes), 1024], [$mail->recentFootprint()['kept'], $mail->recentFootprint()['maxBytes']]);
        $this->assertMatchesRegularExpression('/^recent attempts kept: \d+ of the last 1000 for 60s within 1\.0kB of records, [\d.]+kB /m', self::cli(['queue', 'mail'])[1]);
        foreach ([['keep-recent', 'mail'], ['keep-recent', 'mail', 'x'], ['keep-recent', 'mail', '100001'], ['keep-recent', 'mail', '-1'],
                  ['keep-recent', 'mail', '5', '0'], ['keep-recent', 'mail', '5', '1e9'], ['keep-recent', 'mail', '5', 'NAN'], ['recent'], ['recent', 'mail', 'a', 'b'],
                  ['keep-recent', 'mail', '5', '60', '0'], ['keep-recent', 'mail', '5', '60', '2T'], ['keep-recent', 'mail', '5', '60', '1.5M'], ['keep-recent', 'mail', '5', '60', '1k', 'x']] as $args) {
            $this->assertSame(2, self::cli($args)[0], implode(' ', $args));
        }
        $this->assertSame(1, self::cli(['recent', 'nope'])[0]);
    }

    public function testTasksAreFoundByTheTagsTheirProducerGave(): void
    {
        $c = new Client();
        $orders = $c->queue('orders', ['maxAttempts' => 1]);
        $orders->enqueue('o1', '{"order":1}', 0, null, ['customer-42', 'vip']);
        $orders->enqueue('o2', null, 0, null, ['customer-7']);
        $orders->enqueueMany(['o3' => null, 'o4' => null], 3600, null, ['customer-42']);
        [$o1, $o2] = $orders->reserve(2);
        $orders->ack($o1);
        $orders->nack($o2, 0, 'card declined');
        $orders->enqueue('o2', null, 0, null, ['customer-7', 'retry']);

        [$status, $out] = self::cli(['tagged', 'orders', 'customer-42']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^ID +STATE +AT +ATTEMPTS +REASON +PAYLOAD\no3 +queued .+\no4 +queued .+\n\nrecent attempts:\nENDED .+\n.+ o1 +acked +1 .+\n$/', $out);
        $found = self::json(['tagged', 'orders', 'customer-7']);
        $this->assertSame([['o2', 'dead', ['customer-7']], ['o2', 'queued', ['customer-7', 'retry']]],
            array_map(fn ($t) => [$t['id'], $t['state'], $t['tags']], $found['tasks']), 'the dead letter, and the new task of its id');
        $this->assertSame([['o2', 'dead', 'card declined']], array_map(fn ($a) => [$a['id'], $a['outcome'], $a['reason']], $found['recent']));
        $this->assertSame([['o2', 'queued']], array_map(fn ($t) => [$t['id'], $t['state']], $orders->tagged('retry')));
        // A cut list is the earliest whatever the scan meets first (queued tasks before dead ones), and says it was cut.
        $this->assertSame([['o2', 'dead']], array_map(fn ($t) => [$t['id'], $t['state']], $orders->tagged('customer-7', 1)));
        [$status, $out] = self::cli(['tagged', 'orders', 'customer-7', '--limit=1']);
        $this->assertMatchesRegularExpression('/^ID .+\no2 +dead .+\nshowing the earliest 1 tasks with the tag; there are more \(--limit=N shows more, up to 1000\)\n/', $out);
        $this->assertStringNotContainsString('there are more', self::cli(['tagged', 'orders', 'customer-7', '--limit=2'])[1]);
        $this->assertMatchesRegularExpression('/^tags +customer-7 retry$/m', self::cli(['task', 'orders', 'o2'])[1]);
        $this->assertSame([0, "no tasks with the tag\n\nrecent attempts:\nno recent attempts\n"], array_slice(self::cli(['tagged', 'orders', 'nobody']), 0, 2));
        $this->assertSame(2, self::cli(['tagged', 'orders'])[0]);
        [$status, , $err] = self::cli(['tagged', 'orders', 'a b']);
        $this->assertSame(1, $status);
        $this->assertStringContainsString('a tag holds no space or control byte', $err);
        $this->assertSame(1, self::cli(['tagged', 'nope', 'x'])[0]);
    }

    /** `task` shows a parent of a workflow as waiting, with its children and their states. */
    public function testTheTaskCommandShowsAWaitingParent(): void
    {
        (new Client())->queue('reports')->enqueue('r1', null, children: [['queue' => 'pages', 'id' => 'p1'], ['queue' => 'pages', 'id' => 'p2']]);
        $pages = (new Client())->queue('pages');
        foreach ($pages->reserve(2) as $task) {
            if ($task->id() === 'p1') {
                $pages->ack($task, 'done');
            }
        }
        [$status, $out] = self::cli(['task', 'reports', 'r1']);
        $this->assertSame(0, $status, $out);
        $this->assertMatchesRegularExpression('/^state +waiting\nwaits for +1 child\(ren\) not ended$/m', $out);
        $this->assertMatchesRegularExpression('/^CHILD +STATE\npages\/p1 +acked\npages\/p2 +waiting$/m', $out);
        $this->assertSame(['waiting', 1, ['pages/p1' => 'acked', 'pages/p2' => 'waiting']],
            array_values(array_intersect_key(self::json(['task', 'reports', 'r1']), ['state' => 0, 'children' => 0, 'childStates' => 0])));
        $this->assertSame(1, (new Client())->queue('reports')->metrics()['waiting']);
    }

    public function testGroupsAreListedInTheOrderTheyAreServed(): void
    {
        $c = new Client();
        $mail = $c->queue('mail');
        $mail->enqueue('plain');
        $mail->enqueueMany(['a1' => null, 'a2' => null, 'a3' => null], 0, null, null, 'tenant-a');
        $mail->enqueueMany(['b1' => null], 0, null, null, 'tenant-b');
        $mail->enqueue('later', null, 3600, null, null, 'tenant-b');
        usleep(20000);
        $this->assertSame([[null, 1], ['tenant-a', 3], ['tenant-b', 2]],
            array_map(fn ($g) => [$g['group'], $g['queued']], self::json(['groups', 'mail'])), "the task queued before the groups is the group ''s");
        $this->assertSame('plain', $mail->reserve()[0]->id(), "the tasks queued before the groups: the group '' first");
        [$status, $out] = self::cli(['groups', 'mail']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^GROUP +QUEUED +RUNNING +THROTTLED\ntenant-a +3 +- +-\ntenant-b +2 +- +-\n$/', $out);
        $this->assertSame([['tenant-a', 3], ['tenant-b', 2]],
            array_map(fn ($g) => [$g['group'], $g['queued']], self::json(['groups', 'mail'])));
        $this->assertStringContainsString("2 group(s) take turns (redislock groups mail lists them)\n", self::cli(['queue', 'mail'])[1]);
        $this->assertSame(2, self::json(['queue', 'mail'])['groups']);
        $this->assertStringEndsWith("\nshowing 1 of 2 groups (--limit=N shows more, up to 1000)\n", self::cli(['groups', 'mail', '--limit=1'])[1]);
        $this->assertSame(['a1', 'b1'], array_map(fn ($t) => $t->id(), $mail->reserve(2)), 'in turn');
        // The groups' limits: leased tasks counted, a group's throttle.
        $mail->setGroupConcurrency(2);
        $mail->throttle(30, 'tenant-b');
        $this->assertMatchesRegularExpression('/^tenant-a +2 +1 +-$/m', self::cli(['groups', 'mail'])[1]);
        $this->assertMatchesRegularExpression('/^tenant-b +1 +1 +(30\.0|29\.\d)s$/m', self::cli(['groups', 'mail'])[1]);
        $leased = [];
        foreach (self::json(['groups', 'mail']) as $g) {
            $leased[$g['group'] ?? '(none)'] = $g['leased'];
        }
        ksort($leased);
        $this->assertSame(['tenant-a' => 1, 'tenant-b' => 1], $leased);
        $c->queue('reports')->enqueue('r');
        $this->assertSame([0, "no groups\n"], array_slice(self::cli(['groups', 'reports']), 0, 2));
        $this->assertSame(2, self::cli(['groups'])[0]);
    }

    public function testOneTaskIsShownWholeAndWaitingTasksCanBeRemoved(): void
    {
        [, $mail] = $this->seed();
        [$status, $out] = self::cli(['task', 'mail', 'r2']);
        $this->assertSame(0, $status);
        $this->assertMatchesRegularExpression('/^TASK +r2\nstate +queued\ndue +[-0-9]+ [0-9:]+ \w+\nattempts +0\nreason +-\ntags +-\npayload:\nz\n$/', $out);
        $this->assertMatchesRegularExpression('/^reason +RuntimeException: smtp down$/m', self::cli(['task', 'mail', 'd1'])[1]);
        $this->assertSame(['busy', 1, 'leased'], array_values(array_intersect_key(self::json(['task', 'mail', 'busy']), ['id' => 0, 'state' => 0, 'attempts' => 0])));
        $mail->enqueue('bin', "a\0b\x1b[2J" . str_repeat('x', 300));
        $this->assertStringEndsWith("payload:\na\\x00b\\x1b[2J" . str_repeat('x', 300) . "\n", self::cli(['task', 'mail', 'bin'])[1], 'whole, control bytes escaped');
        [$status, , $err] = self::cli(['task', 'mail', 'nope']);
        $this->assertSame([1, "redislock: no task 'nope' in queue 'mail'\n"], [$status, $err]);
        $this->assertSame(2, self::cli(['task', 'mail'])[0]);
        $this->assertSame(2, self::cli(['remove', 'mail'])[0]);

        $before = $this->snapshot();
        [$status, , $err] = self::cli(['remove', 'mail', 'r1', 'nope']);
        $this->assertSame(1, $status, 'not confirmed');
        $this->assertStringContainsString("Remove 2 task(s) waiting in queue 'mail', for good (a running one finishes)? [y/N]", $err);
        $this->assertSame($before, $this->snapshot());
        $this->assertSame([0, "1 task(s) removed from queue 'mail'\n"], array_slice(self::cli(['remove', 'mail', 'r1', 'nope'], "y\n"), 0, 2));
        $this->assertNull($mail->find('r1'));
        $this->assertSame(['removed' => 0], self::json(['remove', 'mail', 'busy', '--yes']), 'a running task finishes');
        $this->assertSame('leased', $mail->find('busy')['state']);
    }

    public function testSemaphoresAndReadWriteLocksAreListedAndCanBeFreed(): void
    {
        $c = new Client();
        $this->waiters[] = $a = self::start('$s = (new RedisLock\Client())->semaphore("pool", 3, ["ttl" => 60]); $s->acquire(2); echo "in\n"; sleep(60);');
        $this->waiters[] = $b = self::start('$s = (new RedisLock\Client())->semaphore("pool", 3, ["ttl" => 90]); $s->acquire(1); echo "in\n"; sleep(60);');
        $this->waiters[] = $r = self::start('$l = (new RedisLock\Client())->readLock("report", ["ttl" => 60]); $l->acquire(); echo "in\n"; sleep(60);');
        foreach ([$a, $b, $r] as $p) {
            $this->assertSame("in\n", fgets($p[1][1]));
        }
        $this->waiters[] = self::start('$l = (new RedisLock\Client())->writeLock("report"); $l->acquire(60); sleep(60);');
        $this->lineReaches('rwlock:{report}:line', 1);

        $pool = $c->lockState('pool', 'semaphore');
        $this->assertSame([true, 2, 3, 0, $b[2], 3], [$pool['held'], $pool['holders'], $pool['permits'], $pool['waiting'], $pool['holder']['pid'], $pool['total']], 'the lease that ends last');
        $this->assertEqualsWithDelta(90, $pool['remaining'], 5);
        $report = $c->lockState('report', 'rwlock');
        $this->assertSame([true, 1, 1, 1, $r[2], null], [$report['held'], $report['holders'], $report['permits'], $report['waiting'], $report['holder']['pid'], $report['total']]);
        $listed = array_map(fn ($l) => [$l['name'], $l['kind'], $l['holders']], $c->locks());
        $this->assertSame([['report', 'rwlock', 1], ['pool', 'semaphore', 2]], $listed, 'sorted by kind, then name');
        $this->assertMatchesRegularExpression('/^pool +semaphore +3 of 3 permits, 2 holders +\d+\.\ds +- +0 +' . preg_quote(gethostname()) . ' pid ' . $b[2] . ' /m', self::cli(['locks'])[1]);

        // Forced: every holder's permits go, the waiting writer gets the lock.
        $this->assertSame(['unlocked' => true], self::json(['unlock', 'report', '--force', '--yes']));
        $deadline = microtime(true) + 5;
        while (($c->lockState('report', 'rwlock')['holder']['pid'] ?? $r[2]) === $r[2] && microtime(true) < $deadline) {
            usleep(20000);
        }
        $this->assertNotSame($r[2], $c->lockState('report', 'rwlock')['holder']['pid'], 'the writer has it');
        $this->assertTrue($c->forceRelease('pool', 'semaphore'));
        $this->assertFalse($c->lockState('pool', 'semaphore')['held']);
        $this->assertFalse($c->forceRelease('pool', 'semaphore'));
        $this->assertNull($c->lockState('pool', 'semaphore')['total'], 'none held');
        // Each object counts with its own permits: the last holder's count is shown.
        $five = $c->semaphore('pool', 5);
        $this->assertTrue($five->acquire(2));
        $pool = $c->lockState('pool', 'semaphore');
        $this->assertSame([2, 5], [$pool['permits'], $pool['total']]);
        $this->assertMatchesRegularExpression('/^pool +semaphore +2 of 5 permits +/m', self::cli(['locks'])[1]);
        $five->release();
        $this->assertSame([false, null], [$c->lockState('pool', 'semaphore')['held'], $c->lockState('pool', 'semaphore')['total']]);
    }

    public function testCheckExitsByThresholdsForCronProbesAndNagios(): void
    {
        $this->seed(); // mail: 2 ready, 2 dead; reports: 3 ready
        $this->seenWorker('mail');
        $this->assertSame([0, "OK: 2 queue(s) within the thresholds\n"], array_slice(self::cli(['check']), 0, 2));
        $this->assertSame([0, "OK: 1 queue(s) within the thresholds\n"], array_slice(self::cli(['check', '--ready=3', '--dead=2', '--oldest=3600', '--idle=3600', 'mail']), 0, 2));
        [$status, $out] = self::cli(['check', '--ready=2']);
        $this->assertSame([1, "PROBLEM queue 'reports': 3 tasks ready (over 2)\n"], [$status, $out]);
        [$status, $out] = self::cli(['check', 'mail', '--ready=2', '--dead=1', '--oldest=0']);
        $this->assertSame(1, $status);
        $this->assertMatchesRegularExpression("/^PROBLEM queue 'mail': 2 dead letters \\(over 1\\)\n/m", $out);
        $this->assertMatchesRegularExpression("/^PROBLEM queue 'mail': \\d+\\.\\d s the oldest due task waited \\(over 0\\)$/m", $out);
        $this->assertStringNotContainsString('reports', $out, 'only the queue named');
        [$status, $out] = self::cli(['check', '--idle=60']);
        $this->assertSame([1, "PROBLEM queue 'reports': no worker seen (over 60)\n"], [$status, $out], 'mail has its worker');
        [$status, $out] = self::cli(['--json', 'check', '--ready=2', '--dead=1']);
        $this->assertSame(1, $status);
        $json = json_decode($out, true, 512, JSON_THROW_ON_ERROR);
        $this->assertSame(['ok' => false, 'queues' => 2], array_slice($json, 0, 2));
        $this->assertSame([['mail', 'dead', 2, 1.0], ['reports', 'ready', 3, 2.0]], array_map(fn ($p) => array_values($p), $json['problems']));

        [$status, , $err] = self::cli(['check', 'nope']);
        $this->assertSame(3, $status, 'a queue that is not there: the check could not look');
        $this->assertStringContainsString("no queue 'nope'", $err);
        $this->assertSame(3, self::cli(['--url=redis://127.0.0.1:1', 'check'])[0], 'Redis out of reach');
        foreach ([['check', '--ready=-1'], ['check', '--idle=x'], ['check', '--dead'], ['status', '--ready=1'], ['check', '--watch']] as $args) {
            $this->assertSame(2, self::cli($args)[0], implode(' ', $args));
        }
    }

    public function testDestructiveCommandsAskFirstAndDoNothingUnlessConfirmed(): void
    {
        [$c, $mail, , $pid] = $this->seed();
        foreach (['', "n\n", "whatever\n"] as $answer) {
            foreach ([['retry', 'mail'], ['purge', 'mail'], ['pause', 'mail'], ['clear', 'mail'], ['unlock', 'nightly', '--force'], ['move', 'mail', 'elsewhere']] as $args) {
                // (Not DEBUG DIGEST: the waiters renew their places.)
                $before = $this->snapshot();
                [$status, $out, $err] = self::cli($args, $answer);
                $this->assertSame(1, $status, implode(' ', $args) . " answered '$answer'");
                $this->assertStringContainsString('[y/N]', $err);
                $this->assertStringContainsString('nothing done', $err);
                $this->assertSame('', $out);
                $this->assertSame($before, $this->snapshot(), 'Redis untouched');
            }
        }
        [$status, $out] = self::cli(['retry', 'mail', 'd2'], "y\n");
        $this->assertSame([0, "1 dead letter(s) back in queue 'mail'\n"], [$status, $out]);
        $this->assertSame('queued', $mail->find('d2')['state']);
        $this->assertSame(['purged' => 1], self::json(['--yes', 'purge', 'mail']));
        $this->assertSame(0, $mail->metrics()['dead']);
        $this->assertNull($mail->find('d1'));

        [$status, , $err] = self::cli(['unlock', 'nightly']);
        $this->assertSame(2, $status, 'unlock without --force');
        $this->assertStringContainsString('--force', $err);
        $this->assertTrue($c->lockState('nightly')['held']);
        $this->assertSame(['unlocked' => true], self::json(['unlock', 'nightly', '--force', '--yes']));
        // Handed to the first waiter in line, not freed for anyone; the
        // waiter describes itself once it returns from its acquire.
        $deadline = microtime(true) + 5;
        do {
            $state = $c->lockState('nightly');
        } while (($state['holder']['pid'] ?? $pid) === $pid && microtime(true) < $deadline && usleep(20000) === null);
        $this->assertTrue($state['held']);
        $this->assertSame(1, $state['waiting']);
        $this->assertNotSame($pid, $state['holder']['pid']);
        $this->assertSame(['unlocked' => false], self::json(['unlock', 'free', '--force', '--yes']));

        // A Laravel lock (exactKey) is listed with its holder and freed; a
        // plain key of that name that no lock took is never deleted.
        $laravel = $c->lock('app_cache:report', ['exactKey' => true, 'owner' => $c->newOwner()]);
        $this->assertTrue($laravel->acquire());
        $this->assertStringContainsString('app_cache:report  exact', self::cli(['locks'])[1]);
        $this->assertSame(['unlocked' => true], self::json(['unlock', 'app_cache:report', '--force', '--yes']));
        $this->assertFalse($laravel->isHeld());
        $this->redis->set('app_cache:value', 'cached');
        $this->assertSame(['unlocked' => false], self::json(['unlock', 'app_cache:value', '--force', '--yes']));
        $this->assertSame('cached', $this->redis->get('app_cache:value'));

        // A drop-in RedisLock's lock, as `locks` lists it, is freed too (and
        // the CLI no longer says it was not held).
        $this->assertTrue($c->lockState('legacy', 'seed')['held']);
        $this->assertStringContainsString('legacy', self::cli(['locks'])[1]);
        [$status, $out] = self::cli(['unlock', 'legacy', '--force', '--yes']);
        $this->assertSame([0, "lock 'legacy' freed\n"], [$status, $out]);
        $this->assertFalse($c->lockState('legacy', 'seed')['held']);
        $this->assertFalse($c->forceRelease('legacy', 'seed'), 'free now');
        $this->assertSame(['unlocked' => false], self::json(['unlock', 'legacy', '--force', '--yes']));
    }

    /**
     * The drop-in `Lock_Service`'s order locks are locks to the CLI: listed
     * (kind `Lock_Service`, named by order id) and freed by `unlock`,
     * named by order id or by key. `unlock order_lock_1001` said "was not
     * held" while the order was locked.
     */
    public function testLockServiceOrderLocksAreListedAndFreed(): void
    {
        $c = new Client();
        foreach ([1001, 1002] as $order) {
            $this->assertNotFalse(Lock_Service::addLock($order, 60));
        }
        $locks = array_values(array_filter(self::json(['locks']), fn ($l) => $l['kind'] === 'Lock_Service'));
        $this->assertSame(['1001', '1002'], array_column($locks, 'name'));
        $this->assertTrue($locks[0]['held']);
        $this->assertGreaterThan(50, $locks[0]['remaining']);
        $this->assertStringContainsString('1001  Lock_Service', self::cli(['locks'])[1]);
        [$status, $out] = self::cli(['unlock', 'order_lock_1001', '--force', '--yes']);
        $this->assertSame([0, "lock 'order_lock_1001' freed\n"], [$status, $out]);
        $this->assertSame(0, $this->redis->exists('order_lock_1001'));
        $this->assertSame(['unlocked' => true], self::json(['unlock', '1002', '--force', '--yes']));
        $this->assertFalse($c->lockState('1002', 'Lock_Service')['held']);
        $this->assertNotFalse(Lock_Service::addLock(1001, 60), 'free for the next buyer');
        $this->assertSame(['unlocked' => false], self::json(['unlock', 'order_lock_nope', '--force', '--yes']));
    }

    /**
     * `move` takes a queue's waiting tasks to another prefix (Laravel's,
     * after an upgrade) while a worker of the old queue keeps taking tasks:
     * every task runs once, on one side or the other; the delayed ones stay
     * delayed, leased tasks and dead letters stay where they are.
     */
    public function testMoveTakesTheQueuedTasksToAnotherPrefixLosingNoneAndRunningNoneTwice(): void
    {
        $old = (new Client())->queue('queues:default', ['maxAttempts' => 1]);
        $new = (new Client(['dsn' => RedisServer::$main->dsn(), 'prefix' => 'app_']))->queue('queues:default');
        $ids = [];
        for ($i = 0; $i < 3000; $i++) {
            $ids["t$i"] = "payload $i";
        }
        $old->enqueueMany($ids);
        $old->enqueue('later', 'delayed', 3600);
        $old->nack($old->reserve(1)[0]); // one of the due ones dies
        $dead = $old->dead()[0]['id'];
        $running = $old->reserve(1)[0]->id();
        $moved = $this->moveWhileAWorkerTakesTasks('queues:default');

        $waiting = [];
        while ($tasks = $new->reserve(1000)) {
            foreach ($tasks as $t) {
                $waiting[] = $t->id();
                $this->assertSame($ids[$t->id()], $t->payload());
            }
        }
        $ran = $this->redis->lRange('ran', 0, -1);
        $all = array_merge($ran, $waiting);
        $this->assertSame(count($waiting), $moved - 1, 'all moved, the delayed one not due');
        $this->assertSame(count($all), count(array_unique($all)), 'a task ran on both sides');
        $this->assertEqualsCanonicalizing(array_diff(array_keys($ids), [$dead, $running]), $all, 'every task runs once');
        $later = $new->find('later');
        $this->assertSame(['queued', 'delayed'], [$later['state'], $later['payload']]);
        $this->assertGreaterThan(microtime(true) + 3500, $later['at']);
        $counts = $old->metrics();
        $this->assertSame([0, 0, 1, 1], [$counts['ready'], $counts['delayed'], $counts['leased'], $counts['dead']]);
        $this->assertSame('leased', $old->find($running)['state']);
    }

    /**
     * `move` while two workers reserve on each side, over three rounds:
     * every task runs exactly once (none on both sides, none lost). It ran
     * hundreds of tasks on both sides in most rounds when the destination
     * got each task before the source let it go.
     */
    public function testMoveUnderWorkersOnBothSidesRunsEachTaskOnce(): void
    {
        $n = 2500;
        $worker = fn (string $dsn) => '
            $q = (new RedisLock\Client("' . $dsn . '"))->queue("mail");
            $r = new Redis();
            $r->connect("127.0.0.1", ' . RedisServer::$main->port . ');
            while (!$r->exists("stop")) {
                foreach ($q->reserve(5, null, 0.05) as $t) {
                    $r->rPush("ran", $t->id());
                    $q->ack($t);
                }
            }
            echo "stopped";';
        $old = (new Client())->queue('mail');
        for ($round = 0; $round < 3; $round++) {
            $this->redis->del('ran', 'stop');
            $ids = [];
            for ($i = 0; $i < $n; $i++) {
                $ids["r$round-$i"] = null;
            }
            $old->enqueueMany($ids);
            $workers = [];
            foreach ([RedisServer::$main->dsn(), RedisServer::$main->dsn() . '?prefix=app_'] as $dsn) {
                for ($w = 0; $w < 2; $w++) {
                    $workers[] = self::start($worker($dsn), ['extension' => self::phpredisExtensions()]);
                }
            }
            while ($this->redis->lLen('ran') < 50) {
                usleep(5000);
            }
            $moved = self::json(['--yes', 'move', 'mail', '--to-url=' . RedisServer::$main->dsn() . '?prefix=app_'])['moved'];
            $this->assertGreaterThan(0, $moved, "round $round: some tasks moved");
            for ($wait = 0; $this->redis->lLen('ran') < $n && $wait < 3000; $wait++) {
                usleep(10000);
            }
            $this->redis->set('stop', 1);
            foreach ($workers as $w) {
                $this->assertSame('stopped', self::finish($w));
            }
            $ran = $this->redis->lRange('ran', 0, -1);
            $this->assertSame([], array_keys(array_filter(array_count_values($ran), fn ($c) => $c > 1)), "round $round: ran twice");
            $this->assertEqualsCanonicalizing(array_keys($ids), $ran, "round $round: every task ran once");
            $this->assertNull($old->metrics()['paused'], 'the source runs again');
        }
    }

    /**
     * A moved task keeps its due time relative to the server's clock (so
     * the order it had: enqueued c, b, a, it runs c, b, a there), its
     * attempts and why its last attempt failed. A queue paused before the
     * move stays paused.
     */
    public function testMoveKeepsOrderAttemptsAndAPauseItFound(): void
    {
        $old = (new Client())->queue('mail');
        $new = (new Client(RedisServer::$main->dsn() . '?prefix=app_'))->queue('mail');
        $old->enqueue('failed', 'f');
        usleep(2000);
        foreach (['c', 'b', 'a'] as $id) {
            $old->enqueue($id, "payload $id");
            usleep(2000);
        }
        $old->nack($old->reserve(1, null, 0)[0], 0, 'smtp said no'); // due again, last
        $old->enqueue('later', null, 600);
        $before = $old->peek();
        $old->pause();

        $this->assertSame(5, $old->moveTo($new));
        $this->assertNotNull($old->metrics()['paused'], 'paused before the move, paused after');
        $after = $new->peek();
        $this->assertSame(array_column($before, 'id'), array_column($after, 'id'), 'the order kept');
        foreach ($before as $i => $task) {
            foreach (['payload', 'attempts', 'reason'] as $field) {
                $this->assertSame($task[$field], $after[$i][$field], "{$task['id']}: $field");
            }
            $this->assertEqualsWithDelta($task['at'], $after[$i]['at'], 1.0, "{$task['id']}: due time");
        }
        $this->assertSame([1, 'smtp said no'], [$after[3]['attempts'], $after[3]['reason']]);
        $this->assertSame(['c', 'b', 'a', 'failed'], array_map(fn ($t) => $t->id(), $new->reserve(10)));
        $this->assertSame(0, $old->metrics()['ready'] + $old->metrics()['delayed']);
    }

    /**
     * A move to the queue itself (the same server, database and prefix,
     * whatever the DSN calls them) is refused before anything changes: it
     * removed every task it "moved".
     */
    public function testMoveToTheSameQueueIsRefused(): void
    {
        $q = (new Client())->queue('mail');
        $q->enqueueMany(['a' => '1', 'b' => '2', 'c' => '3', 'd' => '4']);
        $port = RedisServer::$main->port;
        // (No "localhost": the trixie chroot has no /etc/hosts.)
        foreach (["redis://127.0.0.1:$port", "redis://127.0.0.1:$port/0", "redis://127.0.0.1:$port?prefix="] as $dsn) {
            [$status, $out, $err] = self::cli(['--yes', 'move', 'mail', "--to-url=$dsn"]);
            $this->assertSame(1, $status, $dsn);
            $this->assertSame('', $out);
            $this->assertStringContainsString("the destination is queue 'mail' itself", $err);
            $this->assertSame(4, $q->metrics()['ready'], "$dsn: nothing lost");
        }
        // Another database of the same server is another queue.
        [$status, $out] = self::cli(['--yes', 'move', 'mail', "--to-url=redis://127.0.0.1:$port/1"]);
        $this->assertSame([0, "4 task(s) moved\n"], [$status, $out]);
    }

    /**
     * A task the destination already holds under the same id stays there,
     * as it was, even when the source's copy is taken by a worker while
     * `move` runs: `move` takes back only what it added.
     */
    public function testMoveNeverRemovesATaskTheDestinationAlreadyHeld(): void
    {
        $old = (new Client())->queue('mail');
        $new = (new Client(['dsn' => RedisServer::$main->dsn(), 'prefix' => 'app_']))->queue('mail');
        $here = $there = [];
        for ($i = 0; $i < 2000; $i++) {
            $here["t$i"] = "here $i";
            $there["t$i"] = "there $i";
        }
        $old->enqueueMany($here);
        $new->enqueueMany($there);
        $moved = $this->moveWhileAWorkerTakesTasks('mail');

        $ran = $this->redis->lRange('ran', 0, -1);
        $this->assertSame(2000, count($ran) + $moved, 'each task ran or was moved');
        $this->assertGreaterThan(50, count($ran));
        $kept = [];
        while ($tasks = $new->reserve(1000)) {
            foreach ($tasks as $t) {
                $kept[$t->id()] = $t->payload();
            }
        }
        ksort($there);
        ksort($kept);
        $this->assertSame($there, $kept, 'the destination keeps every task it held, as it was');
    }

    /**
     * Runs `move NAME --to-url=...?prefix=app_` while a worker of queue
     * `$name` reserves and acks tasks (each id pushed to the list `ran`),
     * once it has run 50; returns how many `move` moved.
     */
    private function moveWhileAWorkerTakesTasks(string $name): int
    {
        $worker = self::start('
            $q = (new RedisLock\Client())->queue("' . $name . '");
            $r = new Redis();
            $r->connect("127.0.0.1", ' . RedisServer::$main->port . ');
            while (!$r->exists("stop")) {
                foreach ($q->reserve(5) as $t) {
                    $r->rPush("ran", $t->id());
                    $q->ack($t);
                }
            }
            echo "stopped";', ['extension' => self::phpredisExtensions()]);
        while ($this->redis->lLen('ran') < 50) {
            usleep(10000);
        }
        $moved = self::json(['--yes', 'move', $name, '--to-url=' . RedisServer::$main->dsn() . '?prefix=app_'])['moved'];
        $this->redis->set('stop', 1);
        $this->assertSame('stopped', self::finish($worker));
        return $moved;
    }

    public function testTheCliRefusesWrongUsageAndReportsAnUnreachableRedis(): void
    {
        foreach ([
            [['frobnicate'], "unknown command 'frobnicate'"],
            [['--nope', 'status'], 'unknown option --nope'],
            [['queue'], 'queue needs a name'],
            [['dead', ''], 'dead needs a name'],
            [['status', 'x'], 'too many arguments'],
            [['--watch=0', 'status'], '--watch needs a number > 0'],
            [['--watch=NAN', 'status'], '--watch needs a number > 0'],
            [['--limit=-1', 'locks'], '--limit needs a whole number >= 1'],
            [['dead', 'mail', '--limit=0.5'], '--limit needs a whole number >= 1'],
            [['--watch', 'retry', 'mail'], '--watch is for commands that look'],
            [['--json=1', 'status'], '--json takes no value'],
            [['move', 'mail'], 'move needs another queue, --to-url or --to-partitions'],
            [['move', 'mail', 'mail'], 'move needs another queue, --to-url or --to-partitions'],
            [['move', 'mail', 'a', 'b'], 'too many arguments'],
            [['--to-url=redis://x', 'status'], '--to-url is for move'],
            [['move', 'mail', '--to-partitions=0'], '--to-partitions needs a partition count of 1 to 128'],
            [['move', 'mail', '--to-partitions=129'], '--to-partitions needs a partition count of 1 to 128'],
            [['move', 'mail', '--partitions=x', '--to-partitions=2'], '--partitions needs a partition count of 1 to 128'],
            [['move', 'mail', '--partitions=2', '--to-partitions=2'], 'move needs another queue, --to-url or --to-partitions'],
            [['--partitions=2', 'status'], '--partitions is for move'],
        ] as [$args, $message]) {
            [$status, $out, $err] = self::cli($args);
            $this->assertSame(2, $status, implode(' ', $args));
            $this->assertStringContainsString($message, $err);
            // One line saying what is wrong, and the command's usage line,
            // not the whole help.
            $lines = explode("\n", rtrim($err));
            $this->assertCount(2, $lines, $err);
            $this->assertStringStartsWith('usage: redislock [options] ', $lines[1]);
            $this->assertSame('', $out);
        }
        $this->assertStringStartsWith('usage: redislock [options] dead NAME', self::cli(['dead', 'mail', '--limit=0.5'])[2] === '' ? '' : explode("\n", self::cli(['dead', 'mail', '--limit=0.5'])[2])[1]);
        [$status, $out] = self::cli(['--help']);
        $this->assertSame(0, $status);
        $this->assertStringStartsWith('Usage: redislock', $out);

        $port = RedisServer::freePort();
        [$status, $out, $err] = self::cli(['status'], '', ['REDISLOCK_URL' => "redis://127.0.0.1:$port"]);
        $this->assertSame(1, $status);
        $this->assertStringContainsString("127.0.0.1:$port is unavailable", $err);
        (new Client())->queue('mail')->enqueue('t');
        [$status, , $err] = self::cli(['--limit=5000', 'dead', 'mail']);
        $this->assertSame(0, $status, $err);
    }

    /**
     * Nothing a queue holds reaches the operator's terminal raw: names with
     * ESC and BEL through every command that prints them, a payload that
     * is not UTF-8, the pause prompt; and retry or purge of an id that is
     * no dead letter says so before anything is asked, exit 1.
     */
    public function testTheCliPrintsNothingRawAndSaysWhatIsNotThere(): void
    {
        $name = "evil\e]0;pwned\x07\e[2J";
        $q = (new Client())->queue($name);
        $q->enqueue("id\e[31m", "\xff\xfe payload \x9b");
        $q->enqueue('welcome:2', 'p');
        foreach ([['status'], ['queue', $name], ['metrics'], ['task', $name, "id\e[31m"], ['pause', $name], ['resume', $name, '--yes']] as $args) {
            [$status, $out, $err] = self::cli($args, "y\n");
            $this->assertSame(0, $status, implode(' ', $args) . ": $err");
            $this->assertDoesNotMatchRegularExpression('/[\x00-\x09\x0b-\x1f\x7f]/', $out . $err, implode(' ', $args) . ': a control byte reached the terminal');
            $this->assertTrue(mb_check_encoding($out . $err, 'UTF-8'), implode(' ', $args) . ': bytes that are not UTF-8');
        }
        $this->assertStringContainsString('\xff\xfe payload', self::cli(['task', $name, "id\e[31m"])[1]);
        [$status, $out, $err] = self::cli(['retry', $name, 'welcome:2']);
        $this->assertSame([1, ''], [$status, $out]);
        $this->assertStringContainsString("no dead letter 'welcome:2' in queue", $err);
        $this->assertStringContainsString('(that task is queued)', $err);
        $this->assertStringNotContainsString('[y/N]', $err, 'said before asking');
        [$status, , $err] = self::cli(['purge', $name, 'nope', '--yes']);
        $this->assertSame(1, $status);
        $this->assertStringContainsString("no dead letter 'nope' in queue", $err);
    }

    /** What a newcomer trips over: a mistyped queue, -h, JSON metrics, long names, cut lists, watch into a pipe. */
    public function testTheCliSaysWhatIsThereAndWhatItLeftOut(): void
    {
        [$c] = $this->seed();
        $before = $this->redis->rawCommand('DEBUG', 'DIGEST');
        foreach ([[['queue', 'mial'], "no queue 'mial': did you mean 'mail'?"], [['dead', 'nosuch'], "no queue 'nosuch' (redislock status lists the queues)"], [['--yes', 'purge', 'mial'], "no queue 'mial'"]] as [$args, $message]) {
            [$status, $out, $err] = self::cli($args);
            $this->assertSame([1, ''], [$status, $out], implode(' ', $args));
            $this->assertStringStartsWith("redislock: $message", $err);
        }
        $this->assertSame($before, $this->redis->rawCommand('DEBUG', 'DIGEST'), 'nothing created or changed');

        [$status, $out] = self::cli(['-h']);
        $this->assertSame(0, $status);
        $this->assertStringStartsWith('Usage: redislock', $out);

        $metrics = self::json(['--json', 'metrics']);
        $ready = array_values(array_filter($metrics['redislock_queue_tasks']['samples'], fn ($s) => $s['labels'] === ['queue' => 'mail', 'state' => 'ready']));
        $this->assertSame([['labels' => ['queue' => 'mail', 'state' => 'ready'], 'value' => 2]], $ready);
        $this->assertSame('gauge', $metrics['redislock_queue_tasks']['type']);
        $this->assertSame(['labels' => ['kind' => 'lock'], 'value' => 1], $metrics['redislock_locks_held']['samples'][0]);

        $long = 'q' . str_repeat('x', 300);
        $c->queue($long)->enqueue('t');
        [, $out] = self::cli(['status']);
        foreach (explode("\n", trim($out)) as $line) {
            $this->assertLessThan(150, strlen($line), $line);
        }
        $this->assertMatchesRegularExpression('/^qxxx+\.\.\. +running +1 +0 /m', $out);

        [, $out] = self::cli(['--limit=1', 'dead', 'mail']);
        $this->assertStringEndsWith("showing 1 of 2 dead letters (--limit=N shows more, up to 1000)\n", $out);
        [, $out] = self::cli(['--limit=1', 'queue', 'mail']);
        $this->assertStringEndsWith("showing 1 of 3 queued tasks (--limit=N shows more, up to 1000)\n", $out);
        [, $out] = self::cli(['--limit=1', 'locks']);
        $this->assertSame(2, substr_count($out, "\n") - 1, 'a header and one lock');
        $this->assertStringEndsWith("showing the first 1 locks; there are more (--limit=N shows up to 10000)\n", $out);
        [, $out] = self::cli(['--limit=2', 'dead', 'mail']);
        $this->assertStringNotContainsString('showing', $out, 'all shown');

        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $p = proc_open([PHP_BINARY, '-n', '-d', "extension=$so", self::CLI, '--watch=0.1', 'status'], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, ['REDISLOCK_URL' => RedisServer::$main->dsn()]);
        $lines = [];
        while (count(preg_grep('/^--- /', $lines)) < 3) {
            $lines[] = rtrim(fgets($pipes[1]));
        }
        proc_terminate($p, SIGINT);
        proc_close($p);
        $this->assertMatchesRegularExpression('/^--- \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$/', $lines[0]);
        $this->assertStringStartsWith('QUEUE ', $lines[1], 'each round starts with its separator');
        $this->assertStringNotContainsString("\033", implode("\n", $lines), 'no terminal codes into a pipe');
    }

    public function testWatchRepeatsUntilInterrupted(): void
    {
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $p = proc_open(
            [PHP_BINARY, '-n', '-d', "extension=$so", self::CLI, '--json', '--watch=0.2', 'status'],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            null,
            ['REDISLOCK_URL' => RedisServer::$main->dsn()],
        );
        $first = json_decode(fgets($pipes[1]), true);
        $this->assertSame([], $first);
        (new Client())->queue('fresh')->enqueue('t');
        do {
            $next = json_decode(fgets($pipes[1]), true);
        } while ($next === []);
        $this->assertSame(['fresh'], array_column($next, 'name'));
        $this->assertSame(1, $next[0]['ready']);
        proc_terminate($p, SIGINT);
        $this->assertSame(130, proc_close($p), 'Ctrl-C ends it');
    }

    /** `--watch` into `| head`: it ends when its reader goes, with no notice; a SIGTERM ends it at once. */
    public function testWatchEndsWhenItsReaderGoesOrOnSigterm(): void
    {
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $env = ['REDISLOCK_URL' => RedisServer::$main->dsn()];
        $cmd = implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', '-d', "extension=$so", ...self::pcntl(), self::CLI, '--watch=0.05', 'status']));
        $p = proc_open(['bash', '-c', "set -o pipefail; $cmd 2>\"\$ERR\" | head -3 >/dev/null; echo \"\${PIPESTATUS[0]}\""],
            [1 => ['pipe', 'w']], $pipes, null, $env + ['ERR' => $err = tempnam(sys_get_temp_dir(), 'watch')]);
        stream_set_timeout($pipes[1], 30);
        $status = trim((string) stream_get_contents($pipes[1]));
        proc_close($p);
        $said = (string) file_get_contents($err);
        unlink($err);
        $this->assertContains($status, ['0', '141'], "ended with $status: $said");
        $this->assertSame('', $said, 'no notice');

        $p = proc_open([PHP_BINARY, '-n', '-d', "extension=$so", ...self::pcntl(), self::CLI, '--watch=600', 'status'], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        fgets($pipes[1]);
        proc_terminate($p, SIGTERM);
        // (Its handler's status: killed by the signal itself, it would be 15.)
        $this->assertSame(143, proc_close($p), 'SIGTERM ends it, in its 600 s sleep');
    }

    /** The -d that loads pcntl, where PHP has it as a shared extension. */
    private static function pcntl(): array
    {
        return array_merge(...array_map(fn ($ext) => ['-d', "extension=$ext"], self::shared('pcntl')));
    }

    public function testThePrometheusExpositionPassesPromtoolAndHoldsTheSeededState(): void
    {
        [$c] = $this->seed();
        $pid = $this->seenWorker('mail');
        $c->queue('reports')->pause();
        // A queue name that needs escaping in a label.
        $c->queue("we\"ird\\name\n")->enqueue('t');
        $split = $c->queue('split', ['partitions' => 2]);
        $split->enqueueMany(['a' => null, 'b' => null, 'c' => null]);
        $byPartition = array_column($split->partitionMetrics(), 'ready');
        [$status, $out, $err] = self::cli(['metrics']);
        $this->assertSame(0, $status, $err);
        $check = proc_open(['promtool', 'check', 'metrics'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        fwrite($pipes[0], $out);
        fclose($pipes[0]);
        $problems = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($check), "promtool: $problems\n$out");
        $this->assertSame('', $problems);

        foreach ([
            'redislock_queue_tasks{queue="mail",state="ready"} 2',
            'redislock_queue_tasks{queue="mail",state="delayed"} 1',
            'redislock_queue_tasks{queue="mail",state="leased"} 1',
            'redislock_queue_tasks{queue="mail",state="dead"} 2',
            'redislock_queue_tasks{queue="reports",state="ready"} 3',
            'redislock_queue_enqueued_total{queue="mail"} 7',
            'redislock_queue_acked_total{queue="mail"} 1',
            'redislock_queue_dead_total{queue="mail"} 2',
            'redislock_queue_paused{queue="mail"} 0',
            'redislock_queue_paused{queue="reports"} 1',
            'redislock_queue_throttled_seconds{queue="mail"} 0',
            'redislock_queue_groups{queue="mail"} 0',
            'redislock_queue_waiting_parents{queue="mail"} 0',
            'redislock_queue_workers{queue="reports"} 0',
            '# TYPE redislock_queue_worker_acked_total counter',
            'redislock_queue_tasks{queue="we\"ird\\\\name\n",state="ready"} 1',
            '# HELP redislock_locks_held Locks held, by kind: lock (RedisLock\\\\Lock), exact (exactKey: Laravel\'s locks), RedisLock (the drop-in class), semaphore, rwlock or Lock_Service (its order locks), and seed (RedisLock\'s old name, until the next release); of the first 10000 locks found.',
            'redislock_locks_held{kind="semaphore"} 0',
            'redislock_locks_held{kind="lock"} 1',
            'redislock_locks_held{kind="exact"} 0',
            'redislock_locks_held{kind="RedisLock"} 1',
            'redislock_locks_held{kind="seed"} 1',
            'redislock_lock_waiters{kind="lock"} 2',
            '# TYPE redislock_queue_acked_total counter',
            '# TYPE redislock_queue_tasks gauge',
        ] as $line) {
            $this->assertStringContainsString("\n$line\n", "\n$out", $line);
        }
        $this->assertMatchesRegularExpression('/^redislock_queue_oldest_due_age_seconds\{queue="reports"\} \d+\.\d+$/m', $out);
        $this->assertStringContainsString("\nredislock_queue_tasks{queue=\"split\",state=\"ready\"} 3\n", $out, 'a partitioned queue as one');
        foreach ($byPartition as $i => $ready) {
            $this->assertStringContainsString("\nredislock_queue_partition_tasks{queue=\"split\",partition=\"$i\",state=\"ready\"} $ready\n", $out, 'and by partition');
        }
        $this->assertStringNotContainsString('redislock_queue_partition_tasks{queue="mail"', $out, 'a queue of one slot has no partition series');
        $kept = $c->queue('mail')->recentFootprint();
        $this->assertStringContainsString("\nredislock_queue_recent_records{queue=\"mail\"} {$kept['kept']}\n", $out);
        $this->assertMatchesRegularExpression('/^redislock_queue_recent_bytes\{queue="mail"\} [1-9]\d*$/m', $out);
        foreach (['runtime_p50', 'runtime_p95', 'wait_p50', 'wait_p95'] as $timing) {
            $this->assertMatchesRegularExpression('/^redislock_queue_' . $timing . '_seconds\{queue="mail"\} \d+(\.\d+)?(e-\d+)?$/m', $out);
            $this->assertDoesNotMatchRegularExpression('/^redislock_queue_' . $timing . '_seconds\{queue="reports"\}/m', $out, 'no sample: none');
        }
        // The child, and this process when its note of mail was not a few seconds old.
        $this->assertMatchesRegularExpression('/^redislock_queue_workers\{queue="mail"\} [12]$/m', $out);
        $worker = preg_quote(gethostname() . " pid $pid");
        $this->assertMatchesRegularExpression('/^redislock_queue_worker_acked_total\{queue="mail",worker="' . $worker . '"\} 0$/m', $out);
        $this->assertMatchesRegularExpression('/^redislock_queue_worker_seen_age_seconds\{queue="mail",worker="' . $worker . '"\} \d+(\.\d+)?$/m', $out);
    }
}
