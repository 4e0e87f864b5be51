<?php

use RedisLock\Client;
use RedisLock\ConnectionException;
use RedisLock\Lock;
use RedisLock\LockLostException;
use RedisLock\NotAcquiredException;
use RedisLock\NotHeldException;
use RedisLock\RedisLockException;

/**
 * The RedisLock\ object API: Client, Lock, fencing, reentrancy, renewal.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class LockApiTest extends RedisLockTestCase
{
    private function client(): Client
    {
        return new Client(RedisServer::$main->dsn());
    }

    public function testAcquireReleaseAndTheKeyLayout(): void
    {
        $lock = $this->client()->lock('job', ['ttl' => 20]);
        $this->assertNull($lock->token());
        $this->assertNull($lock->remaining());
        $this->assertFalse($lock->isHeld());
        $this->assertTrue($lock->acquire());
        $this->assertMatchesRegularExpression('/^[0-9a-f]{32}$/', $this->redis->get('lock:{job}'));
        $this->assertGreaterThan(19000, $this->redis->pTtl('lock:{job}'));
        $this->assertIsInt($lock->token());
        $this->assertSame((string) $lock->token(), $this->redis->get('lock:{job}:fence'));
        $this->assertTrue($lock->isHeld());
        $this->assertGreaterThan(19.0, $lock->remaining());
        $this->assertLessThanOrEqual(20.0, $lock->remaining());

        $other = $this->client()->lock('job');
        $this->assertFalse($other->acquire());
        $this->assertFalse($other->isHeld());
        $this->assertNull($other->token());

        $this->assertTrue($lock->release());
        $this->assertFalse($lock->isHeld());
        $this->assertNull($lock->token());
        // Only the fence counter stays, and it expires too.
        $this->assertSame(['lock:{job}:fence'], array_keys($this->snapshot()));
        $this->assertGreaterThan(0, $this->redis->pTtl('lock:{job}:fence'));
        $this->assertTrue($other->acquire());
    }

    public function testClientConfigurationAndLockOptions(): void
    {
        $dsn = RedisServer::$main->dsn();
        foreach ([null, $dsn, ['dsn' => $dsn, 'prefix' => 'app:']] as $param) {
            $lock = (new Client($param))->lock('c');
            $this->assertTrue($lock->acquire(), var_export($param, true));
            $this->assertTrue($lock->release());
        }
        $this->assertTrue((new Client(['dsn' => $dsn, 'prefix' => 'app:']))->lock('p')->acquire());
        $this->assertFalse((bool) $this->redis->exists('app:lock:{p}'), 'released when the object went away');
        $this->assertTrue((bool) $this->redis->exists('app:lock:{p}:fence'));

        $cases = [
            [['ttl' => 0], ValueError::class, "option 'ttl'"],
            [['ttl' => -1], ValueError::class, "option 'ttl'"],
            [['ttl' => NAN], ValueError::class, "option 'ttl'"],
            [['ttl' => 'soon'], TypeError::class, "option 'ttl'"],
            [['maxHold' => 0], ValueError::class, "option 'maxHold'"],
            [['reentrant' => 'yes'], TypeError::class, "option 'reentrant'"],
            [['autoRenew' => 1], TypeError::class, "option 'autoRenew'"],
            [['tll' => 5], ValueError::class, "unknown option 'tll'"],
        ];
        foreach ($cases as [$options, $class, $message]) {
            try {
                $this->client()->lock('o', $options);
                $this->fail('accepted ' . var_export($options, true));
            } catch (TypeError | ValueError $e) {
                $this->assertInstanceOf($class, $e);
                $this->assertStringContainsString($message, $e->getMessage());
            }
        }
        $this->expectException(ValueError::class);
        $this->client()->lock('');
    }

    public function testALockIsObtainedFromAClientOnly(): void
    {
        $this->expectException(Error::class);
        $this->expectExceptionMessage('Cannot create RedisLock\Lock with new: call $client->lock($name) on a RedisLock\Client');
        new Lock('x');
    }

    /**
     * var_dump() and print_r() show what the object knows without a round
     * trip: a lock's name and fencing token (not its owner token, which
     * speaks for the holder), a queue's name, a task's queue, id, payload
     * and attempts; a MultiLock's names and tokens, a semaphore's name,
     * permits, how many it holds and its token, a stock's name; a client's
     * server, database and prefix, a Redlock's name and nodes (never a
     * password).
     */
    /**
     * Objects made without their constructor (a subclass whose constructor
     * does not call parent::__construct(), or reflection's
     * newInstanceWithoutConstructor()) dump as empty objects, and each of
     * the extension's methods throws an Error that names
     * parent::__construct(); the subclass's own methods run. var_dump()
     * of one was an uncatchable fatal error.
     */
    public function testObjectsMadeWithoutTheirConstructorDumpEmptyAndSayWhy(): void
    {
        $sub = new class () extends RedisLock\Client {
            public function __construct()
            {
            }

            public function mine(): string
            {
                return 'mine';
            }
        };
        $objects = ['subclass' => [$sub, 'lock', ['x']]];
        $calls = ['RedisLock\Lock' => ['acquire', []], 'RedisLock\Queue' => ['enqueue', ['i', 'p']], 'RedisLock\Task' => ['payload', []],
                  'RedisLock\Stock' => ['take', [1]], 'RedisLock\Semaphore' => ['acquire', []], 'RedisLock\MultiLock' => ['acquire', []],
                  'RedisLock\Redlock' => ['acquire', []], 'RedisLock\Client' => ['queue', ['q']], 'RedisLock' => ['lock', ['x']],
                  'RedisQueue' => ['enqueue', ['q', 1]]];
        foreach ($calls as $class => [$method, $args]) {
            $objects[$class] = [(new ReflectionClass($class))->newInstanceWithoutConstructor(), $method, $args];
        }
        foreach ($objects as $what => [$object, $method, $args]) {
            $this->assertSame([], get_mangled_object_vars($object), $what);
            ob_start();
            var_dump($object);
            print_r($object);
            $dump = ob_get_clean();
            $this->assertMatchesRegularExpression('/^object\(.+\)#\d+ \(0\) \{\n\}\n.+ Object\n\(\n\)\n$/', $dump, $what);
            try {
                $object->$method(...$args);
                $this->fail("$what: $method() ran");
            } catch (Error $e) {
                $this->assertStringContainsString("::$method(): the object was not constructed", $e->getMessage(), $what);
                $this->assertStringContainsString('parent::__construct()', $e->getMessage(), $what);
            }
        }
        $this->assertSame('mine', $sub->mine(), 'the subclass\'s own methods run');
        $this->assertSame([], $this->snapshot(), 'nothing written');
    }

    public function testVarDumpShowsWhatTheObjectKnows(): void
    {
        $c = new Client();
        $lock = $c->lock("orders:\0x", ['owner' => 'owner-secret-123']);
        $this->assertSame(['name' => "orders:\0x", 'token' => null], $lock->__debugInfo());
        $lock->acquire();
        $this->assertSame(['name' => "orders:\0x", 'token' => $lock->token()], $lock->__debugInfo());
        ob_start();
        var_dump($lock);
        $dump = ob_get_clean();
        $this->assertStringContainsString('["token"]=>' . "\n  int(" . $lock->token() . ')', $dump);
        $this->assertStringNotContainsString('owner-secret-123', $dump . print_r($lock, true));
        $lock->release();

        $queue = $c->queue('mail');
        $queue->enqueue('welcome:42', '{"to":"ann"}');
        $this->assertSame(['name' => 'mail'], $queue->__debugInfo());
        [$task] = $queue->reserve();
        $this->assertSame(['queue' => 'mail', 'id' => 'welcome:42', 'payload' => '{"to":"ann"}', 'attempts' => 1], $task->__debugInfo());
        $this->assertStringContainsString('[payload] => {"to":"ann"}', print_r($task, true));
        $queue->ack($task);

        $many = $c->lockMany(['b', 'a']);
        $many->acquire();
        $this->assertSame(['names' => $many->names(), 'tokens' => $many->tokens()], $many->__debugInfo());
        $this->assertCount(2, $many->__debugInfo()['tokens']);
        $sem = $c->semaphore('pool', 3);
        $sem->acquire(2);
        $this->assertSame(['name' => 'pool', 'permits' => 3, 'held' => 2, 'token' => null], $sem->__debugInfo());
        $this->assertSame(['name' => 'sale'], $c->stock('sale')->__debugInfo());

        // A client and a Redlock: their servers, never a password.
        $server = parse_url(RedisServer::$main->dsn());
        $at = "{$server['host']}:{$server['port']}";
        $secret = new Client("redis://:pass-secret-9@$at/2?prefix=app:");
        $this->assertSame(['server' => $at, 'database' => 2, 'prefix' => 'app:'], $secret->__debugInfo());
        $redlock = new RedisLock\Redlock('r', ['nodes' => ["redis://:pass-secret-9@$at", 'redis://127.0.0.1:1']]);
        $this->assertSame(['name' => 'r', 'nodes' => [$at, '127.0.0.1:1']], $redlock->__debugInfo());
        $this->assertStringNotContainsString('pass-secret-9', print_r($secret, true) . print_r($redlock, true));
    }

    public function testTheExceptionHierarchy(): void
    {
        foreach ([ConnectionException::class, LockLostException::class, NotHeldException::class,
                  NotAcquiredException::class] as $class) {
            $this->assertTrue(is_subclass_of($class, RedisLockException::class), $class);
        }
        $this->assertTrue(is_subclass_of(RedisLockException::class, RuntimeException::class));
        $lock = (new Client(['host' => '127.0.0.1', 'port' => 1, 'timeout' => 0.2]))->lock('down');
        try {
            $lock->acquire();
            $this->fail('no exception');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('127.0.0.1:1', $e->getMessage());
        }
        $this->assertFalse($lock->isHeld());
    }

    public function testReleaseAndExtendOfALockNotHeldThrowNotHeld(): void
    {
        $lock = $this->client()->lock('n');
        foreach (['release', 'extend'] as $method) {
            try {
                $lock->$method();
                $this->fail("$method of a lock not held");
            } catch (NotHeldException $e) {
                $this->assertStringContainsString("lock 'n'", $e->getMessage());
            }
        }
        $this->assertSame([], $this->snapshot());
    }

    public function testALeaseThatRanOutIsReportedLost(): void
    {
        $lock = $this->client()->lock('short', ['ttl' => 0.1]);
        $this->assertTrue($lock->acquire());
        usleep(200000);
        $this->assertFalse($lock->isHeld());
        $this->assertNull($lock->remaining());
        $this->assertTrue($this->client()->lock('short')->acquire(), 'free again');
        try {
            $lock->extend();
            $this->fail('extend of a lost lock');
        } catch (LockLostException $e) {
            $this->assertStringContainsString('lease ran out', $e->getMessage());
        }
        $this->expectException(LockLostException::class);
        $lock->release();
    }

    public function testExtendSetsANewLease(): void
    {
        $lock = $this->client()->lock('e', ['ttl' => 2]);
        $this->assertTrue($lock->acquire());
        $this->assertTrue($lock->extend(60));
        $this->assertGreaterThan(59000, $this->redis->pTtl('lock:{e}'));
        $this->assertTrue($lock->extend());
        $this->assertLessThanOrEqual(2000, $this->redis->pTtl('lock:{e}'));
        foreach ([0, -1, NAN, INF] as $bad) {
            try {
                $lock->extend($bad);
                $this->fail("extend($bad)");
            } catch (ValueError) {
            }
        }
        $this->assertLessThanOrEqual(2000, $this->redis->pTtl('lock:{e}'));
    }

    public function testAWaiterGivesUpAtItsWaitWellBeforeTheHoldersLeaseEnds(): void
    {
        $holder = $this->client()->lock('busy', ['ttl' => 10]);
        $this->assertTrue($holder->acquire());
        $t = microtime(true);
        $this->assertFalse($this->client()->lock('busy')->acquire(0.3));
        $elapsed = microtime(true) - $t;
        $this->assertGreaterThanOrEqual(0.29, $elapsed);
        $this->assertLessThan(10, $elapsed, 'gave up before the lease could have run out');
        $this->assertTrue($holder->isHeld());
    }

    public function testAWaiterIsHandedTheLockOnReleaseAndOnExpiry(): void
    {
        // The holder runs in another process and releases after 300 ms; the
        // waiter's wait (20 s) and the lease (10 s) are both far longer.
        $p = proc_open(self::command('
            $l = (new RedisLock\Client())->lock("handoff", ["ttl" => 10]);
            $l->acquire(); echo "held\n"; usleep(300000); $l->release();'), [1 => ['pipe', 'w']], $pipes);
        $this->assertSame("held\n", fgets($pipes[1]));
        $t = microtime(true);
        $lock = $this->client()->lock('handoff');
        $this->assertTrue($lock->acquire(20));
        $this->assertLessThan(10, microtime(true) - $t, 'handed over on release, not at lease end');
        proc_close($p);
        $this->assertTrue($lock->release());

        // A holder that died: its key just runs out, with no release message.
        $this->redis->set('lock:{expiring}', 'dead holder', ['px' => 300]);
        $t = microtime(true);
        $this->assertTrue($this->client()->lock('expiring')->acquire(20), 'woken when the lease ran out');
        $this->assertLessThan(10, microtime(true) - $t);
    }

    public function testAStormOfFiftyWaitersLeavesNoKeysBehind(): void
    {
        $code = '
            $l = (new RedisLock\Client())->lock("storm", ["ttl" => 10]);
            if (!$l->acquire(60)) { exit(3); }
            $in = fopen(getenv("INSIDE"), "c+"); 
            if (!flock($in, LOCK_EX | LOCK_NB)) { echo "overlap"; }
            usleep(2000);
            flock($in, LOCK_UN);
            $l->release(); echo "ok";';
        $inside = tempnam(sys_get_temp_dir(), 'storm');
        putenv("INSIDE=$inside");
        $outs = self::phpMany(array_fill(0, 50, $code), [], $exits);
        unlink($inside);
        $this->assertSame(array_fill(0, 50, 'ok'), $outs);
        $this->assertSame(array_fill(0, 50, 0), $exits);
        $this->assertSame(['lock:{storm}:fence'], array_keys($this->snapshot()));
        $this->assertGreaterThan(0, $this->redis->pTtl('lock:{storm}:fence'));
        $this->assertSame(0, $this->redis->pubsub('numsub', ['lock:{storm}'])['lock:{storm}']);
    }

    public function testFencingTokensOrderTheSectionsOfTwentyProcesses(): void
    {
        $code = '
            $l = (new RedisLock\Client())->lock("fenced", ["ttl" => 10]);
            for ($i = 0; $i < 10; $i++) {
                if (!$l->acquire(60)) { exit(3); }
                $enter = hrtime(true); usleep(300); $exit = hrtime(true);
                echo $l->token(), " $enter $exit\n";
                $l->release();
            }';
        $outs = self::phpMany(array_fill(0, 20, $code), [], $exits);
        $this->assertSame(array_fill(0, 20, 0), $exits, implode("\n", $outs));
        $history = self::records($outs);
        $this->assertCount(200, $history);
        $violations = 0;
        for ($i = 1; $i < count($history); $i++) {
            // Strictly increasing tokens, and each section ends before the
            // next one (in token order) begins.
            if ($history[$i][0] <= $history[$i - 1][0] || $history[$i][1] < $history[$i - 1][2]) {
                $violations++;
            }
        }
        $this->assertSame(0, $violations);
    }

    public function testReentrantHoldsAreCountedPerProcess(): void
    {
        $client = $this->client();
        $outer = $client->lock('re', ['reentrant' => true]);
        $this->assertTrue($outer->acquire());
        $token = $outer->token();
        $this->assertTrue($outer->acquire(), 'again through the same object');
        $inner = $client->lock('re', ['reentrant' => true]);
        $this->assertTrue($inner->acquire(), 'and through another object of the process');
        $this->assertSame($token, $inner->token(), 'one hold, one fencing token');
        $this->assertFalse($this->client()->lock('re')->acquire(), 'a non-reentrant lock is another owner');
        $this->assertFalse((bool) self::php('echo (new RedisLock\Client())->lock("re", ["reentrant" => true])->acquire() ? 1 : 0;'),
            'another process is another owner');

        $this->assertTrue($inner->release());
        $this->assertTrue($outer->release());
        $this->assertTrue($outer->isHeld(), 'one hold left');
        $this->assertTrue($outer->release());
        $this->assertFalse((bool) $this->redis->exists('lock:{re}'), 'the last release frees it');
        $this->expectException(NotHeldException::class);
        $outer->release();
    }

    public function testANonReentrantLockCannotBeAcquiredTwiceByOneObject(): void
    {
        $lock = $this->client()->lock('once');
        $this->assertTrue($lock->acquire());
        try {
            $lock->acquire();
            $this->fail('acquired twice');
        } catch (RedisLockException $e) {
            $this->assertStringContainsString("'reentrant' => true", $e->getMessage());
        }
        $this->assertTrue($lock->isHeld());
    }

    public function testAutoRenewKeepsAOneSecondLeaseForFiveSecondsThenStopsAtRelease(): void
    {
        $lock = $this->client()->lock('renewed', ['ttl' => 1, 'autoRenew' => true]);
        $this->assertTrue($lock->acquire());
        $token = $this->redis->get('lock:{renewed}');
        for ($i = 0; $i < 10; $i++) {
            usleep(500000);
            $this->assertSame($token, $this->redis->get('lock:{renewed}'), "still held after " . (($i + 1) / 2) . " s");
            $this->assertLessThanOrEqual(1000, $this->redis->pTtl('lock:{renewed}'));
        }
        $this->assertTrue($lock->isHeld());
        $this->assertTrue($lock->release());
        $this->assertFalse((bool) $this->redis->exists('lock:{renewed}'));
        usleep(500000);
        $this->assertFalse((bool) $this->redis->exists('lock:{renewed}'), 'no renewal after release');
    }

    public function testAutoRenewStopsAtTheMaximumHoldTime(): void
    {
        $lock = $this->client()->lock('capped', ['ttl' => 0.3, 'autoRenew' => true, 'maxHold' => 0.8]);
        $this->assertTrue($lock->acquire());
        usleep(500000);
        $this->assertTrue($lock->isHeld(), 'renewed past its ttl');
        usleep(600000);
        $this->assertFalse($lock->isHeld());
        $this->assertFalse((bool) $this->redis->exists('lock:{capped}'));
        try {
            $lock->release();
            $this->fail('released a lock past its maximum hold time');
        } catch (LockLostException $e) {
            $this->assertStringContainsString('maximum hold time', $e->getMessage());
        }
    }

    public function testARenewedLockDeletedBehindItsBackIsReportedLost(): void
    {
        $lock = $this->client()->lock('stolen', ['ttl' => 0.6, 'autoRenew' => true]);
        $this->assertTrue($lock->acquire());
        $this->redis->del('lock:{stolen}');
        $this->assertFalse($lock->isHeld(), 'seen at once');
        usleep(400000);
        try {
            $lock->release();
            $this->fail('released a stolen lock');
        } catch (LockLostException $e) {
            $this->assertStringContainsString('deleted', $e->getMessage());
        }
    }

    public function testSynchronizedReleasesAfterReturnAndAfterThrow(): void
    {
        $lock = $this->client()->lock('sync');
        $this->assertSame(42, $lock->synchronized(function () use ($lock) {
            $this->assertTrue($lock->isHeld());
            return 42;
        }));
        $this->assertFalse((bool) $this->redis->exists('lock:{sync}'));
        try {
            $lock->synchronized(function () { throw new DomainException('boom'); });
            $this->fail('no exception');
        } catch (DomainException $e) {
            $this->assertSame('boom', $e->getMessage());
        }
        $this->assertFalse((bool) $this->redis->exists('lock:{sync}'), 'released after the throw');

        $holder = $this->client()->lock('sync');
        $holder->acquire();
        try {
            $lock->synchronized(fn () => $this->fail('ran without the lock'), 0.1);
            $this->fail('no exception');
        } catch (NotAcquiredException $e) {
            $this->assertStringContainsString("lock 'sync'", $e->getMessage());
        }
        $holder->release();

        $this->expectException(LockLostException::class);
        $lock->synchronized(fn () => $this->redis->del('lock:{sync}'));
    }

    public function testSynchronizedWantsACallable(): void
    {
        $this->expectException(TypeError::class);
        $this->client()->lock('cb')->synchronized('no such function');
    }

    public static function requestEnds(): array
    {
        return [
            'fatal error' => ['undefined_function();'],
            'exit()' => ['exit(0);'],
            'uncaught exception' => ['throw new Exception("x");'],
            'max_execution_time' => ['set_time_limit(1); while (true) {}'],
        ];
    }

    /** @dataProvider requestEnds */

    #[PHPUnit\Framework\Attributes\DataProvider('requestEnds')]
    public function testLocksStillHeldAtRequestEndAreReleased(string $end): void
    {
        $out = self::php('
            $c = new RedisLock\Client();
            $GLOBALS["a"] = $c->lock("end-a", ["ttl" => 60]); $GLOBALS["a"]->acquire();
            $GLOBALS["b"] = $c->lock("end-b", ["ttl" => 60, "autoRenew" => true, "reentrant" => true]);
            $GLOBALS["b"]->acquire(); $GLOBALS["b"]->acquire();
            echo "held "; ' . $end);
        $this->assertStringStartsWith('held', $out);
        $this->assertFalse((bool) $this->redis->exists('lock:{end-a}'), $out);
        $this->assertFalse((bool) $this->redis->exists('lock:{end-b}'), $out);
    }

    public function testALockOptedOutOutlivesItsObjectAndRequest(): void
    {
        $out = self::php('
            $c = new RedisLock\Client();
            $kept = $c->lock("kept", ["ttl" => 60, "releaseAtRequestEnd" => false, "autoRenew" => true]);
            $kept->acquire();
            $gone = $c->lock("gone", ["ttl" => 60]);
            $gone->acquire();
            $dropped = $c->writeLock("kept-rw", ["ttl" => 60, "releaseAtRequestEnd" => false]);
            $dropped->acquire();
            unset($dropped);
            echo "held";');
        $this->assertSame('held', $out);
        $this->assertFalse((bool) $this->redis->exists('lock:{gone}'));
        $this->assertTrue((bool) $this->redis->exists('lock:{kept}'), 'released at request end');
        $this->assertGreaterThan(50000, $this->redis->pTtl('lock:{kept}'), 'the lease it had');
        $this->assertSame(1, $this->redis->zCard('rwlock:{kept-rw}'), 'released with its object');
        $this->assertAllRefused([
            fn () => $this->client()->lock('x', ['releaseAtRequestEnd' => 'maybe']),
            fn () => $this->client()->lock('x', ['releaseAtRequestEnd' => []]),
        ]);
    }

    public function testAnOwnerSpeaksForTheLockFromAnyObjectOrProcess(): void
    {
        $a = $this->client()->lock('owned', ['owner' => 'job:7', 'ttl' => 60]);
        $this->assertSame('job:7', $a->owner());
        $this->assertTrue($a->acquire());
        $this->assertNotNull($a->token());
        $this->assertSame('%6a6f623a37', $this->redis->get('lock:{owned}'), 'an owner with ":" is stored escaped');
        $b = $this->client()->lock('owned', ['owner' => 'job:7']);
        $this->assertTrue($b->isHeld(), 'same owner, another object');
        $this->assertNull($b->token(), 'it did not take it: no fencing token');
        $this->assertTrue($b->extend(90));
        $this->assertEqualsWithDelta(90.0, $a->remaining(), 1.0);
        $this->assertFalse($this->client()->lock('owned', ['owner' => 'job:8'])->isHeld());
        $this->assertSame('1', self::php('echo (int) (new RedisLock\Client())->lock("owned", ["owner" => "job:7"])->release();'));
        $this->assertFalse($a->isHeld());
        foreach ([fn () => $b->release(), fn () => $b->extend()] as $call) {
            try {
                $call();
                $this->fail('a released owner still held');
            } catch (NotHeldException) {
            }
        }
        $this->expectException(LockLostException::class);
        $a->release();
    }

    public function testWithoutOwnerTheOwnerIsTheTokenOfTheHold(): void
    {
        $lock = $this->client()->lock('tok');
        $this->assertNull($lock->owner());
        $this->assertTrue($lock->acquire());
        $this->assertSame($this->redis->get('lock:{tok}'), $lock->owner());
        $restored = $this->client()->lock('tok', ['owner' => $lock->owner()]);
        $this->assertTrue($restored->release());
        $this->assertFalse($this->redis->get('lock:{tok}'));
    }

    public function testALockWithoutExpiryIsHandedOverAndExtendedWithoutOne(): void
    {
        $forever = ['ttl' => INF];
        $a = $this->client()->lock('forever', $forever);
        $this->assertTrue($a->acquire());
        $this->assertSame(-1, $this->redis->pTtl('lock:{forever}'));
        $this->assertSame(INF, $a->remaining());
        $this->assertTrue($a->extend(5));
        $this->assertGreaterThan(0, $this->redis->pTtl('lock:{forever}'));
        $this->assertTrue($a->extend());
        $this->assertSame(-1, $this->redis->pTtl('lock:{forever}'), 'extend() without ttl: no expiry again');
        $waiter = self::start('
            $l = (new RedisLock\Client())->lock("forever", ["ttl" => INF, "releaseAtRequestEnd" => false]);
            echo $l->acquire(20) ? "acquired" : "refused";');
        $this->lineReaches('lock:{forever}:line', 1);
        $this->assertTrue($a->release());
        $this->assertSame('acquired', self::finish($waiter));
        $this->assertSame(-1, $this->redis->pTtl('lock:{forever}'), 'handed over without expiry');
        $this->assertAllRefused([
            fn () => $this->client()->lock('x', ['ttl' => INF, 'autoRenew' => true]),
            fn () => $this->client()->lock('x', ['ttl' => -INF]),
            fn () => $this->client()->lockMany(['x'], ['ttl' => INF]),
            fn () => $this->client()->writeLock('x', ['ttl' => INF]),
            fn () => $this->client()->semaphore('x', 2, ['ttl' => INF]),
        ]);
    }

    public function testForceReleaseHandsTheLockToTheNextInLine(): void
    {
        $holder = $this->client()->lock('forced', ['ttl' => 60, 'autoRenew' => true]);
        $this->assertTrue($holder->acquire());
        $waiter = self::start('
            $l = (new RedisLock\Client())->lock("forced");
            echo $l->acquire(20) ? "acquired" : "refused";');
        $this->lineReaches('lock:{forced}:line', 1);
        $this->assertTrue($this->client()->lock('forced')->forceRelease());
        $this->assertSame('acquired', self::finish($waiter));
        $this->assertFalse($holder->isHeld());
        $this->assertFalse($this->client()->lock('forced')->forceRelease(), 'nothing held any more');
        $this->assertTrue($holder->acquire());
        $this->assertTrue($holder->forceRelease(), 'its own hold');
        try {
            $holder->release();
            $this->fail('released a lock released by force');
        } catch (NotHeldException) {
        }
        $this->expectException(RedisLockException::class);
        $this->client()->readLock('forced')->forceRelease();
    }

    public function testOwnerOptionsAreChecked(): void
    {
        $this->assertAllRefused([
            fn () => $this->client()->lock('x', ['owner' => '']),
            fn () => $this->client()->lock('x', ['owner' => str_repeat('o', 1025)]),
            fn () => $this->client()->lock('x', ['owner' => []]),
            fn () => $this->client()->lock('x', ['owner' => 'a', 'reentrant' => true]),
            fn () => $this->client()->readLock('x', ['owner' => 'a']),
            fn () => $this->client()->semaphore('x', 2, ['owner' => 'a']),
        ]);
        $this->assertTrue($this->client()->lock('x', ['owner' => str_repeat('o', 1024)])->acquire());
    }

    /**
     * An `exactKey` name is a key as is, but never one redislock keeps for
     * another name: the Symfony-format read lock on `rwlock:{x}` was
     * granted while `writeLock('x')` held (its key is `rwlock:{x}`). Every
     * kept key is refused, clearly, before anything changes; other keys
     * (Laravel's, a tenant's hash tag) are taken as named.
     */
    public function testAnExactKeyNeverNamesAKeyRedislockKeeps(): void
    {
        $c = new Client();
        $writer = $c->writeLock('x');
        $this->assertTrue($writer->acquire());
        $c->queue('mail')->enqueue('t');
        $before = $this->redis->keys('*');
        foreach (['rwlock:{x}', 'rwlock:{x}:permits', 'lock:{x}', 'semaphore:{s}', 'stock:{s}', 'exactrwlock:{y}:line',
                  'Queue:mail', '{Queue:mail}:dead', '{shop}#Queue:4:mail:dead', 'Lock:x', 'order_lock_7', 'lock_unique_id',
                  'redislock:queues'] as $key) {
            foreach (['lock', 'readLock', 'writeLock'] as $method) {
                try {
                    $c->$method($key, ['exactKey' => true])->acquire();
                    $this->fail("$method($key) with exactKey was taken");
                } catch (\ValueError $e) {
                    $this->assertStringContainsString("Argument #1 (\$name) with exactKey names the key '$key', which redislock keeps for another name", $e->getMessage());
                }
            }
        }
        $this->assertEqualsCanonicalizing($before, $this->redis->keys('*'), 'nothing changed');
        $this->assertTrue($writer->isHeld());
        foreach (['laravel_cache:x', '{tenant}:job', 'rwlock:x', 'locks:{x}', 'queue:mail'] as $key) {
            $lock = $c->lock($key, ['exactKey' => true]);
            $this->assertTrue($lock->acquire(), $key);
            $lock->release();
        }
        $writer->release();
    }
}
