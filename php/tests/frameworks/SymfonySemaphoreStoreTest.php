<?php

use RedisLock\Client;
use RedisLock\Symfony\SemaphoreStore;
use Symfony\Component\Semaphore\Key;
use Symfony\Component\Semaphore\PersistingStoreInterface;
use Symfony\Component\Semaphore\Semaphore;
use Symfony\Component\Semaphore\Store\RedisStore as StockStore;
use Symfony\Component\Semaphore\Tests\Store\AbstractStoreTestCase;

if (!class_exists(AbstractStoreTestCase::class)) {
    /** Stands in, visibly, where the mirror did not serve the framework's source package (tools/frameworks.sh). */
    final class SymfonySemaphoreStoreTest extends RedisLockTestCase
    {
        public function testTheFrameworksOwnSuite(): void
        {
            $this->markTestSkipped("the framework's own tests are not here: the mirror did not serve Debian's symfony source package of this release");
        }
    }
    return;
}

/**
 * Symfony's own semaphore store contract (its AbstractStoreTestCase, from
 * Debian's symfony source package, unmodified) run on SemaphoreStore.
 */
final class SymfonySemaphoreStoreTest extends AbstractStoreTestCase
{
    public function getStore(): PersistingStoreInterface
    {
        return new SemaphoreStore(new Client());
    }

    public function testSymfonysSemaphoreCountsWeights(): void
    {
        $store = $this->getStore();
        $heavy = new Semaphore(new Key('pool', 3, 2), $store, 30);
        $light = new Semaphore(new Key('pool', 3, 1), $store, 30);
        $other = new Semaphore(new Key('pool', 3, 1), $store, 30);
        $this->assertTrue($heavy->acquire());
        $this->assertTrue($light->acquire());
        $this->assertFalse($other->acquire(), '2 + 1 of 3 permits taken');
        $this->assertTrue($heavy->isAcquired());
        $heavy->release();
        $this->assertTrue($other->acquire());
        $this->assertEqualsWithDelta(30, $other->getRemainingLifetime(), 1);
        $light->release();
        $other->release();
        $this->assertSame(0, RedisServer::$main->client()->exists('semaphore:{pool}'), 'nothing left held');
    }

    /**
     * What docs/frameworks.md says of a mixed fleet: Symfony's stock
     * RedisStore keeps its permits in `{<resource>}:weight` and
     * `{<resource>}:time`, the adapter in `semaphore:{<resource>}`, so the
     * two do not see each other's permits: with limit 1, one of each holds.
     * (Switch the servers that share semaphores together.)
     */
    public function testAMixedFleetOfSemaphoreStoresDoesNotShareItsLimit(): void
    {
        $stock = new Semaphore(new Key('mixed', 1), new StockStore(RedisServer::$main->client()), 30);
        $adapter = new Semaphore(new Key('mixed', 1), $this->getStore(), 30);
        $this->assertTrue($stock->acquire());
        $this->assertTrue($adapter->acquire(), 'the adapter does not see the stock store\'s permit');
        $this->assertSame(1, RedisServer::$main->client()->exists('{mixed}:weight'));
        $this->assertSame(1, RedisServer::$main->client()->exists('semaphore:{mixed}'));
        $stock->release();
        $adapter->release();
    }
}
