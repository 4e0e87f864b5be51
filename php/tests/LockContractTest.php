<?php

use RedisLock\Client;
use RedisLock\LockInterface;
use RedisLock\LockLostException;
use RedisLock\NotHeldException;
use RedisLock\Redlock;

/**
 * The lock contract, once, over every kind of lock that implements
 * `RedisLock\LockInterface` (as tests/contract.rs runs it over the
 * engine's holds): one holder at a time, a second taker refused, extend
 * and release by the holder only, a lock lost in Redis reported as lost.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class LockContractTest extends RedisLockTestCase
{
    /** @var RedisServer[] */
    private static array $nodes = [];

    public static function tearDownAfterClass(): void
    {
        self::$nodes = [];
    }

    /** Each kind: a factory of two objects on one lock, and its keys. */
    public static function kinds(): array
    {
        $client = fn () => new Client(RedisServer::$main->dsn());
        return [
            'lock' => [fn () => $client()->lock('c', ['ttl' => 30]), ['lock:{c}'], true],
            'write lock' => [fn () => $client()->writeLock('c', ['ttl' => 30]), ['rwlock:{c}'], true],
            'exactKey lock' => [fn () => $client()->lock('app:c', ['ttl' => 30, 'exactKey' => true]), ['app:c'], true],
            'semaphore permits' => [fn () => $client()->semaphore('c', 3, ['ttl' => 30])->asLock(3), ['semaphore:{c}'], true],
            'multi-lock' => [fn () => $client()->lockMany(['c1', 'c2'], ['ttl' => 30]), ['lock:{c1}', 'lock:{c2}'], false],
            'redlock' => [function () {
                for ($i = count(self::$nodes); $i < 3; $i++) {
                    self::$nodes[] = RedisServer::start();
                }
                return new Redlock('c', ['nodes' => array_map(fn ($s) => $s->dsn(), self::$nodes), 'ttl' => 30]);
            }, null, false],
        ];
    }

    /** The keys of a kind, deleted behind its holder's back. */
    private function lose(?array $keys): void
    {
        if ($keys === null) {
            foreach (self::$nodes as $node) {
                $node->client()->del('lock:{c}');
            }
            return;
        }
        $this->redis->del(...$keys);
    }

    /** @dataProvider kinds */

    #[PHPUnit\Framework\Attributes\DataProvider('kinds')]
    public function testOneHolderAtATime(callable $make, ?array $keys, bool $fenced): void
    {
        $a = $make();
        $b = $make();
        $this->assertInstanceOf(LockInterface::class, $a);
        $this->assertFalse($a->isHeld());
        $this->assertNull($a->remaining());
        $this->assertNull($a->token());
        $this->assertTrue($a->acquire());
        $this->assertFalse($b->acquire(), 'a second taker is refused');
        $this->assertTrue($a->isHeld());
        $this->assertFalse($b->isHeld());
        $this->assertGreaterThan(25, $a->remaining());
        $this->assertSame($fenced, $a->token() !== null, 'a fencing token where the kind has one');
        $this->assertTrue($a->extend(60));
        $this->assertGreaterThan(55, $a->remaining());
        foreach (['release', 'extend'] as $method) {
            try {
                $b->$method();
                $this->fail("$method by a non-holder");
            } catch (NotHeldException) {
            }
        }
        $this->assertTrue($a->release());
        $this->assertFalse($a->isHeld());
        $this->assertTrue($b->acquire(), 'free after the release');
        $this->assertTrue($b->release());
    }

    /** @dataProvider kinds */

    #[PHPUnit\Framework\Attributes\DataProvider('kinds')]
    public function testALockLostInRedisIsReportedLost(callable $make, ?array $keys): void
    {
        $a = $make();
        $this->assertTrue($a->acquire());
        $this->lose($keys);
        $this->assertFalse($a->isHeld());
        $this->expectException(LockLostException::class);
        $a->release();
    }

    /** Code that takes "a lock" works with every kind. */
    public function testCodeTakesAnyKindThroughTheInterface(): void
    {
        $critical = function (LockInterface $lock): string {
            if (!$lock->acquire(1)) {
                return 'busy';
            }
            try {
                return 'done';
            } finally {
                $lock->release();
            }
        };
        foreach (self::kinds() as $name => [$make]) {
            $this->assertSame('done', $critical($make()), $name);
        }
    }
}
