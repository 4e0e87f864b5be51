<?php

/**
 * RedisLock\Stock: taken on the server in one step, with real processes
 * counting violations: never below zero, never a buyer over its limit,
 * never a unit without its order task, never twice for one idempotency key.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class StockTest extends RedisLockTestCase
{
    private function client(): RedisLock\Client
    {
        return new RedisLock\Client(RedisServer::$main->dsn());
    }

    public function testTakesDownToZeroAndNoFurther(): void
    {
        $s = $this->client()->stock('shoes');
        $this->assertFalse($s->exists());
        $this->assertFalse($s->take(), 'a stock never set is sold out');
        $this->assertTrue($s->set(3));
        $this->assertSame(3, $s->remaining());
        $this->assertSame(1, $s->take(2));
        $this->assertFalse($s->take(2), 'not enough left for two');
        $this->assertSame(0, $s->take());
        $this->assertFalse($s->take());
        $this->assertSame('0', $this->redis->get('stock:{shoes}'));
        $this->assertSame(2, $s->giveBack(2), 'a restock');
        $this->assertSame('shoes', $s->name());
        $max = 2 ** 53 - 1;
        $this->assertSame($max, $s->giveBack($max - 2), 'a restock up to 2^53-1');
        $this->assertFalse($s->giveBack(1), 'past 2^53-1 units: refused, nothing changed');
        $this->assertSame((string) $max, $this->redis->get('stock:{shoes}'));
        $this->assertSame($max - 1, $s->take(1), 'counted exactly');
    }

    public function testPerBuyerLimitCountsAcrossTakesAndGiveBacks(): void
    {
        $s = $this->client()->stock('hats', ['perBuyer' => 2]);
        $s->set(10);
        $this->assertSame(9, $s->take(1, 'ann'));
        $this->assertFalse($s->take(2, 'ann'), 'three would pass the limit of two');
        $this->assertSame(8, $s->take(1, 'ann'));
        $this->assertFalse($s->take(1, 'ann'));
        $this->assertSame(7, $s->take(1, 'ann', ['perBuyer' => 3]), 'a take may set its own limit');
        $this->assertSame(3, $s->bought('ann'));
        $this->assertFalse($s->giveBack(4, 'ann'), 'ann has only three');
        $this->assertSame(8, $s->giveBack(1, 'ann'));
        $this->assertSame(2, $s->bought('ann'));
        $this->assertSame(0, $s->bought('bob'));
        $this->assertSame(7, $s->take(1, 'bob'));
        $this->assertSame(['ann' => 2, 'bob' => 1], $s->buyers());
        // Numeric buyer ids come back as PHP keys them.
        $s->take(1, '42');
        $this->assertSame(['ann' => 2, 'bob' => 1, 42 => 1], $s->buyers());
    }

    public function testAnIdempotencyKeyTakesOnceAndAnswersTheSameAgain(): void
    {
        $s = $this->client()->stock('tickets');
        $s->set(5);
        $this->assertSame(4, $s->take(1, 'ann', ['key' => 'req-1']));
        $this->assertSame(3, $s->take(1, 'bob'));
        $this->assertSame(4, $s->take(1, 'ann', ['key' => 'req-1']), 'a retry answers what the first take did');
        $this->assertSame(3, $s->remaining());
        $this->assertSame(1, $s->bought('ann'));
        // A new sale forgets the buyers and the keys.
        $s->set(5);
        $this->assertSame([], $s->buyers());
        $this->assertSame(4, $s->take(1, 'ann', ['key' => 'req-1']));
    }

    public function testTheOrderTaskIsEnqueuedInTheSameStep(): void
    {
        $c = $this->client();
        $s = $c->stock('{sale}', ['orders' => '{sale}:orders', 'perBuyer' => 1]);
        $q = $c->queue('{sale}:orders');
        $s->set(2);
        $this->assertSame(1, $s->take(1, 'ann', ['key' => 'ann-1', 'payload' => '{"sku":1}']));
        $this->assertSame(1, $s->take(1, 'ann', ['key' => 'ann-1', 'payload' => '{"sku":1}']), 'a retry');
        $this->assertFalse($s->take(1, 'ann'), 'over the limit: no order either');
        $this->assertSame(0, $s->take(1, 'bob', ['task' => 'order-bob']));
        $this->assertFalse($s->take(1, 'cat'), 'sold out: no order either');
        $tasks = $q->reserve(10);
        $this->assertSame(['ann-1', 'order-bob'], array_map(fn ($t) => $t->id(), $tasks));
        $this->assertSame('{"sku":1}', $tasks[0]->payload());
        $this->assertNull($tasks[1]->payload());
        // An order task id already queued or leased takes nothing.
        $s->set(5);
        try {
            $s->take(1, 'dan', ['task' => 'ann-1']);
            $this->fail('a task id already leased was accepted');
        } catch (RedisLock\RedisLockException $e) {
            $this->assertStringContainsString("'ann-1' is already in queue", $e->getMessage());
        }
        $this->assertSame(5, $s->remaining());
        $this->assertSame(0, $s->bought('dan'));
    }


    public function testTheStockAndItsRecordsExpireTogether(): void
    {
        $s = $this->client()->stock('flash');
        $s->set(10, 30);
        $s->take(1, 'ann', ['key' => 'k']);
        foreach (['stock:{flash}', 'stock:{flash}:buyers', 'stock:{flash}:takes'] as $key) {
            $ttl = $this->redis->pTtl($key);
            $this->assertGreaterThan(25000, $ttl, $key);
            $this->assertLessThanOrEqual(30000, $ttl, $key);
        }
        $this->assertTrue($s->delete());
        $this->assertSame([], $this->snapshot());
        $this->assertFalse($s->delete());
        $this->assertFalse($s->giveBack(), 'no stock to give back to');
        $this->assertSame([], $this->snapshot(), 'giving back to no stock creates none');
    }

    public function testRacingBuyersWithRetriesNeverPassTheirLimit(): void
    {
        $c = $this->client();
        $s = $c->stock('{rush}', ['orders' => '{rush}:orders', 'perBuyer' => 2]);
        $s->set(150);
        $buyers = [];
        for ($b = 0; $b < 40; $b++) {
            // Every buyer tries 6 times (limit 2), each take retried once
            // with its idempotency key, as a client whose reply was lost.
            $buyers[] = '
                $s = (new RedisLock\Client())->stock("{rush}", ["orders" => "{rush}:orders", "perBuyer" => 2]);
                $got = 0;
                for ($i = 0; $i < 6; $i++) {
                    $key = "' . $b . '-$i";
                    $first = $s->take(1, "buyer' . $b . '", ["key" => $key]);
                    $again = $s->take(1, "buyer' . $b . '", ["key" => $key]);
                    if ($first !== $again) { echo "retry differs\n"; }
                    if ($first !== false) { $got++; }
                }
                echo "$got\n";';
        }
        $outs = self::phpMany($buyers);
        $got = array_map(fn ($o) => trim($o), $outs);
        foreach ($got as $g) {
            $this->assertContains($g, ['0', '1', '2'], 'a buyer over its limit, or: ' . $g);
        }
        $sold = array_sum(array_map('intval', $got));
        $this->assertSame(80, $sold, 'every buyer got its two: 80 of 150');
        $this->assertSame(70, $s->remaining());
        $this->assertSame(80, $this->redis->zCard('Queue:{rush}:orders'), 'one order task per unit taken');
        $this->assertSame(80, array_sum($s->buyers()));
    }

    public function testASellOutWithFortyBuyersNeverGoesBelowZero(): void
    {
        $c = $this->client();
        $s = $c->stock('{last}', ['orders' => '{last}:orders']);
        $s->set(25);
        $buyers = array_fill(0, 40, '
            $s = (new RedisLock\Client())->stock("{last}", ["orders" => "{last}:orders"]);
            $got = 0;
            while (($left = $s->take(1, "b" . getmypid())) !== false) { $got++; if ($left < 0) { echo "NEGATIVE\n"; } }
            echo "$got\n";');
        $outs = self::phpMany($buyers);
        $this->assertSame(25, array_sum(array_map('intval', $outs)), implode('', $outs));
        $this->assertSame('0', $this->redis->get('stock:{last}#6:{last}'), 'a name with braces is counted out after its tag (docs/keys.md)');
        $this->assertSame(25, $this->redis->zCard('Queue:{last}:orders'));
    }

    public function testBadInputIsRefusedAndChangesNothing(): void
    {
        $c = $this->client();
        $s = $c->stock('bad', ['perBuyer' => 1]);
        $s->set(5);
        $before = $this->snapshot();
        $cases = [
            fn () => $s->take(0, 'a'),
            fn () => $s->take(-1, 'a'),
            fn () => $s->take(PHP_INT_MAX, 'a'),
            fn () => $s->take(1.5, 'a'),
            fn () => $s->take(NAN, 'a'),
            fn () => $s->take('1.5', 'a'),
            fn () => $s->take('one', 'a'),
            fn () => $s->take([], 'a'),
            fn () => $s->take(null, 'a'),
            fn () => $s->take(1),
            fn () => $s->take(1, ''),
            fn () => $s->take(1, []),
            fn () => $s->take(1, 'a', ['bogus' => 1]),
            fn () => $s->take(1, 'a', ['key' => '']),
            fn () => $s->take(1, 'a', ['key' => []]),
            fn () => $s->take(1, 'a', ['perBuyer' => -1]),
            fn () => $s->take(1, 'a', ['task' => 't']),
            fn () => $s->take(1, 'a', ['payload' => 'p']),
            fn () => $s->take(1, 'a', 'options'),
            fn () => $s->set(-1),
            fn () => $s->set(1, 0),
            fn () => $s->set(1, NAN),
            fn () => $s->set(1, -INF),
            fn () => $s->set(1, INF),
            fn () => $s->giveBack(0),
            fn () => $s->giveBack(1, ''),
            fn () => $s->bought(''),
            fn () => $s->bought(null),
            fn () => $c->stock(''),
            fn () => $c->stock(null),
            fn () => $c->stock([]),
            fn () => $c->stock('x', ['perBuyer' => -1]),
            fn () => $c->stock('x', ['orders' => '']),
            fn () => $c->stock('x', ['nope' => 1]),
            fn () => $c->stock('x', ['shards' => 0]),
            fn () => $c->stock('x', ['shards' => -1]),
            fn () => $c->stock('x', ['shards' => 129]),
            fn () => $c->stock('x', ['shards' => PHP_INT_MAX]),
            fn () => $c->stock('x', ['shards' => 1.5]),
            fn () => $c->stock('x', ['shards' => NAN]),
            fn () => $c->stock('x', ['shards' => 'eight']),
            fn () => $c->stock('x', ['shards' => []]),
            fn () => $c->stock('x', ['replicas' => 1, 'orders' => 'x:orders']),
        ];
        $this->assertAllRefused($cases);
        $this->assertSame($before, $this->snapshot());
        // Names are bytes: NUL, invalid UTF-8 and long names are their own stocks.
        foreach (["a\0b", "\xff\xfe", str_repeat('n', 100000)] as $name) {
            $t = $c->stock($name);
            $t->set(1);
            $this->assertSame(0, $t->take(1, "\0buyer\xff"));
            $this->assertSame([["\0buyer\xff", 1]], array_map(null, array_keys($t->buyers()), $t->buyers()));
            $this->assertSame($name, $t->name());
            $t->delete();
        }
        $this->assertSame($before, $this->snapshot());
        // A stock key that is not a number is a server error, not a sale.
        $this->redis->set('stock:{junk}', 'abc');
        try {
            $c->stock('junk')->giveBack(1);
            $this->fail('giveBack() on a stock that is not a number');
        } catch (RedisLock\ServerException) {
        }
        $this->assertSame('abc', $this->redis->get('stock:{junk}'), 'left as it was');
        $this->expectException(RedisLock\ServerException::class);
        $c->stock('junk')->take();
    }

    /**
     * A stock in shards keeps the keys docs/keys.md shows, one set per
     * shard, and names that look like another name's shard keys are
     * stocks of their own.
     */
    public function testAShardedStockHasTheKeysOfKeysMd(): void
    {
        $c = $this->client();
        $s = $c->stock('sale43', ['shards' => 8]);
        $s->set(16);
        $this->assertSame(0, $s->take(2, 'ann'), 'the units left in the shard of ann');
        $keys = $this->redis->keys('*sale43*');
        sort($keys);
        $this->assertCount(9, $keys, 'the units of 8 shards, and the buyers of one');
        $this->assertContains('stock:{7u1}#s0/8:6:sale43', $keys, 'the first shard, as docs/keys.md shows it');
        $this->assertContains('stock:{lK4}#s7/8:6:sale43', $keys, 'the last');
        $this->assertCount(8, preg_grep('~^stock:\{[0-9A-Za-z]{1,3}\}#s[0-7]/8:6:sale43$~', $keys), 'one units key per shard');
        foreach (['stock:{7u1}#s0/8:6:sale43', '{7u1}#s0/8:6:sale43', '#s0/8:6:sale43'] as $name) {
            $t = $c->stock($name);
            $this->assertFalse($t->exists());
            $t->set(1);
            $this->assertSame(0, $t->take(1, 'x'));
            $t->delete();
        }
        $this->assertSame(14, $s->remaining());
        $this->assertTrue($s->delete());
        $this->assertSame([], $this->redis->keys('*sale43*'));
    }

    /**
     * 30 buyer processes drain a stock of 8 shards of 100 units, one unit
     * at a time: every unit sold once, none left behind in a shard nobody
     * could reach, and no buyer past its limit.
     */
    public function testRacingBuyersDrainAShardedStockExactly(): void
    {
        $s = $this->client()->stock('drain', ['shards' => 8, 'perBuyer' => 3]);
        $s->set(100);
        $buyers = [];
        for ($b = 0; $b < 30; $b++) {
            $buyers[] = '
                $s = (new RedisLock\Client())->stock("drain", ["shards" => 8, "perBuyer" => 3]);
                $got = 0;
                for ($i = 0; $i < 8; $i++) {
                    foreach (["a", "b"] as $who) {
                        if ($s->take(1, "' . $b . '$who") !== false) { $got++; }
                    }
                }
                echo "$got\n";';
        }
        $outs = self::phpMany($buyers);
        $this->assertSame(100, array_sum(array_map('intval', $outs)), implode('', $outs));
        $this->assertSame(0, $s->remaining());
        $this->assertSame(100, array_sum($s->buyers()));
        $this->assertLessThanOrEqual(3, max($s->buyers()));
    }

    /**
     * A stock in 8 shards with orders, drained by 30 racing processes: an
     * order task exists for every unit taken and for nothing else, each in
     * its buyer's shard's partition of the orders queue (where its id
     * routes too), and no unit is left stranded.
     */
    public function testAShardedStockEnqueuesAnOrderForEveryUnitTaken(): void
    {
        $open = '$s = (new RedisLock\Client())->stock("{drop}", ["shards" => 8, "orders" => "{drop}:orders", "perBuyer" => 2]);';
        $this->assertSame('ok', self::php($open . '$s->set(200); echo "ok";'));
        $outs = self::phpMany(array_fill(0, 30, $open . '
            $got = 0;
            for ($i = 0; $i < 12; $i++) {
                $left = $s->take(1, "b" . getmypid() . "-" . ($i % 6));
                if ($left !== false) { $got++; }
            }
            echo $got, "\n";'));
        $sold = array_sum(array_map('intval', $outs));
        $this->assertSame(200, $sold, implode('', $outs));
        $c = $this->client();
        $s = $c->stock('{drop}', ['shards' => 8]);
        $this->assertSame(0, $s->remaining());
        $this->assertSame(200, array_sum($s->buyers()));
        $orders = $c->queue('{drop}:orders', ['partitions' => 8]);
        $this->assertSame(200, $orders->metrics()['ready'], 'one order task per unit');
        $crc = function (string $name): int {
            $crc = 0;
            foreach (str_split($name) as $byte) {
                $crc ^= ord($byte) << 8;
                for ($i = 0; $i < 8; $i++) {
                    $crc = ($crc & 0x8000) ? (($crc << 1) ^ 0x1021) & 0xffff : ($crc << 1) & 0xffff;
                }
            }
            return $crc;
        };
        foreach ($orders->partitionMetrics() as $i => $m) {
            $key = $this->redis->keys("queue:{*}#s$i/8:13:{drop}:orders")[0] ?? null;
            $ids = $key === null ? [] : $this->redis->zRange($key, 0, -1);
            $this->assertCount($m['ready'], $ids);
            foreach ($ids as $id) {
                $this->assertSame($i, $crc($id) % 8, "order $id in partition $i: where its id routes");
            }
        }
        // Its units, its orders: every order task names a take's buyer shard.
        $this->assertCount(200, array_unique(array_column($orders->peek(1000), 'id')));
    }
}
