<?php

declare(strict_types=1);

namespace RedisLock\Operator;

/**
 * What the CLI and the dashboard show of the same data, decided once: the
 * words for a queue's counts, how much of a payload is shown, and which
 * leased tasks are running and which have a lease that ran out (no longer
 * their worker's: the next reserve takes them back).
 */
final class View
{
    /** A queue's counts, by Report field, as both name them (the CLI in capitals). */
    public const COUNTS = ['ready' => 'Ready', 'delayed' => 'Delayed', 'leased' => 'Running', 'dead' => 'Dead'];

    /** The bytes of a payload shown in a list (the task's own page shows all of it). */
    public const PAYLOAD_BYTES = 80;

    /** A payload in a list: its first PAYLOAD_BYTES bytes, or null for none. */
    public static function payload(?string $payload): ?string
    {
        if ($payload === null) {
            return null;
        }
        return strlen($payload) > self::PAYLOAD_BYTES ? substr($payload, 0, self::PAYLOAD_BYTES) . '...' : $payload;
    }

    /**
     * Leased tasks (Report::running()) split by their lease at `$now`:
     * `running` (lease left) and `overdue` (the lease ran out, the task
     * waits to be taken back). Each row: the task's fields, and `for`
     * (seconds since it was leased, or null), `left` (what is left of the
     * lease, or how long ago it ran out, in words), `worker` in words.
     *
     * @return array{running: list<array>, overdue: list<array>}
     */
    public static function leased(array $tasks, float $now): array
    {
        $out = ['running' => [], 'overdue' => []];
        foreach ($tasks as $t) {
            $t['for'] = $t['leasedAt'] === null ? null : max(0.0, $now - $t['leasedAt']);
            $t['left'] = Report::leaseLeft($t['until'], $now, 's');
            $t['who'] = $t['worker'] ? "{$t['worker']['host']} pid {$t['worker']['pid']}" : null;
            $out[$t['until'] > $now ? 'running' : 'overdue'][] = $t;
        }
        return $out;
    }
}
