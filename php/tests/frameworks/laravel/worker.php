<?php
// A Laravel queue worker (Illuminate\Queue\Worker::daemon) on the redislock
// connection: php worker.php <host> <port> <retry_after> <block_for>.
// It stops on SIGTERM after its current job.

require __DIR__ . '/boot.php';

[, $host, $port, $retryAfter, $blockFor] = $argv;
$app = laravel_app($host, (int) $port, ['retry_after' => (float) $retryAfter, 'block_for' => (float) $blockFor]);
$options = new Illuminate\Queue\WorkerOptions(name: 'default', backoff: 0, memory: 512, timeout: 60, sleep: 0, maxTries: 5);
echo "working\n";
$app['queue.worker']->daemon('redislock', 'default', $options);
