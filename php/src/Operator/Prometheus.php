<?php

declare(strict_types=1);

namespace RedisLock\Operator;

/**
 * The Prometheus text exposition (format 0.0.4) of queues and locks, as
 * Report reads them: per queue, its tasks by state, the age of its oldest
 * due task, whether it is paused, its runtime and wait quantiles, and a
 * counter per event; locks held and waiters, by kind. Lock
 * names are not labels: one series per lock would grow without bound.
 */
final class Prometheus
{
    public const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

    private const EVENTS = [
        'enqueued' => 'Tasks enqueued.',
        'acked' => 'Tasks acked (finished), including the seed queue\'s pop and dequeue.',
        'nacked' => 'Tasks given back to the queue by a nack.',
        'retried' => 'Dead letters moved back to the queue.',
        'dead' => 'Tasks sent to the dead letters after their last attempt.',
        'expired' => 'Leases that ran out before an ack or nack.',
    ];

    /** How recently a worker must have been seen to count as one of a queue's workers now. */
    public const WORKER_NOW = 60;

    /** The exposition of families(). */
    public static function render(array $queues, array $locks, array $workers = []): string
    {
        $out = [];
        foreach (self::families($queues, $locks, $workers) as $name => $family) {
            $out[] = "# HELP $name " . strtr($family['help'], ['\\' => '\\\\', "\n" => '\\n']);
            $out[] = "# TYPE $name {$family['type']}";
            foreach ($family['samples'] as ['labels' => $labels, 'value' => $value]) {
                $out[] = $name . self::labels($labels) . ' ' . self::number($value);
            }
        }
        return implode("\n", $out) . "\n";
    }

    /**
     * Every metric family: name => ['type', 'help', 'samples' => list of
     * ['labels' => [name => value], 'value']]. $workers: each queue's
     * Queue::workers(), by name.
     */
    public static function families(array $queues, array $locks, array $workers = []): array
    {
        $out = [];
        $family = function (string $name, string $type, string $help, array $samples) use (&$out): void {
            $out[$name] = ['type' => $type, 'help' => $help, 'samples' => array_map(
                fn (array $sample) => ['labels' => $sample[0], 'value' => $sample[1]],
                $samples,
            )];
        };
        $tasks = $age = $paused = $throttled = $groups = $waiting = [];
        foreach ($queues as $q) {
            foreach (['ready', 'delayed', 'leased', 'dead'] as $state) {
                $tasks[] = [['queue' => $q['name'], 'state' => $state], $q[$state]];
            }
            $age[] = [['queue' => $q['name']], $q['oldestDueAge'] ?? 0];
            $paused[] = [['queue' => $q['name']], $q['paused'] === null ? 0 : 1];
            $throttled[] = [['queue' => $q['name']], $q['throttled'] === null ? 0 : max(0.0, $q['throttled'] - microtime(true))];
            $groups[] = [['queue' => $q['name']], $q['groups']];
            $waiting[] = [['queue' => $q['name']], $q['waiting'] ?? 0];
        }
        $family('redislock_queue_tasks', 'gauge', 'Tasks in a queue by state: ready (due), delayed, leased, dead.', $tasks);
        $family('redislock_queue_oldest_due_age_seconds', 'gauge', 'How long the oldest due task has waited (0: none due).', $age);
        $family('redislock_queue_paused', 'gauge', 'Whether the queue is paused (1): its workers take no new tasks.', $paused);
        $family('redislock_queue_throttled_seconds', 'gauge', 'How long the queue stays throttled (0: it is not): its workers take no new tasks meanwhile.', $throttled);
        $family('redislock_queue_groups', 'gauge', 'How many groups have tasks queued: reserve() takes their due tasks in turn.', $groups);
        $family('redislock_queue_waiting_parents', 'gauge', 'Parents of workflows waiting for their children: not reservable until they end.', $waiting);
        $parts = $kept = $bytes = [];
        foreach ($queues as $q) {
            foreach ($q['partitions'] ?? [] as $i => $m) {
                foreach (['ready', 'delayed', 'leased', 'dead'] as $state) {
                    $parts[] = [['queue' => $q['name'], 'partition' => $i, 'state' => $state], $m[$state]];
                }
            }
            if (isset($q['recentFootprint'])) {
                $kept[] = [['queue' => $q['name']], $q['recentFootprint']['kept']];
                if ($q['recentFootprint']['bytes'] !== null) {
                    $bytes[] = [['queue' => $q['name']], $q['recentFootprint']['bytes']];
                }
            }
        }
        $family('redislock_queue_partition_tasks', 'gauge', 'Tasks in each partition of a queue kept in partitions, by state (redislock_queue_tasks is their sum).', $parts);
        $family('redislock_queue_recent_records', 'gauge', 'Recent attempts the queue keeps (Queue::keepRecent() bounds them).', $kept);
        $family('redislock_queue_recent_bytes', 'gauge', 'Memory the recent attempts take in Redis (MEMORY USAGE; no sample where the server refuses it).', $bytes);
        $timings = [];
        foreach ($queues as $q) {
            foreach (['runtime', 'wait'] as $what) {
                // (None when the queue has no sample: no series.)
                foreach ($q['timings'][$what] ?? [] as $quantile => $seconds) {
                    $timings["{$what}_$quantile"][] = [['queue' => $q['name']], $seconds];
                }
            }
        }
        $over = 'of the attempts that ended in the last ' . Report::TIMINGS_OVER . ' s (of those the queue keeps; no sample: none)';
        foreach (['p50' => 'Median', 'p95' => '95th percentile'] as $quantile => $label) {
            $family("redislock_queue_runtime_{$quantile}_seconds", 'gauge', "$label runtime, reserve to ack, nack or bury, $over.", $timings["runtime_$quantile"] ?? []);
            $family("redislock_queue_wait_{$quantile}_seconds", 'gauge', "$label wait, from due to reserve, $over.", $timings["wait_$quantile"] ?? []);
        }
        $now = microtime(true);
        $active = $done = $seenAge = [];
        foreach ($queues as $q) {
            $seen = $workers[$q['name']] ?? [];
            $active[] = [['queue' => $q['name']], count(array_filter($seen, fn ($w) => $now - $w['seen'] <= self::WORKER_NOW))];
            foreach ($seen as $w) {
                $labels = ['queue' => $q['name'], 'worker' => $w['host'] === null ? $w['id'] : "{$w['host']} pid {$w['pid']}"];
                $done[] = [$labels, $w['done']];
                $seenAge[] = [$labels, round(max(0, $now - $w['seen']), 3)];
            }
        }
        $family('redislock_queue_workers', 'gauge', 'Processes seen reserving from the queue within the last ' . self::WORKER_NOW . ' s.', $active);
        $family('redislock_queue_worker_acked_total', 'counter', 'Tasks a worker acked (workers not seen for a day are forgotten).', $done);
        $family('redislock_queue_worker_seen_age_seconds', 'gauge', 'How long ago a worker last reserved from the queue.', $seenAge);
        foreach (self::EVENTS as $event => $help) {
            $family(
                "redislock_queue_{$event}_total",
                'counter',
                $help,
                array_map(fn (array $q) => [['queue' => $q['name']], $q['totals'][$event]], $queues),
            );
        }
        $held = $waiting = ['lock' => 0, 'exact' => 0, 'RedisLock' => 0, 'semaphore' => 0, 'rwlock' => 0, 'Lock_Service' => 0];
        foreach ($locks as $lock) {
            $held[$lock['kind']] += $lock['held'] ? 1 : 0;
            $waiting[$lock['kind']] += $lock['waiting'];
        }
        // `seed`: the drop-in RedisLock's kind under its old name, the
        // same counts, until the next release (CHANGELOG.md).
        $held['seed'] = $held['RedisLock'];
        $waiting['seed'] = $waiting['RedisLock'];
        $byKind = fn (array $counts) => array_map(fn ($kind) => [['kind' => $kind], $counts[$kind]], array_keys($counts));
        $family('redislock_locks_held', 'gauge', 'Locks held, by kind: lock (RedisLock\\Lock), exact (exactKey: Laravel\'s locks), RedisLock (the drop-in class), semaphore, rwlock or Lock_Service (its order locks), and seed (RedisLock\'s old name, until the next release); of the first ' . Report::METRIC_LOCKS . ' locks found.', $byKind($held));
        $family('redislock_lock_waiters', 'gauge', 'Processes waiting in the lines of locks, by kind; of the first ' . Report::METRIC_LOCKS . ' locks found.', $byKind($waiting));
        return $out;
    }

    /** Label values escaped as the format wants; bytes that are no UTF-8 become U+FFFD. */
    private static function labels(array $labels): string
    {
        $pairs = [];
        foreach ($labels as $name => $value) {
            $value = htmlspecialchars_decode(htmlspecialchars((string) $value, ENT_SUBSTITUTE | ENT_NOQUOTES, 'UTF-8'), ENT_NOQUOTES);
            $pairs[] = $name . '="' . strtr($value, ['\\' => '\\\\', '"' => '\\"', "\n" => '\\n']) . '"';
        }
        return '{' . implode(',', $pairs) . '}';
    }

    private static function number(int|float $value): string
    {
        // JSON's shortest form that reads back the same: 1.013, not 1.0129999999999999.
        return json_encode($value);
    }
}
