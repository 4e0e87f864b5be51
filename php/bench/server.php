<?php
/**
 * What the Redis server has done so far, for the benchmarks that count its
 * work between two readings: calls per command (script-internal calls
 * included: INFO commandstats) and CPU seconds (INFO cpu, user + system).
 */

/** [calls per command, CPU seconds] so far. */
function serverCost(Redis $redis): array
{
    $calls = [];
    foreach ($redis->info('commandstats') as $cmd => $line) {
        preg_match('/calls=(\d+)/', $line, $m);
        $calls[substr($cmd, strlen('cmdstat_'))] = (int) $m[1];
    }
    $cpu = $redis->info('cpu');
    return [$calls, $cpu['used_cpu_user'] + $cpu['used_cpu_sys']];
}

/** [calls per command, CPU seconds] between two serverCost() readings. */
function serverCostSince(array $before, array $after): array
{
    $calls = [];
    foreach ($after[0] as $cmd => $n) {
        $calls[$cmd] = $n - ($before[0][$cmd] ?? 0);
    }
    return [$calls, $after[1] - $before[1]];
}
