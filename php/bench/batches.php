<?php
/**
 * Laravel's job batches: one batch of JOBS no-op jobs (`Bus::batch()`),
 * run by WORKERS processes of Laravel's own worker on the redislock queue,
 * with the batches kept by redislock's repository (Redis) and by
 * Laravel's `DatabaseBatchRepository` on SQLite (a file all the workers
 * share, its `job_batches` table made as Laravel's migration makes it).
 * Only the repository differs. Jobs/s runs from the dispatch to the last
 * worker's exit (`--stop-when-empty`: the batch is then finished, checked);
 * the batch's `then()` ran once in both (checked).
 *
 *   php -d extension=... php/bench/batches.php [redis-url] [jobs] [workers]
 */

require_once '/usr/share/php/Illuminate/autoload.php';
spl_autoload_register(function (string $class): void {
    if (str_starts_with($class, 'RedisLock\\Laravel\\')) {
        require dirname(__DIR__) . '/src/Laravel/' . substr($class, strlen('RedisLock\\Laravel\\')) . '.php';
    }
});

/** A no-op job of a batch. */
final class BenchBatchedJob implements Illuminate\Contracts\Queue\ShouldQueue
{
    use Illuminate\Bus\Batchable, Illuminate\Bus\Queueable, Illuminate\Foundation\Bus\Dispatchable, Illuminate\Queue\InteractsWithQueue;

    public function handle(): void
    {
    }
}

/** The batch's then(): counts its runs in Redis. */
final class BenchBatchDone
{
    public static function callback(): Closure
    {
        return static function (): void {
            app('redis')->connection('default')->incr('bench-batches:then');
        };
    }
}

/** A Laravel application on the Redis at $url, its batches in `$repository` ('redislock' or 'database'). */
function bench_app(string $url, string $repository, string $sqlite): Illuminate\Foundation\Application
{
    $parts = parse_url($url);
    $redis = ['host' => $parts['host'] ?? '127.0.0.1', 'port' => (int) ($parts['port'] ?? 6379), 'database' => 7];
    $app = new Illuminate\Foundation\Application(sys_get_temp_dir());
    $app->instance('config', new Illuminate\Config\Repository([
        'app' => ['name' => 'bench'],
        'queue' => [
            'default' => 'redislock',
            'connections' => ['redislock' => ['driver' => 'redislock', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90]],
            'failed' => ['driver' => 'null'],
            'batching' => $repository === 'redislock'
                ? ['driver' => 'redislock', 'connection' => 'default', 'table' => 'bench_batches']
                : ['database' => 'sqlite', 'table' => 'job_batches'],
        ],
        'database' => [
            'default' => 'sqlite',
            // Writers wait up to 60 s for the database's lock (PDO's busy
            // timeout) rather than fail a job with "database is locked".
            'connections' => ['sqlite' => ['driver' => 'sqlite', 'database' => $sqlite, 'prefix' => '', 'foreign_key_constraints' => false,
                'options' => [PDO::ATTR_TIMEOUT => 60]]],
            'redis' => ['client' => 'phpredis', 'default' => $redis],
        ],
    ]));
    $app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, BenchExceptions::class);
    if (interface_exists(Illuminate\Contracts\Foundation\MaintenanceMode::class)) {
        // Laravel 10's worker asks whether the application is down.
        $app->singleton(Illuminate\Contracts\Foundation\MaintenanceMode::class, Illuminate\Foundation\FileBasedMaintenanceMode::class);
    }
    foreach ([Illuminate\Redis\RedisServiceProvider::class, Illuminate\Database\DatabaseServiceProvider::class,
              Illuminate\Queue\QueueServiceProvider::class, Illuminate\Bus\BusServiceProvider::class,
              RedisLock\Laravel\ServiceProvider::class] as $provider) {
        $app->register($provider);
    }
    $app->boot();
    Illuminate\Support\Facades\Facade::clearResolvedInstances();
    Illuminate\Support\Facades\Facade::setFacadeApplication($app);
    return $app;
}

/**
 * Counts the exceptions of a run in Redis (`bench-batches:errors`), and says
 * the first of each worker on stderr: a job that met one is retried.
 */
final class BenchExceptions implements Illuminate\Contracts\Debug\ExceptionHandler
{
    private bool $said = false;

    public function report(Throwable $e)
    {
        app('redis')->connection('default')->incr('bench-batches:errors');
        if (!$this->said && !str_contains($e->getMessage(), 'database is locked')) {
            fwrite(STDERR, get_class($e) . ': ' . substr($e->getMessage(), 0, 200) . "\n");
            $this->said = true;
        }
    }
    public function shouldReport(Throwable $e) { return true; }
    public function render($request, Throwable $e) { throw $e; }
    public function renderForConsole($output, Throwable $e) { $this->report($e); }
}

if (($argv[1] ?? '') === 'worker') {
    [, , $url, $repository, $sqlite] = $argv;
    $app = bench_app($url, $repository, $sqlite);
    $options = new Illuminate\Queue\WorkerOptions(name: 'default', backoff: 0, memory: 512, timeout: 60, sleep: 0, maxTries: 1000, stopWhenEmpty: true);
    $app['queue.worker']->daemon('redislock', 'default', $options);
    exit(0);
}

$url = ($argv[1] ?? '') ?: (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$jobs = (int) (($argv[2] ?? '') ?: 1000);
$workers = (int) (($argv[3] ?? '') ?: 8);
$so = getenv('REDISLOCK_SO');
$php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];

/** Runs the batch once on $repository: jobs/s, and the exceptions the workers met. */
function run(string $url, string $repository, int $jobs, int $workers, array $php): array
{
    $sqlite = tempnam(sys_get_temp_dir(), 'bench-batches-') . '.sqlite';
    touch($sqlite);
    $app = bench_app($url, $repository, $sqlite);
    $redis = $app['redis']->connection('default');
    $redis->flushdb();
    if ($repository === 'database') {
        // The table of Laravel's `queue:batches-table` migration.
        $app['db']->connection()->getSchemaBuilder()->create('job_batches', function ($table) {
            $table->string('id')->primary();
            $table->string('name');
            $table->integer('total_jobs');
            $table->integer('pending_jobs');
            $table->integer('failed_jobs');
            $table->text('failed_job_ids');
            $table->mediumText('options')->nullable();
            $table->integer('cancelled_at')->nullable();
            $table->integer('created_at');
            $table->integer('finished_at')->nullable();
        });
    }
    $start = microtime(true);
    $batch = Illuminate\Support\Facades\Bus::batch(array_map(fn () => new BenchBatchedJob(), range(1, $jobs)))
        ->then(BenchBatchDone::callback())->onConnection('redislock')->dispatch();
    $procs = [];
    for ($i = 0; $i < $workers; $i++) {
        $procs[] = proc_open([...$php, __FILE__, 'worker', $url, $repository, $sqlite], [1 => STDOUT, 2 => STDERR], $pipes);
    }
    foreach ($procs as $p) {
        proc_close($p);
    }
    $elapsed = microtime(true) - $start;
    $batch = $batch->fresh();
    if (!$batch->finished() || $batch->pendingJobs !== 0 || (int) $redis->get('bench-batches:then') !== 1) {
        fwrite(STDERR, "$repository: the batch did not end as it should: pending {$batch->pendingJobs}, then() ran " . (int) $redis->get('bench-batches:then') . " times\n");
        exit(1);
    }
    @unlink($sqlite);
    return [$jobs / $elapsed, (int) $redis->get('bench-batches:errors')];
}

$rows = [];
foreach (['redislock' => 'redislock `RedisLock\Laravel\BatchRepository` (Redis)', 'database' => "Laravel's `DatabaseBatchRepository` (SQLite)"] as $repository => $label) {
    $runs = [];
    for ($round = 0; $round < 3; $round++) {
        $runs[] = run($url, $repository, $jobs, $workers, $php);
    }
    sort($runs);
    $rows[$repository] = [$label, ...$runs[1]];
}
echo "### Laravel's job batches: $jobs jobs through $workers workers\n\n";
echo "Laravel's own worker (`--stop-when-empty`, tries without limit) on the redislock queue; only the batch repository differs. ";
echo "Median of 3 runs. Retried: jobs whose count failed (SQLite answers \"database is locked\" to two workers' transactions at once) and ran again.\n\n";
echo "| batches kept by | jobs/s | ratio | retried |\n|---|---:|---:|---:|\n";
foreach ($rows as [$label, $rate, $errors]) {
    printf("| %s | %.0f | %.2fx | %d |\n", $label, $rate, $rate / $rows['database'][1], $errors);
}
echo "\n";
