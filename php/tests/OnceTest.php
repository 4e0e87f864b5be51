<?php

use RedisLock\Client;

/**
 * Work that runs once per slot (docs/once.md): one winner per name and
 * slot across processes, slots of the server's clock, done() and the
 * record of who ran, runs that died taken over after retryAfter, records
 * forgotten after keep, and hostile input.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class OnceTest extends RedisLockTestCase
{
    public function testExactlyOneCallerRunsEachSlot(): void
    {
        // 30 processes, each trying the same 20 slots in its own order.
        $code = '$c = new RedisLock\Client();
            $slots = range(1, 20);
            shuffle($slots);
            foreach ($slots as $s) {
                $run = $c->once("nightly", "2026-11-$s");
                if ($run->won()) { echo $s, "\n"; $run->done(); }
            }';
        $won = array_map('intval', preg_split('/\s+/', trim(implode("\n", self::phpMany(array_fill(0, 30, $code))))));
        sort($won);
        $this->assertSame(range(1, 20), $won, 'every slot run, none twice');
        $state = (new Client())->once('nightly', '2026-11-7')->state();
        $this->assertSame(1, $state['runs']);
        $this->assertNotNull($state['done']);
        $this->assertGreaterThanOrEqual($state['at'], $state['done']);
    }

    public function testASlotOfTheServersClockIsOneForEveryProcess(): void
    {
        $code = '$c = new RedisLock\Client();
            $run = $c->once("tick", null, ["everySeconds" => 3600]);
            echo $run->won() ? "won" : "lost", " ", $run->slot(), "\n";';
        $lines = self::phpMany(array_fill(0, 12, $code));
        $slots = array_unique(array_map(fn ($l) => explode(' ', trim($l))[1], $lines));
        $won = array_filter($lines, fn ($l) => str_starts_with($l, 'won'));
        $this->assertCount(1, $slots, 'one slot: ' . implode('', $lines));
        $this->assertCount(1, $won);
        [$now] = $this->redis->time();
        $this->assertSame((string) (intdiv((int) $now, 3600) * 3600), reset($slots), 'named by its start on the server\'s clock');
    }

    public function testReadingASlotWithoutClaimingItAndTheServersClock(): void
    {
        $c = new Client();
        $look = $c->once('audit', 'd1', ['claim' => false]);
        $this->assertFalse($look->won());
        $this->assertSame(['slot' => 'd1', 'at' => null, 'done' => null, 'runs' => 0, 'holder' => null], $look->state());
        $this->assertFalse($look->done(), 'a slot only read is not this caller\'s to finish');
        $this->assertSame(0, $this->redis->dbSize(), 'reading wrote nothing');
        $this->assertTrue($c->once('audit', 'd1')->won(), 'and left the slot free');
        $state = $c->once('audit', 'd1', ['claim' => false])->state();
        $this->assertSame(1, $state['runs']);
        $this->assertSame(1, $c->once('audit', 'd1', ['claim' => false, 'retryAfter' => 0.001])->state()['runs'],
            'not taken over either');
        // A slot of the server's clock, named but not claimed.
        $tick = $c->once('audit', null, ['everySeconds' => 3600, 'claim' => false]);
        [$now] = $this->redis->time();
        $this->assertSame((string) (intdiv((int) $now, 3600) * 3600), $tick->slot());
        $this->assertTrue($c->once('audit', $tick->slot())->won());
        $this->assertAllRefused([
            fn () => $c->once('audit', 'd2', ['claim' => 'no']),
            fn () => $c->once('audit', 'd2', ['claim' => null]),
            fn () => $c->once('audit', 'd2', ['claim' => []]),
        ]);

        // The server's clock, to the microsecond, as TIME says it.
        [$before, $micros] = $this->redis->time();
        $time = $c->time();
        [$after, $microsAfter] = $this->redis->time();
        $this->assertGreaterThanOrEqual($before + $micros / 1e6, $time);
        $this->assertLessThanOrEqual($after + $microsAfter / 1e6, $time);
    }

    public function testDoneAndTheRecordOfWhoRan(): void
    {
        $c = new Client();
        // Another process ran it and died half way: the record says who.
        $pid = (int) self::php('$r = (new RedisLock\Client())->once("report", "q2"); echo $r->won() ? getmypid() : 0;');
        $state = $c->once('report', 'q2')->state();
        $this->assertGreaterThan(0, $pid);
        $this->assertSame($pid, $state['holder']['pid']);
        $this->assertSame('cli Standard input code', $state['holder']['process']);
        $this->assertNull($state['done'], 'it never said it was done');

        $mine = $c->once('report', 'q3');
        $theirs = $c->once('report', 'q3');
        $this->assertTrue($mine->won());
        $this->assertFalse($theirs->won());
        $this->assertNull($theirs->state()['done'], 'running: not done yet');
        $this->assertFalse($theirs->done(), 'only the runner says it is done');
        $this->assertTrue($mine->done());
        $this->assertFalse($mine->done(), 'once');
        $state = $theirs->state();
        $this->assertSame('q3', $state['slot']);
        $this->assertSame(1, $state['runs']);
        $this->assertEqualsWithDelta(microtime(true), $state['at'], 5);
        $this->assertSame(['once:{report}:s:q2', 'once:{report}:s:q3'], $this->sortedKeys());
        $this->assertEqualsWithDelta(86400000, $this->redis->pttl('once:{report}:s:q3'), 5000, 'kept a day by default');
        $none = $c->once('report', 'q4', ['keep' => 1]);
        $this->redis->del('once:{report}:s:q4');
        $this->assertSame(['slot' => 'q4', 'at' => null, 'done' => null, 'runs' => 0, 'holder' => null], $none->state());
        $this->assertFalse($none->done(), 'a forgotten run is not done by anyone');
    }

    public function testARunThatDiedIsTakenOverOnlyAfterRetryAfter(): void
    {
        $dying = self::start('$run = (new RedisLock\Client())->once("import", "batch-9", ["retryAfter" => 1]);
            echo $run->won() ? "won\n" : "lost\n";
            sleep(60);');
        usleep(300000);
        $deadline = microtime(true) + 20;
        while (!$this->redis->exists('once:{import}:s:batch-9')) {
            $this->assertLessThan($deadline, microtime(true), 'the runner never claimed its slot');
            usleep(20000);
        }
        posix_kill($dying[2], SIGKILL);
        self::finish($dying);
        $c = new Client();
        $this->assertFalse($c->once('import', 'batch-9', ['retryAfter' => 1])->won(), 'not yet: it may be running');
        $state = $c->once('import', 'batch-9')->state();
        $this->assertNull($state['done'], 'the record shows a run that did not finish');
        usleep(1100000);
        $again = $c->once('import', 'batch-9', ['retryAfter' => 1]);
        $this->assertTrue($again->won(), 'taken over');
        $this->assertSame(2, $again->state()['runs']);
        $this->assertFalse($c->once('import', 'batch-9')->won(), 'without retryAfter: never');
        $this->assertTrue($again->done());
        usleep(1100000);
        $this->assertFalse($c->once('import', 'batch-9', ['retryAfter' => 1])->won(), 'a finished run is never taken over');
    }

    public function testARunThatFailedGivesItsSlotBack(): void
    {
        $c = new Client();
        $run = $c->once('import', 'b1');
        $other = $c->once('import', 'b1');
        $this->assertFalse($other->release(), 'not its slot');
        $this->assertTrue($run->release());
        $this->assertFalse($run->release(), 'given back already');
        // (This process's description may be there: it outlives what the
        // process holds, and is written again only now and then, so whether
        // this run wrote it depends on the tests before.)
        $this->assertSame([], preg_grep('/^redislock:holder:/', $this->redis->keys('*'), PREG_GREP_INVERT), 'as if nobody had claimed it');
        $again = $c->once('import', 'b1');
        $this->assertTrue($again->won());
        $this->assertFalse($run->done(), 'the old run no longer owns it');
        $this->assertTrue($again->done());
        $this->assertFalse($again->release(), 'a finished run stays finished');
        $this->assertFalse($c->once('import', 'b1')->won());
        // Taken over after retryAfter: the old runner cannot give it back.
        $slow = $c->once('import', 'b2', ['retryAfter' => 0.05]);
        usleep(100_000);
        $this->assertTrue($c->once('import', 'b2', ['retryAfter' => 0.05])->won());
        $this->assertFalse($slow->release());
        $this->assertSame(2, $c->once('import', 'b2', ['claim' => false])->state()['runs']);
    }

    public function testRecordsAreForgottenAfterKeep(): void
    {
        $c = new Client();
        $this->assertTrue($c->once('deploy', 'v1', ['keep' => 0.3])->won());
        $this->assertFalse($c->once('deploy', 'v1', ['keep' => 0.3])->won());
        $this->assertLessThanOrEqual(300, $this->redis->pttl('once:{deploy}:s:v1'));
        $this->assertTrue($c->once('deploy', 'v2', ['keep' => 60])->won());
        usleep(400000);
        $this->assertTrue($c->once('deploy', 'v1', ['keep' => 0.3])->won(), 'the record is gone: the slot runs again');
        $this->assertFalse($c->once('deploy', 'v2', ['keep' => 60])->won(), 'each slot is kept for its own keep');
        $this->assertGreaterThan(59000, $this->redis->pttl('once:{deploy}:s:v2'));
    }

    public function testHostileNamesAndSlotsAreTheirOwnAndBadInputIsRefused(): void
    {
        $c = new Client();
        foreach (['a', 'a:slots', '{a}', 'x:dead', "n\0ul", str_repeat('n', 10000)] as $name) {
            foreach (['s', 's t', "s\0", '{s}', ':slots', '1 - 1 x', str_repeat('s', 100000)] as $slot) {
                $this->assertTrue($c->once($name, $slot)->won(), 'nothing earlier reached this one');
            }
        }
        $this->assertSame('1 - 1 x', $c->once('a', '1 - 1 x')->state()['slot']);
        $before = $this->redis->dbSize();
        $this->assertAllRefused([
            fn () => $c->once('', 's'),
            fn () => $c->once(null, 's'),
            fn () => $c->once([], 's'),
            fn () => $c->once('n', ''),
            fn () => $c->once('n', []),
            fn () => $c->once('n'),
            fn () => $c->once('n', 's', ['everySeconds' => 60]),
            fn () => $c->once('n', null, ['everySeconds' => 0]),
            fn () => $c->once('n', null, ['everySeconds' => -1]),
            fn () => $c->once('n', null, ['everySeconds' => NAN]),
            fn () => $c->once('n', null, ['everySeconds' => INF]),
            fn () => $c->once('n', 's', ['retryAfter' => 0]),
            fn () => $c->once('n', 's', ['retryAfter' => -1]),
            fn () => $c->once('n', 's', ['keep' => 0]),
            fn () => $c->once('n', 's', ['keep' => NAN]),
            fn () => $c->once('n', 's', ['nope' => 1]),
            fn () => $c->once('n', 's', 'options'),
        ]);
        $this->assertSame($before, $this->redis->dbSize());
        $this->redis->set('once:{junk}:s:s', 'not a run');
        $this->assertFalse($c->once('junk', 's')->won(), 'a key that is there is a claim');
        try {
            $c->once('junk', 's', ['retryAfter' => 1]);
            $this->fail('a record written by hand');
        } catch (RedisLock\ServerException $e) {
            $this->assertStringContainsString('once:{junk}:s:s holds "not a run", where redislock keeps a run', $e->getMessage());
        }
        $this->assertSame('not a run', $this->redis->get('once:{junk}:s:s'));
        $this->redis->hSet('once:{hash}:s:s', 'f', 'v');
        $this->expectException(RedisLock\ServerException::class);
        $c->once('hash', 's', ['retryAfter' => 1]);
    }

    public function testTheSlotClassIsNotConstructible(): void
    {
        $this->expectExceptionMessage('Cannot create RedisLock\Slot with new');
        new RedisLock\Slot();
    }

    private function sortedKeys(): array
    {
        $keys = $this->redis->keys('*');
        $keys = array_values(array_filter($keys, fn ($k) => !str_starts_with($k, 'redislock:holder:')));
        sort($keys);
        return $keys;
    }
}
