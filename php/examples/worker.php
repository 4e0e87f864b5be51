<?php
/**
 * A queue worker on the leased queue: reserve, work, ack; a failure gives
 * the task back with a growing delay, and after `maxAttempts` it lands in
 * the dead letters. A worker killed mid-task loses nothing: its lease runs
 * out and the task goes to the next worker.
 *
 *   php -d extension=redislock.so php/examples/worker.php [queue] [redis-url]
 *   php -d extension=redislock.so php/examples/worker.php mail --produce 20
 *
 * Stops gracefully after SIGTERM/SIGINT (with pcntl): the signal ends a
 * blocking reserve() at once (as it ends sleep()), the handler sets the
 * stop flag, and the loop ends after the tasks in hand. Or stops when the
 * queue has been empty for `WORKER_IDLE_EXIT` seconds (default: never).
 */

$name = $argv[1] ?? 'mail';
$url = ($argv[2] ?? '') !== '' && $argv[2][0] !== '-' ? $argv[2] : (getenv('REDIS_URL') ?: null);
$client = new RedisLock\Client($url);
$queue = $client->queue($name, ['lease' => 30, 'maxAttempts' => 5]);

if (in_array('--produce', $argv, true)) {
    $n = (int) ($argv[array_search('--produce', $argv, true) + 1] ?? 10);
    $tasks = [];
    for ($i = 1; $i <= $n; $i++) {
        $tasks["mail-$i"] = json_encode(['to' => "user$i@example.com", 'fail' => $i % 7 === 0]);
    }
    print_r($queue->enqueueMany($tasks));
    exit(0);
}

$stop = false;
if (function_exists('pcntl_async_signals')) {
    pcntl_async_signals(true);
    pcntl_signal(SIGTERM, function () use (&$stop) { $stop = true; });
    pcntl_signal(SIGINT, function () use (&$stop) { $stop = true; });
}
$idleExit = (float) (getenv('WORKER_IDLE_EXIT') ?: 0);
$idleSince = microtime(true);
// No limit unless idling ends the worker: a signal ends the wait anyway.
$wait = $idleExit > 0 ? $idleExit : INF;

while (!$stop) {
    // Blocks in the queue's line without polling: woken by an enqueue (one
    // worker per task), a due time, or a signal (then [] and $stop is set).
    $tasks = $queue->reserve(10, null, $wait);
    if (!$tasks) {
        if ($idleExit > 0 && microtime(true) - $idleSince > $idleExit) {
            break;
        }
        continue;
    }
    $idleSince = microtime(true);
    foreach ($tasks as $task) {
        try {
            $job = json_decode($task->payload() ?? 'null', true, 512, JSON_THROW_ON_ERROR);
            if ($job['fail'] ?? false) {
                throw new RuntimeException('the mail server said no');
            }
            // ... send the mail; for long work call $queue->extend($task) now and then
            if (!$queue->ack($task)) {
                // The lease ran out and another worker has the task now:
                // this run's effects may be duplicated (make them idempotent).
                fwrite(STDERR, "late ack of {$task->id()}\n");
            }
            echo "done {$task->id()}\n";
        } catch (Throwable $e) {
            $backoff = min(300, 2 ** $task->attempts());
            $queue->nack($task, $backoff, $e::class . ": " . $e->getMessage()); // why: find() and the dead letters show it
            echo "failed {$task->id()} (attempt {$task->attempts()}): {$e->getMessage()}\n";
        }
    }
}
$m = $queue->metrics();
printf("queue %s: %d ready, %d delayed, %d leased, %d dead\n", $name, $m['ready'], $m['delayed'], $m['leased'], $m['dead']);
