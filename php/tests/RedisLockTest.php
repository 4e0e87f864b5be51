<?php

/** @group server */

#[PHPUnit\Framework\Attributes\Group('server')]
final class RedisLockTest extends RedisLockTestCase
{
    public function testLockUnlockAndTheKeyLayout(): void
    {
        $lock = new RedisLock();
        $this->assertTrue($lock->lock('order'));
        $token = $this->redis->get('Lock:order');
        $this->assertMatchesRegularExpression('/^[0-9a-f]{32}$/', $token, 'a unique owner token, not a timestamp');
        $this->assertGreaterThan(14000, $this->redis->pTtl('Lock:order'));
        $this->assertLessThanOrEqual(15000, $this->redis->pTtl('Lock:order'));
        $this->assertLocking($lock->isLocking('order'));
        $this->assertFalse((new RedisLock())->lock('order'));
        $this->assertTrue($lock->unlock('order'));
        $this->assertFalse($lock->unlock('order'));
        $this->assertFalse($lock->isLocking('order'));
        $this->assertSame([], $this->snapshot());
    }

    public function testConstructorTakesNullADsnOrOptions(): void
    {
        $dsn = RedisServer::$main->dsn();
        foreach ([null, $dsn, ['dsn' => $dsn], ['host' => '127.0.0.1', 'port' => RedisServer::$main->port],
                  ['dsn' => $dsn, 'prefix' => 'app:', 'timeout' => 0.5, 'read_timeout' => '1']] as $param) {
            $lock = new RedisLock($param);
            $this->assertTrue($lock->lock('c'), var_export($param, true));
            $this->assertTrue($lock->unlock('c'));
        }
        $lock = new RedisLock(['dsn' => $dsn, 'prefix' => 'app:', 'database' => 2]);
        $this->assertTrue($lock->lock('p'));
        $this->redis->select(2);
        $this->assertTrue((bool) $this->redis->exists('app:Lock:p'));
    }

    public function testOwnerSafetyAfterExpiry(): void
    {
        $a = new RedisLock();
        $b = new RedisLock();
        $this->assertTrue($a->lock('o', 0, 0.1));
        usleep(200000);
        $this->assertTrue($b->lock('o', 0, 10));
        $this->assertSame('', $a->isLocking('o'), "A took it and lost it: the seed's empty string");
        $this->assertFalse($a->expire('o', 100));
        $this->assertFalse($a->unlock('o'), "A's lock expired: its unlock must not delete B's");
        $this->assertLocking($b->isLocking('o'));
        $this->assertLessThanOrEqual(10000, $this->redis->pTtl('Lock:o'));
    }

    public function testAStaleKeyWithoutTtlIsTakenOver(): void
    {
        $this->redis->set('Lock:stale', (string) time());
        $lock = new RedisLock();
        $this->assertTrue($lock->lock('stale', 0, 5));
        $this->assertLocking($lock->isLocking('stale'));
        $this->assertGreaterThan(0, $this->redis->pTtl('Lock:stale'));
    }

    public function testAKeyWithoutTtlWhoseTimeIsAheadIsALiveOldClientsLock(): void
    {
        // An old client between its SETNX and its EXPIRE: the value is its
        // expiry time, still ahead. Taking it over would make two holders.
        $expireAt = (string) (time() + 15);
        $this->redis->set('Lock:between', $expireAt);
        $lock = new RedisLock();
        $this->assertFalse($lock->lock('between', 0, 5));
        $this->assertFalse($lock->lock('between', 0.3, 5, 50000));
        $this->assertSame($expireAt, $this->redis->get('Lock:between'));
        // Once that time has passed, the old client is taken for dead.
        $this->redis->set('Lock:between', (string) (time() - 1));
        $this->assertTrue($lock->lock('between', 0, 5));
    }

    /**
     * A session handler that locks its session still holds the lock when
     * PHP writes the session at request end (legacy callbacks, and an object
     * with $register_shutdown = false): request-end release comes after.
     *
     * @testWith ["callbacks"]
     *           ["object"]
     */
    #[PHPUnit\Framework\Attributes\TestWith(["callbacks"])]
    #[PHPUnit\Framework\Attributes\TestWith(["object"])]
    public function testASessionHandlersLockOutlivesTheSessionWrite(string $how): void
    {
        $log = tempnam(sys_get_temp_dir(), 'session');
        $handler = 'error_reporting(E_ALL & ~E_DEPRECATED);
            class Locked {
                public $lock;
                function open($path, $name) { $this->lock = new RedisLock(); return $this->lock->lock("sess", 5, 30); }
                function close() { return true; }
                function read($id) { return ""; }
                function write($id, $data) {
                    file_put_contents("' . $log . '", $this->lock->isLocking("sess") ? "held" : "lost");
                    return true;
                }
                function destroy($id) { return true; }
                function gc($max) { return 0; }
            }
            $h = new Locked();';
        $install = $how === 'callbacks'
            ? 'session_set_save_handler([$h, "open"], [$h, "close"], [$h, "read"], [$h, "write"], [$h, "destroy"], [$h, "gc"]);'
            : 'class LockedHandler extends Locked implements SessionHandlerInterface {}
               $h = new LockedHandler(); session_set_save_handler($h, false);';
        $out = self::php($handler . $install . 'session_id("abc"); session_start(); $_SESSION["n"] = 1; echo "ok";',
            ['session.save_path' => sys_get_temp_dir(), 'session.use_cookies' => '0'], $exit);
        $this->assertSame('ok', $out);
        $this->assertSame('held', file_get_contents($log));
        unlink($log);
        $this->assertSame(0, $this->redis->exists('Lock:sess'), 'released after the write');
    }

    /** Seed-era subclasses override methods without return types, as the seeds wrote them. */
    public function testSeedEraSubclassesCompile(): void
    {
        $out = self::php('
            class MyLock extends RedisLock {
                public $made = "no";
                public function __construct($param = null) { parent::__construct($param); $this->made = "made"; }
                public function lock($name, $timeout = 0, $expire = 15, $waitIntervalUs = 100000) {
                    return parent::lock("my-$name", $timeout, $expire, $waitIntervalUs);
                }
                public function unlock($name) { return parent::unlock("my-$name"); }
                public function isLocking($name) { return parent::isLocking("my-$name"); }
            }
            class MyQueue extends RedisQueue {
                public function enqueue($name, $id, $timeout = 10, $afterInterval = 0) {
                    return parent::enqueue($name, $id, $timeout, $afterInterval);
                }
                public function pop($name, $count = 1, $timeout = 10) { return parent::pop($name, $count, $timeout); }
            }
            class MyService extends Lock_Service {
                public static function addLock($intOrderId, $intExpireTime = 86400) {
                    return parent::addLock($intOrderId, $intExpireTime);
                }
            }
            $l = new MyLock();
            echo get_class($l), " ", $l->made, " ";
            echo var_export($l->lock("a"), true), " ", var_export($l->isLocking("a"), true), " ";
            echo var_export((new RedisLock())->lock("my-a"), true), " ", var_export($l->unlock("a"), true);
            $q = new MyQueue(); $q->enqueue("q", "t"); echo " ", $q->pop("q")["id"];
            echo " ", gettype(MyService::addLock(7, 60));
            echo " ", (new ReflectionMethod("RedisLock", "lock"))->hasReturnType() ? "typed" : "untyped";', [], $exit);
        $this->assertSame(0, $exit, $out);
        // The object is of the subclass, made by its constructor, and its
        // overrides run (a class with Rust's Default in ext-php-rs 0.16
        // would make a RedisLock instead, skipping both).
        $this->assertMatchesRegularExpression("/^MyLock made true '[0-9]{10,}' false true t integer untyped$/", $out);
    }

    public function testExpireSetsTheLeaseOfAHeldLockOnly(): void
    {
        $lock = new RedisLock();
        $this->assertFalse($lock->expire('e', 100), 'not held');
        $this->assertTrue($lock->lock('e', 0, 2));
        $this->assertTrue($lock->expire('e', 100));
        $this->assertGreaterThan(95, $this->redis->ttl('Lock:e'));
        $this->assertTrue($lock->expire('e', 0), 'max($expire, 1)');
        $this->assertLessThanOrEqual(1000, $this->redis->pTtl('Lock:e'));
    }

    public function testIsLockingSeesALockDeletedBehindItsBack(): void
    {
        $lock = new RedisLock();
        $this->assertTrue($lock->lock('gone'));
        $this->redis->del('Lock:gone');
        $this->assertSame('', $lock->isLocking('gone'), 'taken, then gone: the seed says ""');
        $this->assertFalse($lock->unlock('gone'));
    }

    public function testUnlockAll(): void
    {
        $lock = new RedisLock();
        $this->assertTrue($lock->unlockAll(), 'nothing held');
        foreach (['a', 'b', 'c'] as $n) {
            $this->assertTrue($lock->lock($n));
        }
        $this->redis->del('Lock:b');
        $this->assertFalse($lock->unlockAll(), 'b was lost');
        $this->assertSame([], $this->snapshot());
        $this->assertTrue($lock->unlockAll(), 'the records were dropped');
    }

    public function testAWaiterGetsTheLockPromptlyAfterRelease(): void
    {
        $holder = new RedisLock();
        $this->assertTrue($holder->lock('w', 0, 30));
        // A second process waits up to 20 s, re-checking every 20 s at most:
        // only the release message can let it in within its first interval.
        $p = proc_open(self::command('
            $l = new RedisLock(); $t = microtime(true);
            $ok = $l->lock("w", 20, 5, 20000000);
            printf("%d %.3f", $ok, microtime(true) - $t);'), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        usleep(500000);
        $this->assertTrue($holder->unlock('w'));
        [$ok, $waited] = explode(' ', stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]));
        proc_close($p);
        $this->assertSame('1', $ok);
        $this->assertLessThan(20.0, (float) $waited, 'woken by the release, not by the 20 s re-check');
    }

    public function testAWaiterGivesUpAfterItsTimeout(): void
    {
        $holder = new RedisLock();
        $this->assertTrue($holder->lock('t', 0, 30));
        $waiter = new RedisLock();
        $this->assertFalse($waiter->lock('t', 0.2));
        $this->assertLocking($holder->isLocking('t'));
    }

    public function testLocksAreReleasedWhenTheObjectGoesAway(): void
    {
        $lock = new RedisLock();
        $this->assertTrue($lock->lock('d'));
        unset($lock);
        $this->assertFalse((bool) $this->redis->exists('Lock:d'));
    }

    public static function requestEnds(): array
    {
        return [
            'normal end' => ['$l = new RedisLock(); $l->lock("end", 0, 60); $GLOBALS["keep"] = $l; echo "held";'],
            'exit()' => ['$l = new RedisLock(); $l->lock("end", 0, 60); echo "held"; exit(3);'],
            'fatal error' => ['$l = new RedisLock(); $l->lock("end", 0, 60); echo "held"; undefined_function();'],
            'uncaught exception' => ['$l = new RedisLock(); $l->lock("end", 0, 60); echo "held"; throw new Exception("x");'],
            'max_execution_time' => ['set_time_limit(1); $l = new RedisLock(); $l->lock("end", 0, 60); echo "held"; for (;;) {}'],
            'static holder' => ['class H { static $l; } H::$l = new RedisLock(); H::$l->lock("end", 0, 60); echo "held";'],
        ];
    }

    /** @dataProvider requestEnds */

    #[PHPUnit\Framework\Attributes\DataProvider('requestEnds')]
    public function testLocksStillHeldAtRequestEndAreReleased(string $code): void
    {
        $out = self::php($code);
        $this->assertStringStartsWith('held', $out);
        $this->assertFalse((bool) $this->redis->exists('Lock:end'), $out);
    }

    public function testReleaseAtRequestEndCanBeSwitchedOff(): void
    {
        $out = self::php('$l = new RedisLock(); $l->lock("kept", 0, 60); echo "held";',
                         ['redislock.release_at_request_end' => '0']);
        $this->assertSame('held', $out);
        $this->assertTrue((bool) $this->redis->exists('Lock:kept'));
        $this->assertGreaterThan(0, $this->redis->ttl('Lock:kept'));
    }

    public function testAForkedChildDoesNotReleaseItsParentsLocks(): void
    {
        $out = self::php('
            $l = new RedisLock(); $l->lock("fork", 0, 60);
            $pid = pcntl_fork();
            if ($pid === 0) { exit(0); }
            pcntl_waitpid($pid, $status);
            echo $l->isLocking("fork") ? "still held" : "lost";');
        if (str_contains($out, 'pcntl_fork')) {
            $this->markTestSkipped('pcntl is not loaded under php -n');
        }
        $this->assertSame('still held', $out);
    }

    public function testNameValidationIsTheSeeds(): void
    {
        $lock = new RedisLock();
        foreach ([null, '', 0, 0.0, false, []] as $nullish) {
            $this->assertFalse($lock->lock($nullish), var_export($nullish, true));
        }
        $this->assertTrue($lock->lock('0'), '"0" == null is false in PHP 8');
        foreach ([0, -1, -0.001, null, false, '0', '-5'] as $expire) {
            $this->assertFalse($lock->lock('x', 0, $expire), var_export($expire, true));
        }
        $this->assertSame(['Lock:0'], array_keys($this->snapshot()));
    }
}
