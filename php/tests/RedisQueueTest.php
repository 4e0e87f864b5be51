<?php

/** @group server */

#[PHPUnit\Framework\Attributes\Group('server')]
final class RedisQueueTest extends RedisLockTestCase
{
    public function testEnqueuePopAndTheSeedsShapes(): void
    {
        $q = new RedisQueue();
        $this->assertTrue($q->enqueue('jobs', 'a'));
        $this->assertTrue($q->enqueue('jobs', ['b', 'c']));
        $one = $q->pop('jobs');
        $this->assertSame(['id', 'score'], array_keys($one));
        $this->assertSame('a', $one['id']);
        $this->assertIsFloat($one['score']);
        $two = $q->pop('jobs', 5);
        $this->assertSame(['b', 'c'], array_column($two, 'id'));
        $this->assertFalse($q->pop('jobs'), 'count 1 and nothing due: false');
        $this->assertSame([], $q->pop('jobs', 3), 'count > 1 and nothing due: []');
        $this->assertFalse($q->top('jobs'));
        $this->assertSame([], $q->top('jobs', 2));
    }

    public function testIdsComeBackAsTheSeedsForeachGivesThemAndScoresAreTheServersTime(): void
    {
        $q = new RedisQueue();
        $ids = ['17', '-3', '0', '017', '+1', '-0', '1.0', '9223372036854775808', '-9223372036854775808', 'a7', ' 7'];
        $this->assertTrue($q->enqueue('ids', $ids));
        // What the seed's foreach ($array as $id => $score) makes of them.
        $expected = array_keys(array_fill_keys($ids, 1));
        $got = array_column($q->top('ids', 100), 'id');
        $byText = fn ($a, $b) => strcmp((string) $a, (string) $b);
        usort($expected, $byText);
        usort($got, $byText);
        $this->assertSame($expected, $got);
        $this->assertContains(17, $got);
        $this->assertContains('017', $got);
        $q->enqueue('n', 123);
        [$sec, $usec] = $this->redis->time();
        $task = $q->top('n');
        $this->assertSame(123, $task['id']);
        $this->assertEqualsWithDelta($sec + $usec / 1e6, $task['score'], 5.0);
        $this->assertSame($task['score'], $this->redis->zScore('Queue:n', '123'));
    }

    /** A batch's ids are read where PHP holds them: references, numbers, bytes, any keys. */
    public function testAnArrayOfIdsIsReadAsPhpHoldsIt(): void
    {
        $q = new RedisQueue();
        $ids = ["\xff\xfe" => "bin\0\xff", 'n' => 5, 2.5, 'r' => 'by-ref'];
        $ref = &$ids['r'];
        $ref = 'changed';
        $this->assertTrue($q->enqueue('kinds', $ids));
        $got = array_map('strval', array_column($q->top('kinds', 10), 'id'));
        sort($got);
        $this->assertSame(['2.5', '5', "bin\0\xff", 'changed'], $got);
        // One id that is not a scalar refuses the whole batch: nothing is queued.
        try {
            $q->enqueue('refused', ['a', ['nested'], 'b']);
            $this->fail('an array id was taken');
        } catch (TypeError $e) {
            $this->assertSame('RedisQueue::enqueue(): Argument #2 ($id) items must be of type string|int|float, array given', $e->getMessage());
        }
        $this->assertSame(0, $this->redis->exists('Queue:refused'));
    }

    public function testOneObjectKeepsTheTasksOfEachNameApart(): void
    {
        // The object keeps the keys of the last queue it used: names that
        // change from call to call, and an int name, each reach their own.
        $q = new RedisQueue();
        foreach (['a', 'b', 'a', 7, '7', 'b', 'a:b', "a\0"] as $i => $name) {
            $this->assertTrue($q->enqueue($name, "t$i"));
        }
        $ids = fn ($name) => array_column($q->top($name, 10), 'id');
        $this->assertSame(['t0', 't2'], $ids('a'));
        $this->assertSame(['t1', 't5'], $ids('b'));
        $this->assertSame(['t3', 't4'], $ids('7'));
        $this->assertSame(['t6'], $ids('a:b'));
        $this->assertSame(['t7'], $ids("a\0"));
        $this->assertSame('t0', $q->pop('a')['id']);
        $this->assertSame('t3', $q->pop(7)['id']);
        $this->assertSame(['t2'], $ids('a'));
        $this->assertSame(1, $this->redis->zCard('Queue:7'));
    }

    public function testAnIdAlreadyQueuedKeepsItsScore(): void
    {
        $q = new RedisQueue();
        $q->enqueue('d', 'x', 10, -100);
        $first = $q->top('d');
        $q->enqueue('d', 'x', 10, 0);
        $q->enqueue('d', ['x', 'y'], 10, 0);
        $this->assertSame($first['score'], $this->redis->zScore('Queue:d', 'x'));
        $this->assertSame(2, $this->redis->zCard('Queue:d'));
    }

    public function testDelayedTasksAreNotDueBeforeTheirTime(): void
    {
        $q = new RedisQueue();
        $q->enqueue('later', 'soon', 10, 0.4);
        $q->enqueue('later', 'hour', 10, 3600);
        $this->assertFalse($q->pop('later'));
        $this->assertFalse($q->top('later'));
        usleep(500000);
        $this->assertSame('soon', $q->pop('later')['id']);
        $this->assertFalse($q->pop('later'));
        $this->assertSame(1, $this->redis->zCard('Queue:later'));
    }

    public function testDequeueRemovesOnlyWithTheExactScore(): void
    {
        $q = new RedisQueue();
        $q->enqueue('s', ['a', 'b'], 10, -1.123456789);
        $tasks = $q->top('s', 2);
        $this->assertFalse($q->dequeue('s', 'a', $tasks[0]['score'] + 1e-6));
        $this->assertFalse($q->dequeue('s', 'a', $tasks[1]['score'] + 1));
        $this->assertSame(1.0, $q->dequeue('s', 'a', $tasks[0]['score']), "the score round-trips exactly; the seed's (float) delete count");
        $this->assertFalse($q->dequeue('s', 'a', $tasks[0]['score']));
        $this->assertSame(1.0, $q->dequeue('s', 'b', $tasks[1]['score']));
        $this->assertSame([], $this->snapshot());
    }

    public function testAReEnqueuedTaskIsNotDequeuedWithItsOldScore(): void
    {
        $q = new RedisQueue();
        $q->enqueue('r', 't', 10, -5);
        $old = $q->pop('r');
        $q->enqueue('r', 't', 10, -1);
        $this->assertFalse($q->dequeue('r', 't', $old['score']));
        $this->assertSame(1, $this->redis->zCard('Queue:r'));
    }

    public function testValidationIsTheSeeds(): void
    {
        $q = new RedisQueue();
        foreach ([null, '', '0', 0, false, []] as $empty) {
            $this->assertFalse($q->enqueue($empty, 'x'));
            $this->assertFalse($q->enqueue('q', $empty));
            $this->assertFalse($q->dequeue($empty, 'x', 1.5));
            $this->assertFalse($q->dequeue('q', $empty, 1.5));
            $this->assertFalse($q->dequeue('q', 'x', $empty));
            $this->assertSame([], $q->pop($empty));
            $this->assertSame([], $q->top($empty));
        }
        foreach ([0, -1, '0', null] as $bad) {
            $this->assertFalse($q->enqueue('q', 'x', $bad), 'timeout <= 0');
            $this->assertSame([], $q->pop('q', $bad), 'count <= 0');
            $this->assertSame([], $q->top('q', $bad), 'count < 1');
        }
        $this->assertSame([], $q->top('q', 0.5));
        $this->assertSame([], $this->snapshot());
    }

    public function testOldUserlandWorkersShareTheQueue(): void
    {
        $q = new RedisQueue();
        // An old producer: ZADD with the host's microtime.
        $this->redis->zAdd('Queue:shared', microtime(true) - 1, 'old');
        $q->enqueue('shared', 'new', 10, -0.5);
        // An old consumer: ZRANGEBYSCORE up to now, then ZREM.
        $due = $this->redis->zRangeByScore('Queue:shared', '-inf', (string) (microtime(true) + 1), ['withscores' => true]);
        $this->assertSame(['old', 'new'], array_keys($due));
        $this->assertSame('old', $q->pop('shared')['id']);
        $this->assertSame(1, $this->redis->zRem('Queue:shared', 'new'));
    }

    public function testConcurrentPoppersShareTheTasksWithoutDuplicates(): void
    {
        $q = new RedisQueue();
        $ids = array_map(fn ($i) => "t$i", range(1, 1000));
        $q->enqueue('c', $ids, 10, -1);
        $outs = self::phpMany(array_fill(0, 6, '
            $q = new RedisQueue(); $got = [];
            while ($batch = $q->pop("c", 7)) { foreach ($batch as $t) { $got[] = $t["id"]; } }
            echo implode(",", $got);'));
        $got = array_merge(...array_map(fn ($o) => $o === '' ? [] : explode(',', $o), $outs));
        sort($got);
        $this->assertCount(1000, $got, 'every task delivered');
        $this->assertCount(1000, array_unique($got), 'none twice');
    }
}
