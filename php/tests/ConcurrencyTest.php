<?php

/** @group server */

#[PHPUnit\Framework\Attributes\Group('server')]
final class ConcurrencyTest extends RedisLockTestCase
{
    public function testTwentyProcessesIncrementingUnderTheLockLoseNothing(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'counter-');
        file_put_contents($file, '0');
        $worker = '
            $lock = new RedisLock(); $violations = 0;
            for ($i = 0; $i < 200; $i++) {
                if (!$lock->lock("counter", 30, 10)) { echo "timeout "; continue; }
                $n = (int) file_get_contents("' . $file . '");
                file_put_contents("' . $file . '", (string) ($n + 1));
                if (!$lock->unlock("counter")) { $violations++; }
            }
            echo $violations;';
        $outs = self::phpMany(array_fill(0, 20, $worker), [], $exits);
        $count = (int) file_get_contents($file);
        unlink($file);
        $this->assertSame(array_fill(0, 20, '0'), $outs, 'every unlock found its own token');
        $this->assertSame(array_fill(0, 20, 0), $exits);
        $this->assertSame(4000, $count);
        $this->assertSame([], $this->snapshot(), 'no lock left behind');
    }

    public function testFlashSaleSellsExactlyTheStock(): void
    {
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $cmd = [PHP_BINARY, '-n', '-d', "extension=$so", dirname(__DIR__) . '/examples/flash_sale.php', '10', '200', '--json'];
        $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, ['REDIS_URL' => RedisServer::$main->dsn()]);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($p), $out);
        $summary = json_decode($out, true);
        $this->assertSame(10, $summary['sold'], $out);
        $this->assertSame(0, $summary['stock_left']);
        $this->assertSame(0, $summary['oversold']);
        $this->assertSame(0, $summary['lost_updates']);
        $this->assertSame(0, $summary['failed_buyers']);
    }
}
