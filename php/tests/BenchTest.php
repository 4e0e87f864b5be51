<?php

/**
 * The benchmarks run only under `make bench`; this keeps them from rotting
 * unseen: each must at least parse, and the handoff benchmark's contenders
 * (the frameworks' stock stores beside the adapters) must run.
 */
final class BenchTest extends PHPUnit\Framework\TestCase
{
    public function testEveryBenchmarkScriptParses(): void
    {
        $files = glob(dirname(__DIR__) . '/bench/*.php');
        $this->assertNotEmpty($files);
        foreach ($files as $file) {
            exec(escapeshellarg(PHP_BINARY) . ' -l ' . escapeshellarg($file) . ' 2>&1', $out, $code);
            $this->assertSame(0, $code, implode("\n", $out));
        }
    }

    public function testEveryHandoffContenderRunsTwoTurns(): void
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension_dir') . '/redislock.so';
        $cmd = [PHP_BINARY, '-d', "extension=$so", dirname(__DIR__) . '/bench/handoff.php', RedisServer::$main->dsn(), '2', '4'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, ['REDISLOCK_SO' => $so] + getenv());
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($proc), $out);
        // 7 contenders, each a row (a poller may see no handoff: its p50 is nan).
        $this->assertSame(7, preg_match_all('/^\| (redislock|polling|Symfony|Laravel) .*\| +\d+ \| +\d+ \|/m', $out), $out);
    }

    /**
     * Every row of the Redis CPU table runs both sides, each operation
     * doing what it says (a lock taken and freed, a task added, popped,
     * reserved and acked, a decision allowed: the bench stops at the first
     * that does not), and every reference script it names is in
     * bench/floors/ with the comment saying what it keeps and leaves out.
     */
    public function testEveryRowOfTheCpuTableRunsAgainstItsReference(): void
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension_dir') . '/redislock.so';
        $cmd = [PHP_BINARY, '-d', "extension=$so", dirname(__DIR__) . '/bench/floors.php', RedisServer::$main->dsn(), '100', '1'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($proc), $out);
        // (A sub-microsecond command can count 0 µs in commandstats: a short run's cheapest
        // reference may show none, and no ratio; the commands sent prove both sides ran.)
        preg_match_all('/^\| (.+?) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+x|n\/a \(reference under 1 µs in all\)) \| (.+?) \| ([\d.]+) \/ ([\d.]+) \|$/m', $out, $rows, PREG_SET_ORDER);
        $this->assertCount(13, $rows, $out);
        foreach ($rows as [$row, $name, $ours, $ref, $ratio, $file, $sent, $refSent]) {
            $this->assertGreaterThan(0, (float) $ours, $row);
            $this->assertSame((float) $ref > 0, str_ends_with($ratio, 'x'), $row);
            $this->assertGreaterThanOrEqual(1, (float) $sent, $row);
            $this->assertGreaterThanOrEqual(1, (float) $refSent, $row);
            if (preg_match('#\(floors/(\w+\.lua)\)#', $file, $m)) {
                $lua = file_get_contents(dirname(__DIR__, 2) . "/bench/floors/{$m[1]}");
                $this->assertStringContainsString('-- Leaves out:', $lua, $m[1]);
            }
        }
        RedisServer::$main->client()->flushAll();
    }

    /**
     * The contention table's fair queues hand the lock over in every run,
     * to every process: the guarded one (the fair queue with the line's
     * guarantees) is what the line's throughput is measured against.
     */
    public function testTheFairQueuesOfTheContentionTableHandOver(): void
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension_dir') . '/redislock.so';
        $cmd = [PHP_BINARY, '-d', "extension=$so", dirname(__DIR__) . '/bench/contention.php', RedisServer::$main->dsn(), '0.2'];
        $env = ['REDISLOCK_SO' => $so, 'CONTENTION_ONLY' => 'guarded', 'CONTENTION_N' => '2'] + getenv();
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($proc), $out);
        // Per pause: the fair queue and the guarded one, each with handoffs
        // and a most/least turns that is a number (not "starved").
        preg_match_all('/^\| (userland fair queue, direct handoff|fair queue \+ the line\'s guarantees) +\| +2 \| +(\d+) \|.*\| +([\d.]+|starved) \|$/m', $out, $rows, PREG_SET_ORDER);
        $this->assertCount(4, $rows, $out);
        foreach ($rows as [$row, , $handoffs, $spread]) {
            $this->assertGreaterThan(0, (int) $handoffs, $row);
            $this->assertNotSame('starved', $spread, $row);
        }
    }

    /**
     * The shards table (shards.php) starts its own 3-primary Cluster and
     * drains a sale at each shard count, and a queue at each partition
     * count, on it and on one server: every row is there and the rows of
     * one are the base of their ratios.
     */
    public function testTheShardsTableDrainsEverySale(): void
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension_dir') . '/redislock.so';
        $cmd = [PHP_BINARY, '-d', "extension=$so", dirname(__DIR__) . '/bench/shards.php', RedisServer::$main->dsn(), '300', '300', '1'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($proc), $out);
        preg_match_all('/^\| (\d+) \| [\d.]+ \| ([\d.]+)x \| (\d+)% \| \d+ \| [\d.]+ \| ([\d.]+)x \|$/m', $out, $rows, PREG_SET_ORDER);
        $this->assertSame(['1', '2', '4', '8', '16'], array_column($rows, 1), $out);
        $this->assertSame(['1.00', '100', '1.00'], [$rows[0][2], $rows[0][3], $rows[0][4]], $out);
        $this->assertSame([], RedisServer::$main->client()->keys('*hot[0-9]*'), 'the one-server sales are deleted');
        preg_match_all('/^\| (\d+) \| [\d.]+ \| ([\d.]+)x \| (\d+)% \| [\d.]+ \| ([\d.]+)x \|$/m', $out, $rows, PREG_SET_ORDER);
        $this->assertSame(['1', '2', '4', '8', '16'], array_column($rows, 1), 'a queue row per partition count: ' . $out);
        $this->assertSame(['1.00', '100', '1.00'], [$rows[0][2], $rows[0][3], $rows[0][4]], $out);
        $this->assertLessThan(100, (int) $rows[3][3], 'with 8 partitions more than one primary works: ' . $out);
    }

    /**
     * The batches table runs a batch through Laravel's workers on both
     * repositories, each batch ending with its then() run once (the script
     * exits 1 otherwise), and redislock's repository retries no job.
     */
    public function testTheBatchesTableEndsEachBatch(): void
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension_dir') . '/redislock.so';
        $cmd = [PHP_BINARY, '-d', "extension=$so", dirname(__DIR__) . '/bench/batches.php', RedisServer::$main->dsn(), '60', '2'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($proc), $out);
        preg_match_all('/^\| (.+?) \| \d+ \| [\d.]+x \| (\d+) \|$/m', $out, $rows, PREG_SET_ORDER);
        $this->assertCount(2, $rows, $out);
        $this->assertStringContainsString('RedisLock\Laravel\BatchRepository', $rows[0][1]);
        $this->assertSame('0', $rows[0][2], 'no job of redislock\'s repository retried: ' . $out);
    }

    /**
     * The flows table runs plain tasks and a flow's children to their end
     * (the script exits otherwise) and prints a row for each.
     */
    public function testTheFlowsTableRunsEveryTask(): void
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension_dir') . '/redislock.so';
        $cmd = [PHP_BINARY, '-d', "extension=$so", dirname(__DIR__) . '/bench/flows.php', RedisServer::$main->dsn(), '50', '10'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($proc), $out);
        preg_match_all('/^\| (plain tasks|children of a flow \(10 a parent\)) \| [\d.]+ \| ([\d.]+)x \| [\d.]+ \|$/m', $out, $rows, PREG_SET_ORDER);
        $this->assertSame(['plain tasks', 'children of a flow (10 a parent)'], array_column($rows, 1), $out);
        $this->assertSame('1.00', $rows[0][2], $out);
    }

    /**
     * Every flash-sale contender sells the whole stock, and no more: a
     * contender that reads a key nothing set stops at once, and its row
     * measures a sale that never happened (the key layout once moved the
     * stock's key away from the ceilings').
     */
    public function testEveryFlashSaleContenderSellsOut(): void
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension_dir') . '/redislock.so';
        $cmd = [PHP_BINARY, '-d', "extension=$so", dirname(__DIR__) . '/bench/primitives.php', RedisServer::$main->dsn(), '2', 'sale', '60', '4'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, ['REDISLOCK_SO' => $so] + getenv());
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($proc), $out);
        // Each row: oversold (or orders not matching sales), over limit, unsold.
        preg_match_all('/^\| (?!contender)(\w+).*\| +(\d+) \| +(\d+|-) \| +(\d+) \|$/m', $out, $rows, PREG_SET_ORDER);
        $this->assertCount(7, $rows, $out);
        foreach ($rows as [$row, $first, $wrong, $over, $unsold]) {
            $this->assertSame('0', $unsold, $row);
            $this->assertContains($over, ['0', '-'], $row);
            // The seed's userland lock may oversell: one holder can delete
            // another's lock (its value is a timestamp).
            if ($first !== 'seed') {
                $this->assertSame('0', $wrong, $row);
            }
        }
    }
}
