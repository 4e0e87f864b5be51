<?php

/**
 * Semaphores and read-write locks (the permits engine), with real
 * processes counting violations: never more holders than permits, never a
 * reader beside a writer; fair waiting (a waiter wanting many permits, or a
 * writer, is not overtaken); killed holders give permits back at their
 * lease; request end gives them back at once.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class SemaphoreTest extends RedisLockTestCase
{
    private function client(): RedisLock\Client
    {
        return new RedisLock\Client(RedisServer::$main->dsn());
    }

    public function testPermitsAreCountedAndGivenBack(): void
    {
        $c = $this->client();
        $a = $c->semaphore('pool', 3);
        $b = $c->semaphore('pool', 3);
        $this->assertSame(3, $a->available());
        $this->assertTrue($a->acquire(2));
        $this->assertSame(2, $a->held());
        $this->assertSame(1, $a->available());
        $this->assertFalse($b->acquire(2), 'two do not fit in the one left');
        $this->assertSame(0, $b->held());
        $this->assertTrue($b->acquire(1));
        $this->assertSame(0, $b->available());
        $this->assertNull($a->token(), 'only a hold of all permits has a fencing token');
        $this->assertTrue($a->isHeld());
        $this->assertEqualsWithDelta(30.0, $a->remaining(), 1.0);
        $this->assertTrue($a->release());
        $this->assertFalse($a->isHeld());
        $this->assertNull($a->remaining());
        $this->assertSame(2, $a->available());
        $this->assertTrue($b->release());
        $this->assertSame([], $this->snapshot(), 'nothing left once all is given back');
        try {
            $b->release();
            $this->fail('a second release was accepted');
        } catch (RedisLock\NotHeldException $e) {
            $this->assertStringContainsString("semaphore 'pool'", $e->getMessage());
        }
    }

    public function testAHoldOfAllPermitsGetsIncreasingFencingTokens(): void
    {
        $s = $this->client()->semaphore('one', 2);
        $this->assertTrue($s->acquire(2));
        $first = $s->token();
        $this->assertIsInt($first);
        $s->release();
        $this->assertTrue($s->acquire(2));
        $this->assertGreaterThan($first, $s->token());
        try {
            $s->acquire(1);
            $this->fail('a second acquire while holding was accepted');
        } catch (RedisLock\RedisLockException $e) {
            $this->assertStringContainsString('already holds 2 permits', $e->getMessage());
        }
    }

    public function testAWaiterWantingManyIsNotOvertakenByLaterOnesWantingFew(): void
    {
        $c = $this->client();
        $holder = $c->semaphore('fair', 3);
        $this->assertTrue($holder->acquire(2));
        $big = self::start('
            $s = (new RedisLock\Client())->semaphore("fair", 3);
            echo $s->acquire(3, 20) ? "got " . $s->held() : "timeout";');
        $this->lineReaches('semaphore:{fair}:line', 1);
        $this->assertSame(1, $holder->waiting());
        $small = $c->semaphore('fair', 3);
        $this->assertFalse($small->acquire(1), 'one permit is free, but the waiter wanting three came first');
        $this->assertFalse($small->acquire(1, 0.2));
        $holder->release();
        $this->assertSame('got 3', self::finish($big));
        $this->assertSame(0, $small->waiting());
        $this->assertTrue($small->acquire(1), 'the big waiter exited: its permits were given back');
    }

    public function testAWaiterThatGivesUpLetsThoseBehindItIn(): void
    {
        $c = $this->client();
        $holder = $c->semaphore('leave', 3);
        $holder->acquire(2);
        $big = self::start('
            $s = (new RedisLock\Client())->semaphore("leave", 3);
            echo $s->acquire(3, 1.5) ? "got" : "gave up";');
        $this->lineReaches('semaphore:{leave}:line', 1);
        $small = self::start('
            $s = (new RedisLock\Client())->semaphore("leave", 3);
            echo $s->acquire(1, 20) ? "got" : "timeout";');
        $this->lineReaches('semaphore:{leave}:line', 2);
        $this->assertSame('gave up', self::finish($big));
        // The big one's leaving hands the free permit to the small one.
        $this->assertSame('got', self::finish($small));
        $holder->release();
    }

    public function testAKilledHolderGivesItsPermitsBackAtItsLease(): void
    {
        $proc = self::start('
            $s = (new RedisLock\Client())->semaphore("killed", 2, ["ttl" => 1]);
            $s->acquire(2);
            echo "held\n";
            sleep(60);');
        $line = fgets($proc[1][1]);
        $this->assertSame("held\n", $line);
        proc_terminate($proc[0], 9);
        self::finish($proc);
        $s = $this->client()->semaphore('killed', 2);
        $this->assertFalse($s->acquire(1), 'the killed holder still holds both');
        $this->assertTrue($s->acquire(2, 10), 'given back when its lease ran out');
    }

    public function testRequestEndGivesPermitsBack(): void
    {
        self::php('
            $s = (new RedisLock\Client())->semaphore("end", 2);
            $s->acquire(2);
            $GLOBALS["keep"] = $s;
            exit(0);');
        $s = $this->client()->semaphore('end', 2);
        $this->assertTrue($s->acquire(2), 'released at request end');
    }

    public function testLoweringThePermitsTakesNothingFromHolders(): void
    {
        $c = $this->client();
        $four = $c->semaphore('resize', 4);
        $this->assertTrue($four->acquire(3));
        $two = $c->semaphore('resize', 2);
        $this->assertSame(0, $two->available());
        $this->assertFalse($two->acquire(1), 'three held, two allowed: wait');
        $four->release();
        $this->assertTrue($two->acquire(2));
        $this->assertSame(2, $four->available(), 'each object counts with its own number');
    }

    public function testAutoRenewKeepsPermitsPastTheirTtl(): void
    {
        $s = $this->client()->semaphore('renewed', 1, ['ttl' => 0.3, 'autoRenew' => true]);
        $this->assertTrue($s->acquire());
        usleep(900000);
        $this->assertTrue($s->isHeld());
        $this->assertTrue($s->release());
    }

    public function testNeverMoreHoldersThanPermits(): void
    {
        $dir = sys_get_temp_dir() . '/sem' . getmypid();
        @mkdir($dir);
        $permits = 4;
        // A holder takes one of $permits slot files: if none is free, more
        // than $permits hold at once.
        $code = '
            $s = (new RedisLock\Client())->semaphore("slots", ' . $permits . ', ["ttl" => 30]);
            $violations = $turns = 0;
            for ($i = 0; $i < 25; $i++) {
                $n = 1 + ($i % 2);
                if (!$s->acquire($n, 60)) { echo "timeout\n"; continue; }
                $held = [];
                for ($slot = 0; $slot < ' . $permits . ' && count($held) < $n; $slot++) {
                    $f = fopen("' . $dir . '/$slot", "c");
                    if (flock($f, LOCK_EX | LOCK_NB)) { $held[] = $f; } else { fclose($f); }
                }
                if (count($held) < $n) { $violations++; }
                usleep(200);
                foreach ($held as $f) { flock($f, LOCK_UN); fclose($f); }
                $s->release();
                $turns++;
            }
            echo "$violations $turns\n";';
        $outs = self::phpMany(array_fill(0, 12, $code));
        array_map('unlink', glob("$dir/*"));
        rmdir($dir);
        $records = self::records($outs);
        $this->assertCount(12, $records, implode('', $outs));
        $this->assertSame(0, array_sum(array_column($records, 0)), 'more holders than permits');
        $this->assertSame(12 * 25, array_sum(array_column($records, 1)));
        $this->assertSame([], $this->snapshot());
    }

    public function testReadersShareAndWritersExclude(): void
    {
        $c = $this->client();
        $r1 = $c->readLock('doc');
        $r2 = $c->readLock('doc');
        $w = $c->writeLock('doc');
        $this->assertTrue($r1->acquire());
        $this->assertTrue($r2->acquire());
        $this->assertNull($r1->token(), 'readers have no fencing token');
        $this->assertFalse($w->acquire(0.1));
        $r1->release();
        $r2->release();
        $this->assertTrue($w->acquire());
        $first = $w->token();
        $this->assertIsInt($first);
        $this->assertFalse($r1->acquire(0.1));
        $w->release();
        $this->assertTrue($w->acquire());
        $this->assertGreaterThan($first, $w->token());
        $w->release();
        try {
            $w->release();
            $this->fail('a second release was accepted');
        } catch (RedisLock\NotHeldException $e) {
            $this->assertStringContainsString("write lock 'doc'", $e->getMessage());
        }
    }

    public function testAWaitingWriterStopsNewReaders(): void
    {
        $c = $this->client();
        $reader = $c->readLock('wiki');
        $this->assertTrue($reader->acquire());
        $writer = self::start('
            $w = (new RedisLock\Client())->writeLock("wiki");
            echo $w->acquire(20) ? "wrote " . $w->token() : "timeout";');
        $this->lineReaches('rwlock:{wiki}:line', 1);
        $late = $c->readLock('wiki');
        $this->assertFalse($late->acquire(), 'a writer waits: a new reader must not enter');
        $reader->release();
        $this->assertMatchesRegularExpression('/^wrote \d+$/', self::finish($writer));
        $this->assertTrue($late->acquire());
    }

    public function testReentrantReadAndWriteHoldsAreApart(): void
    {
        $c = $this->client();
        $r = $c->readLock('re', ['reentrant' => true]);
        $this->assertTrue($r->acquire());
        $this->assertTrue($r->acquire(), 'the process holds it: again');
        $w = $c->writeLock('re', ['reentrant' => true]);
        $this->assertFalse($w->acquire(), 'a read hold is no write hold');
        $r->release();
        $r->release();
        $this->assertTrue($w->acquire());
    }

    public function testASoleReaderIsPromotedAndAWriterDemoted(): void
    {
        $c = $this->client();
        $a = $c->readLock('promo');
        $b = $c->readLock('promo');
        $this->assertTrue($a->acquire());
        $this->assertTrue($b->acquire());
        $this->assertFalse($a->promote(), 'another reader holds it');
        $this->assertTrue($a->isHeld(), 'a refused promotion keeps the read lock');
        $this->assertNull($a->token());
        $b->release();
        $this->assertTrue($a->promote());
        $this->assertIsInt($a->token(), 'the write lock has a fencing token');
        $this->assertTrue($a->promote(), 'a write lock already');
        $this->assertFalse($b->acquire(), 'no reader beside the writer');
        $this->assertFalse($c->writeLock('promo')->acquire());
        $this->assertTrue($a->demote());
        $this->assertNull($a->token());
        $this->assertTrue($b->acquire(), 'readers beside a demoted writer');
        $this->assertTrue($a->isHeld());
        $a->release();
        $b->release();
        $this->assertSame(['rwlock:{promo}:fence'], array_keys($this->snapshot()), 'only the fencing counter outlives the holds');
    }

    public function testAPromotionDoesNotWaitForTheWriterWaitingForIt(): void
    {
        $c = $this->client();
        $reader = $c->readLock('up');
        $this->assertTrue($reader->acquire());
        $writer = self::start('
            $w = (new RedisLock\Client())->writeLock("up");
            echo $w->acquire(20) ? "wrote" : "timeout";');
        $this->lineReaches('rwlock:{up}:line', 1);
        $this->assertTrue($reader->promote(), 'the only reader: promoted ahead of the line');
        $this->assertSame(1, $this->redis->lLen('rwlock:{up}:line'), 'the writer still waits');
        $reader->release();
        $this->assertSame('wrote', self::finish($writer));
    }

    public function testADemotionLetsTheWaitingReadersIn(): void
    {
        $c = $this->client();
        $w = $c->writeLock('down');
        $this->assertTrue($w->acquire());
        $readers = [];
        for ($i = 0; $i < 3; $i++) {
            $readers[] = self::start('
                $r = (new RedisLock\Client())->readLock("down");
                echo $r->acquire(20) ? "read" : "timeout";');
        }
        $this->lineReaches('rwlock:{down}:line', 3);
        $this->assertTrue($w->demote());
        foreach ($readers as $r) {
            $this->assertSame('read', self::finish($r));
        }
        $this->assertTrue($w->isHeld());
    }

    public function testOnlyReadWriteLocksChangeHands(): void
    {
        $c = $this->client();
        $plain = $c->lock('plain');
        $plain->acquire();
        $reentrant = $c->readLock('re', ['reentrant' => true]);
        $reentrant->acquire();
        foreach ([fn () => $plain->promote(), fn () => $plain->demote(), fn () => $reentrant->promote()] as $i => $case) {
            try {
                $case();
                $this->fail("case $i was accepted");
            } catch (RedisLock\RedisLockException $e) {
                $this->assertStringContainsString('only the read and write locks of a read-write lock', $e->getMessage());
            }
        }
        $this->expectException(RedisLock\NotHeldException::class);
        $c->readLock('free')->promote();
    }

    public function testNeverAReaderBesideAWriter(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'rw');
        // Readers hold the file shared, writers exclusive, without waiting:
        // a lock refused means a reader and a writer (or two writers) at once.
        $reader = '
            $l = (new RedisLock\Client())->readLock("book");
            $v = 0;
            for ($i = 0; $i < 40; $i++) {
                if (!$l->acquire(60)) { echo "timeout\n"; continue; }
                $f = fopen("' . $file . '", "r");
                if (!flock($f, LOCK_SH | LOCK_NB)) { $v++; }
                usleep(300);
                flock($f, LOCK_UN); fclose($f);
                $l->release();
            }
            echo "$v 0\n";';
        $writer = '
            $l = (new RedisLock\Client())->writeLock("book");
            $v = 0; $last = 0; $order = 0;
            for ($i = 0; $i < 15; $i++) {
                if (!$l->acquire(60)) { echo "timeout\n"; continue; }
                if ($l->token() <= $last) { $order++; }
                $last = $l->token();
                $f = fopen("' . $file . '", "r");
                if (!flock($f, LOCK_EX | LOCK_NB)) { $v++; }
                usleep(300);
                flock($f, LOCK_UN); fclose($f);
                $l->release();
            }
            echo "$v $order\n";';
        $outs = self::phpMany(array_merge(array_fill(0, 8, $reader), array_fill(0, 2, $writer)));
        unlink($file);
        $records = self::records($outs);
        $this->assertCount(10, $records, implode('', $outs));
        $this->assertSame(0, array_sum(array_column($records, 0)), 'a reader beside a writer');
        $this->assertSame(0, array_sum(array_column($records, 1)), 'writer tokens out of order');
    }

    public function testBadInputIsRefusedAndChangesNothing(): void
    {
        $c = $this->client();
        $s = $c->semaphore('bad', 2);
        $s->acquire(1);
        $before = $this->snapshot();
        $cases = [
            fn () => $c->semaphore('bad', 0),
            fn () => $c->semaphore('bad', -1),
            fn () => $c->semaphore('bad', PHP_INT_MAX),
            fn () => $c->semaphore('bad', 1.5),
            fn () => $c->semaphore('bad', '2.5'),
            fn () => $c->semaphore('bad', 'two'),
            fn () => $c->semaphore('bad', null),
            fn () => $c->semaphore('bad', []),
            fn () => $c->semaphore('', 1),
            fn () => $c->semaphore(null, 1),
            fn () => $c->semaphore('bad', 1, ['reentrant' => true]),
            fn () => $c->semaphore('bad', 1, ['ttl' => 0]),
            fn () => $c->semaphore('bad', 1, ['ttl' => NAN]),
            fn () => $c->semaphore('bad', 1, ['ttl' => INF]),
            fn () => $c->semaphore('bad', 1, 'x'),
            fn () => $c->semaphore('bad', 2)->acquire(3),
            fn () => $c->semaphore('bad', 2)->acquire(0),
            fn () => $c->semaphore('bad', 2)->acquire(-1),
            fn () => $c->semaphore('bad', 2)->acquire(null),
            fn () => $c->semaphore('bad', 2)->acquire('1.5'),
            fn () => $c->semaphore('bad', 2)->acquire('3'),
            fn () => $c->semaphore('bad', 2)->acquire(1, -1),
            fn () => $c->semaphore('bad', 2)->acquire(1, NAN),
            fn () => $c->semaphore('bad', 2)->acquire(1, []),
            fn () => $s->extend(0),
            fn () => $s->extend(NAN),
            fn () => $s->extend(-INF),
            fn () => $c->readLock(''),
            fn () => $c->readLock([]),
            fn () => $c->writeLock('x', ['nope' => 1]),
            fn () => $c->writeLock('x', ['ttl' => -1]),
        ];
        $this->assertAllRefused($cases);
        $this->assertSame($before, $this->snapshot());
        // A number in a string counts as that number, as PHP's own int parameters take it.
        $n = $c->semaphore('numeric', '2');
        $this->assertTrue($n->acquire('2'));
        $this->assertFalse($c->semaphore('numeric', 2)->acquire());
        $n->release();
        foreach (["a\0b", "\xff\xfe", str_repeat('n', 100000)] as $name) {
            $t = $c->semaphore($name, 1);
            $this->assertTrue($t->acquire());
            $this->assertFalse($c->semaphore($name, 1)->acquire());
            $t->release();
            $w = $c->writeLock($name);
            $this->assertTrue($w->acquire());
            $w->release();
        }
        $s->release();
        // Only the fencing counters of the holds of all permits stay (an hour).
        $left = array_filter(array_keys($this->snapshot()), fn ($k) => !str_ends_with($k, '}:fence'));
        $this->assertSame([], $left);
    }
}
