<?php
/**
 * Worker loops against the queues a PHP user would pick instead, one run,
 * one Redis: N worker processes (1 job at a time each) drain the same number
 * of small jobs, each taken, run (a no-op) and acknowledged:
 *
 * - redislock `RedisLock\Queue`: reserve(1) + ack() (a lease per job), and
 *   reserve(1, ..., $ack) acking the last job in the script that reserves
 *   the next (one round trip per job);
 * - Laravel's stock Redis queue, `Illuminate\Queue\RedisQueue` (Debian's
 *   Laravel, phpredis): pop() + delete(), as its worker does;
 * - BullMQ (Node, from npm: bench/bullmq), a `Worker` with concurrency 1
 *   per process, jobs removed once complete.
 *
 * Each queue is filled before its run (not timed). Jobs/s runs from the
 * common start to the last job done; Redis commands and Redis CPU per job
 * are INFO commandstats (script-internal calls included) and INFO cpu
 * deltas over the run, divided by the jobs. Each N's queues run in turns,
 * ROUNDS times, and each column is the median of the rounds (one run of a
 * row moved by 5-10% between runs of one build).
 *
 *   php -d extension=... php/bench/workers.php [redis-url] [jobs] [N,N,...] [kind,kind,...]
 */

require __DIR__ . '/server.php';
require __DIR__ . '/stats.php';

$url = ($argv[1] ?? '') ?: (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$jobs = (int) (($argv[2] ?? '') ?: 20000);
$sizes = array_map('intval', explode(',', ($argv[3] ?? '') ?: '1,8,32'));
$parts = parse_url($url);
$host = $parts['host'] ?? '127.0.0.1';
$port = (int) ($parts['port'] ?? 6379);
const QUEUE = 'bench-workers';
const KINDS = [
    'redislock' => 'redislock `RedisLock\Queue` reserve($ack)',
    'redislock-ack' => 'redislock `RedisLock\Queue` reserve + ack()',
    'laravel' => 'Laravel `Illuminate\Queue\RedisQueue` pop + delete',
    'bullmq' => 'BullMQ `Worker` (Node), concurrency 1',
];

function laravelQueue(string $host, int $port): Illuminate\Queue\RedisQueue
{
    require_once '/usr/share/php/Illuminate/autoload.php';
    $container = new Illuminate\Container\Container();
    $redis = new Illuminate\Redis\RedisManager($container, 'phpredis', ['default' => ['host' => $host, 'port' => $port]]);
    $queue = new Illuminate\Queue\RedisQueue($redis, QUEUE, 'default', 90);
    $queue->setContainer($container);
    return $queue;
}

/** Fills the queue of $kind with $jobs jobs (not timed). */
function fill(string $kind, string $url, string $host, int $port, int $jobs): void
{
    if (str_starts_with($kind, 'redislock')) {
        $queue = (new RedisLock\Client($url))->queue(QUEUE);
        for ($i = 0; $i < $jobs; $i += 1000) {
            $batch = [];
            for ($j = $i; $j < min($jobs, $i + 1000); $j++) {
                $batch["job-$j"] = '{"n":' . $j . '}';
            }
            $queue->enqueueMany($batch);
        }
    } elseif ($kind === 'laravel') {
        $queue = laravelQueue($host, $port);
        for ($j = 0; $j < $jobs; $j++) {
            // The payload Laravel's own push() writes for a job class.
            $queue->pushRaw(json_encode(['uuid' => "job-$j", 'displayName' => 'NoOp', 'job' => 'NoOp@handle',
                'maxTries' => null, 'maxExceptions' => null, 'backoff' => null, 'timeout' => null,
                'retryUntil' => null, 'data' => ['n' => $j], 'id' => "job-$j", 'attempts' => 0]));
        }
    } else {
        run(node($host, (string) $port, QUEUE, 'fill', (string) $jobs)) === 0 ?: exit("cannot fill BullMQ's queue\n");
    }
}

/** Starts a process writing to a pipe: [process, pipes]. */
function start(array $command): array
{
    $proc = proc_open($command, [1 => ['pipe', 'w']], $pipes) ?: exit("cannot start {$command[0]}\n");
    return [$proc, $pipes];
}

/** Runs a process to its end; returns its exit code. */
function run(array $command): int
{
    [$proc, $pipes] = start($command);
    stream_get_contents($pipes[1]);
    return proc_close($proc);
}

/** The command running bench/bullmq/worker.js with $args. */
function node(string ...$args): array
{
    return array_merge(['node', dirname(__DIR__, 2) . '/bench/bullmq/worker.js'], $args);
}

/** One worker process: works from $at (hrtime ns) until its queue is empty; prints JSON. */
function work(string $kind, string $url, string $host, int $port, int $at): void
{
    [$done, $last] = [0, 0];
    if (str_starts_with($kind, 'redislock')) {
        $queue = (new RedisLock\Client($url))->queue(QUEUE);
        $queue->peek(1); // connected before the start
        wait($at);
        // Waits a moment when nothing is due: at the end, the others' last jobs.
        $finished = [];
        while ($tasks = $queue->reserve(1, 30, 0.2, $finished)) {
            foreach ($tasks as $task) {
                if ($kind === 'redislock-ack') {
                    $queue->ack($task);
                }
                $done++;
                $last = hrtime(true);
            }
            $finished = $kind === 'redislock' ? $tasks : [];
        }
    } else {
        $queue = laravelQueue($host, $port);
        $queue->size();
        wait($at);
        while ($job = $queue->pop()) {
            $job->delete();
            $done++;
            $last = hrtime(true);
        }
    }
    echo json_encode(['done' => $done, 'last' => $last]), "\n";
}

function wait(int $at): void
{
    $left = $at - hrtime(true);
    if ($left > 0) {
        usleep(intdiv($left, 1000));
    }
}

if (($argv[4] ?? '') === 'worker') {
    work($argv[5], $url, $host, $port, (int) $argv[6]);
    exit(0);
}

$so = getenv('REDISLOCK_SO');
$php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];
$redis = new Redis();
$redis->connect($host, $port);
$results = [];
$kinds = array_intersect_key(KINDS, array_flip(explode(',', ($argv[4] ?? '') ?: implode(',', array_keys(KINDS)))));
const ROUNDS = 3;
$rounds = [];
foreach ($sizes as $n) {
    for ($round = 0; $round < ROUNDS; $round++) {
        foreach ($kinds as $kind => $label) {
            $redis->flushAll();
            fill($kind, $url, $host, $port, $jobs);
            // Time for N processes to start and connect (Node takes longer).
            $at = hrtime(true) + (int) (($kind === 'bullmq' ? 1.0 + 0.15 * $n : 0.5 + 0.02 * $n) * 1e9);
            $before = serverCost($redis);
            $workers = [];
            for ($i = 0; $i < $n; $i++) {
                $workers[] = start($kind === 'bullmq'
                    ? node($host, (string) $port, QUEUE, (string) $at)
                    : array_merge($php, [__FILE__, $url, (string) $jobs, '', 'worker', $kind, (string) $at]));
            }
            [$done, $last] = [0, 0];
            foreach ($workers as [$proc, $pipes]) {
                $report = json_decode(stream_get_contents($pipes[1]), true);
                proc_close($proc);
                $done += $report['done'] ?? 0;
                $last = max($last, (int) ($report['last'] ?? 0));
            }
            [$calls, $cpu] = serverCostSince($before, serverCost($redis));
            $rounds[$n][$label][] = [$done, $done / max(1e-9, ($last - $at) / 1e9),
                array_sum($calls) / max(1, $done), $cpu * 1e6 / max(1, $done)];
        }
    }
    foreach ($rounds[$n] as $label => $runs) {
        // The fewest jobs any round did (each must do them all), then the
        // medians.
        $results[] = [$label, $n, min(array_column($runs, 0)),
            ...array_map(fn ($i) => median(array_column($runs, $i)), [1, 2, 3])];
    }
}

printf("### Worker loops: %d small jobs (take, a no-op, acknowledge), N worker processes, one job at a time each; %d rounds in turns (medians)\n\n", $jobs, ROUNDS);
printf("| %-52s | %3s | %6s | %7s | %8s | %9s | %15s |\n", 'queue', 'N', 'jobs', 'jobs/s', 'vs redislock', 'cmds/job', 'Redis CPU us/job');
printf("|%s|%s|%s|%s|%s|%s|%s|\n", str_repeat('-', 54), '----:', '-------:', '--------:', '-------------:', '----------:', '-----------------:');
$ours = [];
foreach ($results as [$label, $n, $done, $rate, $cmds, $cpu]) {
    if ($label === KINDS['redislock']) {
        $ours[$n] = $rate;
    }
    printf("| %-52s | %3d | %6d | %7.0f | %11.2fx | %9.1f | %15.1f |\n", $label, $n, $done, $rate, ($ours[$n] ?? $rate) / $rate, $cmds, $cpu);
}
echo "\n";
