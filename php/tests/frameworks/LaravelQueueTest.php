<?php

use Illuminate\Support\Facades\Queue;
use Orchestra\Testbench\TestCase;

/**
 * The `redislock` Laravel queue driver, run by Laravel's own
 * Illuminate\Queue\Worker in separate processes over real jobs, some of
 * them SIGKILLed mid-job: every job runs to its end, and the queue ends
 * empty with nothing dead.
 */
final class LaravelQueueTest extends TestCase
{
    use Processes;

    private Redis $redis;

    protected function setUp(): void
    {
        parent::setUp();
        require_once __DIR__ . '/laravel/RecordedJob.php';
        require_once __DIR__ . '/laravel/LockingJob.php';
        $this->redis = RedisServer::$main->client();
        $this->redis->select(5);
        $this->redis->flushDb();
    }

    private static function worker(float $retryAfter, float $blockFor): array
    {
        return self::start('$argv = ["worker", "127.0.0.1", "' . RedisServer::$main->port . '", "'
            . $retryAfter . '", "' . $blockFor . '"]; require "' . __DIR__ . '/laravel/worker.php";', self::laravelIni());
    }

    /** @return array<int, list<int>> job => the attempts that ran to the end */
    private function done(): array
    {
        $done = [];
        foreach ($this->redis->lRange('done', 0, -1) as $line) {
            [$n, $attempt] = array_map('intval', explode(' ', $line));
            $done[$n][] = $attempt;
        }
        ksort($done);
        return $done;
    }

    public function testPushLaterBulkPopSizesReleaseAndDelete(): void
    {
        $queue = Queue::connection('redislock');
        $this->assertInstanceOf(RedisLock\Laravel\Queue::class, $queue);
        $id = $queue->push(new RecordedJob(1));
        $this->assertIsString($id);
        $queue->later(60, new RecordedJob(2));
        $queue->bulk([new RecordedJob(3), new RecordedJob(4)]);
        $queue->pushRaw(json_encode(['uuid' => 'raw-1', 'job' => 'x', 'data' => []]), 'other');
        $this->assertSame(4, $queue->size());
        $this->assertSame([3, 1, 0], [$queue->pendingSize(), $queue->delayedSize(), $queue->reservedSize()]);
        $this->assertSame(1, $queue->size('other'));

        $job = $queue->pop();
        $this->assertInstanceOf(RedisLock\Laravel\Job::class, $job);
        $this->assertSame($id, $job->getJobId());
        $this->assertSame(1, $job->attempts());
        $this->assertSame(RecordedJob::class, $job->resolveName());
        $this->assertSame([2, 1, 1], [$queue->pendingSize(), $queue->delayedSize(), $queue->reservedSize()]);
        $job->release(30);
        $this->assertTrue($job->isReleased());
        $this->assertSame([2, 2, 0], [$queue->pendingSize(), $queue->delayedSize(), $queue->reservedSize()]);

        $job = $queue->pop();
        $this->assertTrue($job->extendLease(120));
        $job->delete();
        $this->assertTrue($job->isDeleted());
        $this->assertSame(3, $queue->size());
        $this->assertSame('raw-1', $queue->pop('other')->getJobId());
        $this->assertNull($queue->pop('empty'));
    }

    /** `partitions` in the connection's config keeps its queues in that many slots. */
    public function testAConnectionsQueuesCanBeKeptInPartitions(): void
    {
        $this->app['config']->set('queue.connections.redislock.partitions', 4);
        $queue = Queue::connection('redislock');
        $pushed = [];
        for ($i = 1; $i <= 12; $i++) {
            $pushed[] = $queue->push(new RecordedJob($i));
        }
        $this->assertSame(4, $queue->queue()->partitions());
        $this->assertSame(12, $queue->size());
        $this->assertSame(0, $this->redis->exists('Queue:queues:default'), 'nothing in the one-slot layout');
        $parts = $queue->queue()->partitionMetrics();
        $this->assertCount(4, $parts);
        $this->assertSame(12, array_sum(array_column($parts, 'ready')), 'the jobs over the 4 partitions (random ids: some may hold none)');
        $this->assertNotSame([], $this->redis->keys('queue:{*}#s*/4:14:queues:default'), 'in the partitions\' keys');
        $popped = [];
        while ($job = $queue->pop()) {
            $popped[] = $job->getJobId();
            $job->delete();
        }
        sort($pushed);
        sort($popped);
        $this->assertSame($pushed, $popped);
        $this->assertSame(0, $queue->size());
    }

    /** The CLI and the dashboard name a job as Horizon does: its displayName. */
    public function testTheOperatorToolsNameAJobByItsDisplayName(): void
    {
        require_once dirname(__DIR__, 3) . '/php/src/Operator/Report.php';
        $queue = Queue::connection('redislock');
        $queue->push(new RecordedJob(7));
        $tasks = $queue->queue()->peek(10);
        $this->assertCount(1, $tasks);
        $this->assertSame(RecordedJob::class, RedisLock\Operator\Report::job($tasks[0]['payload']));
        $this->assertNull(RedisLock\Operator\Report::job('{"job": "x"}'), 'no displayName: no name');
        $this->assertNull(RedisLock\Operator\Report::job('plain text'));
        $this->assertNull(RedisLock\Operator\Report::job(null));
    }

    public function testJobsAreTaggedAsHorizonTagsThem(): void
    {
        require_once __DIR__ . '/laravel/TaggedJobs.php';
        $customer = fn (int $id) => (new TaggedCustomer())->forceFill(['id' => $id]);
        $queue = Queue::connection('redislock');
        $self = $queue->push(new SelfTaggedJob());
        $one = $queue->later(60, new ModelJob($customer(42)));
        $queue->bulk([new ModelJob($customer(7), collect([$customer(8)])), new SelfTaggedJob(), new RecordedJob(1)]);
        $leased = $queue->queue();
        $this->assertSame(['import-7', '42'], $leased->find($self)['tags'], 'its tags(), without those no task can take');
        $this->assertSame(['TaggedCustomer:42'], $leased->find($one)['tags']);
        $this->assertCount(2, $leased->tagged('import-7'));
        $this->assertSame(['TaggedCustomer:7', 'TaggedCustomer:8'], $leased->tagged('TaggedCustomer:8')[0]['tags']);
        $this->assertCount(5, $leased->peek(), "four due now, one later");
        $untagged = array_values(array_filter($leased->peek(), fn ($t) => $t['tags'] === []));
        $this->assertSame(RecordedJob::class, json_decode($untagged[0]['payload'], true)['displayName']);
        $this->assertNull(RedisLock\Laravel\Queue::tagsOf('raw'));
    }

    /**
     * Two applications on one Redis, each with its own Laravel key prefix
     * (`database.redis.options.prefix`), never see each other's jobs or
     * locks: as with Laravel's own driver, checked first as the reference.
     */
    public function testTwoAppsWithTheirOwnPrefixesNeverRunEachOthersJobs(): void
    {
        $port = RedisServer::$main->port;
        $shop = laravel_app('127.0.0.1', $port, [], 'shop_database_');
        $blog = laravel_app('127.0.0.1', $port, [], 'blog_database_');
        $drivers = ['redis', 'redislock'];
        if (!RedisServer::$main->luaHas('cjson')) {
            // Laravel's own pop script decodes the job with cjson.
            $f = RedisServer::features();
            fwrite(STDERR, "\nSKIPPED: Laravel's own driver as the reference: {$f['name']} {$f['version']} has no cjson in Lua\n");
            $drivers = ['redislock'];
        }
        try {
            foreach ($drivers as $driver) {
                $mine = $shop['queue']->connection($driver);
                $theirs = $blog['queue']->connection($driver);
                $mine->pushRaw(json_encode(['id' => "$driver-1", 'uuid' => "$driver-1", 'attempts' => 0, 'job' => 'x', 'data' => []]));
                $this->assertNull($theirs->pop(), "$driver: the blog's worker takes no job of the shop");
                $this->assertSame([0, 1], [$theirs->size(), $mine->size()], $driver);
                $job = $mine->pop();
                $this->assertSame("$driver-1", $job->getJobId(), $driver);
                $job->delete();
                $this->assertSame(0, $mine->size(), $driver);
            }
            $report = fn ($app) => $app['cache']->store('redis')->lock('report', 10);
            $this->assertTrue(($held = $report($shop))->get());
            $this->assertTrue($report($blog)->get(), 'another application, another lock');
            $this->assertFalse($report($shop)->get(), 'the same application: held');
            $held->release();
            $keys = $this->redis->keys('*');
            $this->assertNotEmpty(preg_grep('/^shop_database_exactlock:\{shop_database_laravel_cache:report\}:fence$/', $keys));
            // But the one record operators read to find every app's queues
            // (docs/keys.md): the prefixes' names, nothing of an app's own.
            $this->assertSame(['redislock:prefixes'], array_values(preg_grep('/^(shop|blog)_database_/', $keys, PREG_GREP_INVERT)), 'every key under its application\'s prefix');
            $this->assertSame(['shop_database_'], $this->redis->sMembers('redislock:prefixes'), 'the shop enqueued; the blog only looked');
        } finally {
            Illuminate\Support\Facades\Facade::clearResolvedInstances();
            Illuminate\Support\Facades\Facade::setFacadeApplication($this->app);
        }
    }

    /** The adapter's prefix is the one Laravel's own client applies, for each way of setting it. */
    public function testThePrefixIsTheOneLaravelsClientApplies(): void
    {
        $server = ['host' => '127.0.0.1', 'port' => RedisServer::$main->port];
        $clients = class_exists(Predis\Client::class) ? ['phpredis', 'predis'] : ['phpredis'];
        $checked = 0;
        foreach ($clients as $client) {
            foreach ([[], ['options' => ['prefix' => 'global_']]] as $global) {
                $config = ['client' => $client] + $global + [
                    'both' => $server + ['prefix' => 'own_', 'options' => ['prefix' => 'local_']],
                    'own' => $server + ['prefix' => 'own_'],
                    'local' => $server + ['options' => ['prefix' => 'local_']],
                    'none' => $server,
                ];
                $manager = new Illuminate\Redis\RedisManager($this->app, $client, $config);
                foreach (['both', 'own', 'local', 'none'] as $name) {
                    $laravel = $client === 'predis'
                        ? (string) $manager->connection($name)->client()->getOptions()->prefix?->getPrefix()
                        : (string) $manager->connection($name)->client()->getOption(Redis::OPT_PREFIX);
                    $this->assertSame($laravel, RedisLock\Laravel\Connections::prefix($config, $name), "$client, " . json_encode($global) . ", $name");
                    $checked++;
                }
            }
        }
        $this->assertGreaterThanOrEqual(8, $checked);
    }

    /**
     * The server and database of a connection are the ones Laravel's own
     * clients use: the url's parts win over the connection's keys (the
     * shape of Laravel's default config when REDIS_URL is set), as its
     * ConfigurationUrlParser reads them. A lock of the adapter and one of
     * the stock client on the same name exclude each other.
     */
    public function testTheConnectionIsTheOneLaravelsClientsUse(): void
    {
        $port = RedisServer::$main->port;
        $clients = class_exists(Predis\Client::class) ? ['phpredis', 'predis'] : ['phpredis'];
        $cases = [
            'url with a database' => ['url' => "redis://127.0.0.1:$port/3", 'database' => '0'],
            'url without one' => ['url' => "redis://127.0.0.1:$port", 'database' => '4'],
            'url and a query' => ['url' => "redis://127.0.0.1:$port/2?database=6"],
            'keys only' => ['host' => '127.0.0.1', 'port' => $port, 'database' => '7'],
            'timeouts of 0' => ['host' => '127.0.0.1', 'port' => $port, 'database' => '8', 'timeout' => 0, 'read_timeout' => 0],
        ];
        foreach ($clients as $client) {
            foreach ($cases as $case => $connection) {
                $config = ['client' => $client, 'default' => $connection];
                $manager = new Illuminate\Redis\RedisManager($this->app, $client, $config);
                $stock = $manager->connection('default');
                $stock->command('set', ['where-am-i', $case]);
                $mine = RedisLock\Laravel\Connections::client($config, 'default');
                $lock = $mine->lock('where-am-i-lock', ['ttl' => 10]);
                $this->assertTrue($lock->acquire(), "$client, $case");
                $this->assertSame(1, (int) $stock->command('exists', ['lock:{where-am-i-lock}']), "$client, $case: the adapter's lock is in the stock client's database");
                $lock->release();
                $stock->command('del', ['where-am-i']);
            }
        }
    }

    /** Runs one of Laravel's queue commands on the test app; returns [exit code, output]. */
    private static function artisan(string ...$args): array
    {
        $argv = var_export(array_merge(['artisan', '127.0.0.1', (string) RedisServer::$main->port], $args), true);
        // Symfony's console measures text with intl; Laravel 10's renders
        // its lines with Termwind, which needs dom.
        $ini = self::laravelIni();
        array_push($ini['extension'], ...self::shared('intl', 'dom'));
        $out = self::php('$argv = ' . $argv . '; require "' . __DIR__ . '/laravel/artisan.php";', $ini, $exit);
        return [$exit, $out];
    }

    /**
     * The queue contract's corners, on Laravel's own Redis driver (the
     * reference) and on the adapter: bulk() raises JobQueued for each job,
     * a raw payload pushed twice is two jobs, and a delay past 2^31 s is
     * queued (the adapter: at its longest delay, 68 years).
     */
    public function testBulkEventsDuplicatePayloadsAndLongDelaysAsLaravelsOwnDriver(): void
    {
        $seen = [];
        Illuminate\Support\Facades\Event::listen(Illuminate\Queue\Events\JobQueued::class, function ($event) use (&$seen) {
            $seen[] = $event->connectionName;
        });
        $raw = json_encode(['id' => 'same', 'uuid' => 'same', 'attempts' => 0, 'job' => 'x', 'data' => []]);
        $results = [];
        foreach (['redis', 'redislock'] as $driver) {
            $queue = Queue::connection($driver);
            $queue->bulk([new RecordedJob(1), new RecordedJob(2), new RecordedJob(3)], '', 'bulk');
            $queue->pushRaw($raw, 'raw');
            $queue->pushRaw($raw, 'raw');
            $queue->later(2 ** 31 + 10, new RecordedJob(4), '', 'far');
            $results[$driver] = [count(array_keys($seen, $driver)), $queue->size('bulk'), $queue->size('raw'), $queue->size('far')];
        }
        $this->assertSame([4, 3, 2, 1], $results['redis'], "Laravel's own driver: 3 bulk events and one later()");
        $this->assertSame($results['redis'], $results['redislock']);
        $far = Queue::connection('redislock')->queue('far')->peek(1)[0];
        $this->assertGreaterThan(microtime(true) + 2 ** 31 - 100, $far['at'], 'due at the longest delay');
    }

    /**
     * `queue:clear` and `queue:monitor` on the adapter and, as the
     * reference, Laravel's own Redis driver: the same counts, except that
     * a job running now is left to its worker.
     */
    public function testQueueClearAndQueueMonitorAsWithLaravelsOwnDriver(): void
    {
        foreach (['redis', 'redislock'] as $driver) {
            $queue = Queue::connection($driver);
            $queue->bulk([new RecordedJob(1), new RecordedJob(2), new RecordedJob(3)]);
            $queue->later(60, new RecordedJob(4));
            $queue->push(new RecordedJob(5), '', 'other');
        }
        [$exit, $out] = self::artisan('queue:monitor', 'redis:default,redislock:default,redislock:other', '--max=4');
        $this->assertSame(0, $exit, $out);
        // Laravel 8's table (`redis | default | 4 | ALERT`) or Laravel 10's
        // lines (`redis:default ..... [4] ALERT`).
        $this->assertMatchesRegularExpression('/\bredis\W+default\W+4\W+ALERT/', $out);
        $this->assertMatchesRegularExpression('/\bredislock\W+default\W+4\W+ALERT/', $out);
        $this->assertMatchesRegularExpression('/\bredislock\W+other\W+1\W+OK/', $out);

        [$exit, $out] = self::artisan('queue:clear', 'redis', '--force');
        $this->assertSame(0, $exit, $out);
        $this->assertStringContainsString('Cleared 4 jobs from the [default] queue', $out);
        $running = Queue::connection('redislock')->pop();
        [$exit, $out] = self::artisan('queue:clear', 'redislock', '--force');
        $this->assertSame(0, $exit, $out);
        $this->assertStringContainsString('Cleared 3 jobs from the [default] queue', $out, 'the running job stays with its worker');
        $this->assertSame(0, Queue::connection('redis')->size());
        $mine = Queue::connection('redislock');
        $this->assertSame([0, 0, 1], [$mine->pendingSize(), $mine->delayedSize(), $mine->reservedSize()]);
        foreach (['redis', 'redislock'] as $driver) {
            $this->assertSame(1, Queue::connection($driver)->size('other'), "$driver: another queue is not touched");
        }
        $running->delete();
        $this->assertSame(0, Queue::connection('redislock')->size());
        [, $out] = self::artisan('queue:clear', 'redislock', '--queue=other', '--force');
        $this->assertMatchesRegularExpression('/Cleared 1 jobs? from the \[other\] queue/', $out);
        $this->assertNull(Queue::connection('redislock')->creationTimeOfOldestPendingJob('other'));
    }

    public function testTheOldestPendingJobsCreationTime(): void
    {
        $queue = Queue::connection('redislock');
        $this->assertNull($queue->creationTimeOfOldestPendingJob());
        $queue->later(60, new RecordedJob(1));
        $this->assertNull($queue->creationTimeOfOldestPendingJob(), 'a delayed job is not pending');
        $before = time();
        $queue->push(new RecordedJob(2));
        $at = $queue->creationTimeOfOldestPendingJob();
        $this->assertIsInt($at);
        $this->assertGreaterThanOrEqual($before - 1, $at);
        $this->assertLessThanOrEqual(time() + 1, $at);
    }

    public function testAPopWaitsForThePushWithoutPolling(): void
    {
        $this->app['config']->set('queue.connections.redislock.block_for', 10);
        $queue = Queue::connection('redislock');
        $consumer = self::start('
            require "' . __DIR__ . '/laravel/boot.php";
            $app = laravel_app("127.0.0.1", ' . RedisServer::$main->port . ', ["block_for" => 10]);
            $t = microtime(true);
            $job = $app["queue"]->connection("redislock")->pop();
            echo $job ? $job->getJobId() : "none", " ", round(microtime(true) - $t, 1);', self::laravelIni());
        for ($tries = 0; $this->redis->lLen('{Queue:queues:default}:line') < 1; $tries++) {
            $this->assertLessThan(4000, $tries, 'the consumer never waited in line');
            usleep(5000);
        }
        $queue->pushRaw(json_encode(['uuid' => 'awaited']));
        [$got, $seconds] = explode(' ', self::finish($consumer));
        $this->assertSame('awaited', $got);
        $this->assertLessThan(10, (float) $seconds);
    }

    /** Laravel's worker meets an exception: the release records its class and message. */
    public function testAReleasedJobRecordsWhyItFailed(): void
    {
        $queue = Queue::connection('redislock');
        $id = $queue->push(new RecordedJob(7, 0, 1));
        $options = new Illuminate\Queue\WorkerOptions(name: 'default', backoff: 0, memory: 512, timeout: 0, sleep: 0, maxTries: 5);
        app('queue.worker')->runNextJob('redislock', 'default', $options);
        $row = $queue->queue()->find($id);
        $this->assertSame(['queued', 1, 'RuntimeException: job 7 fails attempt 1'], [$row['state'], $row['attempts'], $row['reason']]);
    }

    /**
     * Laravel's worker is a process serving many jobs: each job's locks end
     * with it (the service provider's request boundary), though the job
     * left its lock in a static or threw while holding it. Every job takes
     * the lock at once, and none is left while the worker waits on.
     */
    public function testEachJobOfLaravelsWorkerEndsItsLocks(): void
    {
        $queue = Queue::connection('redislock');
        $jobs = 20;
        for ($n = 1; $n <= $jobs; $n++) {
            $queue->push(new LockingJob($n));
        }
        $worker = self::worker(60.0, 1.0);
        $deadline = microtime(true) + 30;
        while ($this->redis->lLen('locking') < $jobs * 3 / 2) {
            $this->assertLessThan($deadline, microtime(true), 'jobs ran: ' . $this->redis->lLen('locking'));
            usleep(50000);
        }
        $locks = RedisServer::$main->client();
        for ($i = 0; $i < 100 && $locks->exists('lock:{job-lock}'); $i++) {
            usleep(20000);
        }
        $left = $locks->exists('lock:{job-lock}');
        posix_kill($worker[2], SIGTERM);
        $out = self::finish($worker);
        $runs = $this->redis->lRange('locking', 0, -1);
        $this->assertCount($jobs * 3 / 2, $runs, $out);
        foreach ($runs as $run) {
            [$n, $attempt, $held, $took] = array_map('intval', explode(' ', $run));
            $this->assertSame([0, 1], [$held, $took], "job $n, attempt $attempt: it held nothing when it started, and took the lock");
        }
        $this->assertSame(0, $left, 'no lock left while the worker waits for jobs');
        $this->assertSame(0, $queue->size());
    }

    /**
     * Octane's ends of a request, task and tick end the locks (Octane is
     * not packaged here: its events are dispatched by name, as Laravel's
     * dispatcher files an event object under its class name).
     */
    public function testOctanesRequestTaskAndTickEndsEndTheLocks(): void
    {
        $client = new RedisLock\Client(RedisServer::$main->dsn());
        foreach (RedisLock\Laravel\ServiceProvider::REQUEST_ENDS as $event) {
            $lock = $client->lock('octane', ['ttl' => 30]);
            $this->assertTrue($lock->acquire(), $event);
            app('events')->dispatch($event);
            $this->assertSame([], RedisLock\Runtime::held(), $event);
            $this->assertFalse($lock->isHeld(), $event);
            $this->assertFalse($client->lockState('octane')['held'], $event);
        }
    }

    public function testLaravelsWorkerLosesNothingWhenWorkersAreKilled(): void
    {
        $jobs = 60;
        $queue = Queue::connection('redislock');
        for ($n = 1; $n <= $jobs; $n++) {
            // Every tenth job fails its first attempt: Laravel's retry.
            $queue->push(new RecordedJob($n, 40, $n % 10 === 0 ? 1 : 0));
        }
        $workers = [];
        for ($i = 0; $i < 3; $i++) {
            $workers[] = self::worker(1.0, 1.0);
        }
        $kills = 0;
        $deadline = microtime(true) + 60;
        while (count($this->done()) < $jobs || $queue->size() > 0) {
            $this->assertLessThan($deadline, microtime(true), 'jobs left: ' . $queue->size());
            usleep(150000);
            if ($kills < 8) {
                // SIGKILL a worker (mid-job, most likely) and start another.
                $i = $kills % count($workers);
                posix_kill($workers[$i][2], SIGKILL);
                self::finish($workers[$i]);
                $workers[$i] = self::worker(1.0, 1.0);
                $kills++;
            }
        }
        foreach ($workers as $w) {
            posix_kill($w[2], SIGTERM);
        }
        foreach ($workers as $w) {
            self::finish($w);
        }
        $done = $this->done();
        $this->assertSame(range(1, $jobs), array_keys($done), 'every job ran to its end');
        foreach ($done as $n => $attempts) {
            if ($n % 10 === 0) {
                $this->assertNotContains(1, $attempts, "job $n failed its first attempt");
            }
        }
        $this->assertSame(0, $queue->size());
        $this->assertSame([], $queue->queue()->dead());
        $this->assertSame(8, $kills);
        // Jobs whose worker was killed ran again after their lease.
        $again = array_filter($done, fn ($attempts, $n) => $n % 10 !== 0 && max($attempts) > 1, ARRAY_FILTER_USE_BOTH);
        $this->assertNotEmpty($again, 'no kill hit a job');
    }
}
