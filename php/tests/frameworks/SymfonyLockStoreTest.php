<?php

use RedisLock\Client;
use RedisLock\Symfony\LockStore;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock;
use Symfony\Component\Lock\PersistingStoreInterface;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\Lock\Tests\Store\AbstractStoreTestCase;
use Symfony\Component\Lock\Tests\Store\BlockingStoreTestTrait;
use Symfony\Component\Lock\Tests\Store\ExpiringStoreTestTrait;
use Symfony\Component\Lock\Tests\Store\SharedLockStoreTestTrait;
use Symfony\Component\Lock\Tests\Store\UnserializableTestTrait;

if (!class_exists(AbstractStoreTestCase::class)) {
    /** Stands in, visibly, where the mirror did not serve the framework's source package (tools/frameworks.sh). */
    final class SymfonyLockStoreTest extends RedisLockTestCase
    {
        public function testTheFrameworksOwnSuite(): void
        {
            $this->markTestSkipped("the framework's own tests are not here: the mirror did not serve Debian's symfony source package of this release");
        }
    }
    return;
}

/**
 * Symfony's own store contract (its AbstractStoreTestCase and test traits,
 * from Debian's symfony source package, unmodified) run on LockStore, and
 * what Symfony's Lock does with it.
 */
final class SymfonyLockStoreTest extends AbstractStoreTestCase
{
    use BlockingStoreTestTrait;
    use ExpiringStoreTestTrait;
    use SharedLockStoreTestTrait;
    use UnserializableTestTrait;
    use Processes;

    protected function getClockDelay(): int
    {
        return 250000;
    }

    public function getStore(): PersistingStoreInterface
    {
        return new LockStore(new Client());
    }

    public function testABlockingAcquireIsHandedTheLockByTheRelease(): void
    {
        $holder = new Lock(new Key('handoff'), $this->getStore(), 30);
        $this->assertTrue($holder->acquire());
        $waiter = self::start('
            require "/usr/share/php/Symfony/Component/Lock/autoload.php";
            require "' . dirname(__DIR__, 2) . '/src/Symfony/LockStore.php";
            $lock = new Symfony\Component\Lock\Lock(new Symfony\Component\Lock\Key("handoff"),
                new RedisLock\Symfony\LockStore(new RedisLock\Client()), 30);
            echo $lock->acquire(true) ? "acquired" : "refused";');
        $redis = RedisServer::$main->client();
        for ($tries = 0; $redis->lLen('exactrwlock:{handoff}:line') < 1; $tries++) {
            $this->assertLessThan(4000, $tries, 'the waiter never joined the line');
            usleep(5000);
        }
        $holder->release();
        $this->assertSame('acquired', self::finish($waiter));
    }

    /**
     * A lock told to outlive the request (releaseAtRequestEnd false, as
     * docs/runtimes.md advises, and Symfony's autoRelease false) stays its
     * object's across the request boundary of a worker runtime: held,
     * refreshed, and released by it, as Symfony's contract says. It was
     * forgotten: isAcquired() false, refresh() threw, and release() left
     * the key for its whole ttl.
     */
    public function testALockKeptAcrossTheRequestBoundaryStaysItsObjects(): void
    {
        $factory = new Symfony\Component\Lock\LockFactory(new LockStore(new Client(), 300, ['releaseAtRequestEnd' => false]));
        $lock = $factory->createLock('import', 600, false);
        $this->assertTrue($lock->acquire());
        (new RedisLock\Symfony\RequestBoundary())->reset();
        $this->assertTrue($lock->isAcquired(), 'still its object\'s');
        $lock->refresh(900);
        $this->assertGreaterThan(800, RedisServer::$main->client()->ttl('import'));
        $lock->release();
        $this->assertSame(0, RedisServer::$main->client()->exists('import'), 'released by its object');
        $this->assertFalse($factory->createLock('import', 600, false)->isAcquired());
        $other = $factory->createLock('import', 600, false);
        $this->assertTrue($other->acquire(), 'free for the next');
        $other->release();
    }

    public function testSharedLocksThroughSymfonysLock(): void
    {
        $store = $this->getStore();
        $a = new Lock(new Key('shared'), $store, 30);
        $b = new Lock(new Key('shared'), $store, 30);
        $this->assertTrue($a->acquireRead());
        $this->assertTrue($b->acquireRead());
        $this->assertFalse($a->acquire(), 'promotion refused while b reads');
        $this->assertTrue($a->isAcquired(), 'a still reads');
        $b->release();
        $this->assertTrue($a->acquire(), 'promoted');
        $this->assertFalse($b->acquireRead());
        $a->release();
        $this->assertTrue($b->acquireRead());
        $b->release();
    }

    /** Symfony's stock RedisStore on the test server, the reference. */
    private static function stock(): RedisStore
    {
        return new RedisStore(RedisServer::$main->client());
    }

    /**
     * A fleet switching server by server: Symfony's stock RedisStore and the
     * adapter on one resource exclude each other as each excludes itself
     * (readers share, a writer is alone), whoever holds first.
     */
    public function testSymfonysOwnStoreAndTheAdapterExcludeEachOther(): void
    {
        $sides = ['stock' => self::stock(), 'adapter' => $this->getStore()];
        foreach ($sides as $first => $holderStore) {
            foreach ($sides as $second => $otherStore) {
                $where = "$first holds, $second asks";
                $holder = new Lock(new Key('mixed'), $holderStore, 30);
                $other = new Lock(new Key('mixed'), $otherStore, 30);
                $this->assertTrue($holder->acquire(), $where);
                $this->assertFalse($other->acquire(), "$where: two writers");
                $this->assertFalse($other->acquireRead(), "$where: a reader beside the writer");
                $this->assertTrue($holder->acquireRead(), "$where: demoted");
                $this->assertTrue($other->acquireRead(), "$where: two readers");
                $this->assertFalse($holder->acquire(), "$where: promoted beside a reader");
                $other->release();
                $this->assertFalse($other->isAcquired(), $where);
                $this->assertTrue($holder->acquire(), "$where: promoted alone");
                $this->assertTrue($holder->isAcquired(), $where);
                $holder->release();
                $this->assertTrue($other->acquire(), "$where: free after the release");
                $other->release();
                $this->assertSame(0, RedisServer::$main->client()->exists('mixed'), "$where: nothing left");
            }
        }
    }

    /**
     * Processes on the stock store and on the adapter take one resource in
     * turns, as writers and readers, counting a writer beside anyone: never.
     * The adapter's waiters are not starved by the stock store's releases,
     * which wake nobody: they look again every 250 ms (the stock store polls
     * every 100 to 200 ms).
     */
    public function testAMixedFleetNeverHasAWriterBesideAnother(): void
    {
        $redis = RedisServer::$main->client();
        $redis->del('writers', 'readers', 'overlaps', 'turns');
        $turns = 20;
        $worker = fn (string $side) => self::start('
            require "/usr/share/php/Symfony/Component/Lock/autoload.php";
            require "' . dirname(__DIR__, 2) . '/src/Symfony/LockStore.php";
            $redis = new Redis();
            $redis->connect("127.0.0.1", ' . RedisServer::$main->port . ');
            $store = "' . $side . '" === "stock"
                ? new Symfony\Component\Lock\Store\RedisStore($redis)
                : new RedisLock\Symfony\LockStore(new RedisLock\Client());
            for ($i = 0; $i < ' . $turns . '; $i++) {
                $lock = new Symfony\Component\Lock\Lock(new Symfony\Component\Lock\Key("fleet"), $store, 10);
                $write = $i % 2 === 0;
                $write ? $lock->acquire(true) : $lock->acquireRead(true);
                $mine = $write ? "writers" : "readers";
                $redis->incr($mine);
                if ((int) $redis->get("writers") > ($write ? 1 : 0) || ($write && (int) $redis->get("readers") > 0)) {
                    $redis->incr("overlaps");
                }
                usleep(2000);
                $redis->decr($mine);
                $redis->rPush("turns", "' . $side . '");
                $lock->release();
            }
            echo "done";', ['extension' => self::phpredisExtensions()]);
        $workers = [$worker('stock'), $worker('adapter'), $worker('stock'), $worker('adapter')];
        $this->assertSame(['done', 'done', 'done', 'done'], array_map(fn ($w) => self::finish($w), $workers));
        $this->assertSame(0, (int) $redis->get('overlaps'), 'a writer beside another holder');
        $turnsTaken = array_count_values($redis->lRange('turns', 0, -1));
        ksort($turnsTaken);
        $this->assertSame(['adapter' => 2 * $turns, 'stock' => 2 * $turns], $turnsTaken);
    }

    public function testTheOldKeysAreAnOption(): void
    {
        $lock = new Lock(new Key('old'), new LockStore(new Client(), 30, ['exactKey' => false]), 30);
        $this->assertTrue($lock->acquire());
        $this->assertSame(1, RedisServer::$main->client()->exists('rwlock:{old}'));
        $this->assertTrue((new Lock(new Key('old'), self::stock(), 30))->acquire(), 'apart from the stock store');
        $lock->release();
    }

    public function testAnInvalidTtlIsRefused(): void
    {
        $this->expectException(Symfony\Component\Lock\Exception\InvalidTtlException::class);
        new LockStore(new Client(), -1);
    }
}
