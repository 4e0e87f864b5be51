<?php

/** @group server */

#[PHPUnit\Framework\Attributes\Group('server')]
final class LockServiceTest extends RedisLockTestCase
{
    public function testTheSeedExampleRunsUnchanged(): void
    {
        $res1 = Lock_Service::addLock('666666');
        $this->assertIsInt($res1);
        $this->assertFalse(Lock_Service::addLock('666666'));
        $this->assertTrue(Lock_Service::releaseLock('666666', $res1));
        $this->assertFalse(Lock_Service::releaseLock('666666', $res1));
    }

    public function testKeyLayoutAndValueAreTheSeeds(): void
    {
        $id = Lock_Service::addLock(42, 100);
        $this->assertSame((string) $id, $this->redis->get('order_lock_42'));
        $this->assertSame($id, (int) $this->redis->get('lock_unique_id'));
        $ttl = $this->redis->ttl('order_lock_42');
        $this->assertGreaterThan(95, $ttl);
        $this->assertLessThanOrEqual(100, $ttl);
        $this->assertIsInt(Lock_Service::addLock(43));
        $this->assertGreaterThan(86000, $this->redis->ttl('order_lock_43'), 'default lease: 86400 s');
    }

    public function testIdsStrictlyIncreaseAndDoubleAsFencingTokens(): void
    {
        $last = 0;
        for ($i = 1; $i <= 20; $i++) {
            $id = Lock_Service::addLock("o$i");
            $this->assertGreaterThan($last, $id);
            $last = $id;
            $next = Lock_Service::generateUniqueLockId();
            $this->assertGreaterThan($last, $next);
            $last = $next;
        }
    }

    public function testAFailedAddSpendsNoId(): void
    {
        $id = Lock_Service::addLock('x');
        $this->assertFalse(Lock_Service::addLock('x'));
        $this->assertSame($id + 1, Lock_Service::generateUniqueLockId());
    }

    public function testReleaseNeedsTheLockIdAndComparesLikeTheSeed(): void
    {
        $id = Lock_Service::addLock('r');
        $this->assertFalse(Lock_Service::releaseLock('r', $id + 1));
        $this->assertFalse(Lock_Service::releaseLock('r', "$id.5"));
        $this->assertSame((string) $id, $this->redis->get('order_lock_r'));
        $this->assertTrue(Lock_Service::releaseLock('r', (string) $id), 'the seed compares with ==');
        $id = Lock_Service::addLock('r');
        $this->assertTrue(Lock_Service::releaseLock('r', (float) $id));
    }

    public function testEmptyArgumentsGiveFalseWithoutTouchingRedis(): void
    {
        foreach ([null, '', '0', 0, 0.0, false, []] as $empty) {
            $this->assertFalse(Lock_Service::addLock($empty), var_export($empty, true));
            $this->assertFalse(Lock_Service::releaseLock($empty, 1));
            $this->assertFalse(Lock_Service::releaseLock('o', $empty));
        }
        foreach ([0, -1, -0.5, '0', '-3', null, false] as $expire) {
            $this->assertFalse(Lock_Service::addLock('o', $expire), var_export($expire, true));
        }
        $this->assertSame([], $this->snapshot());
    }

    public function testTheSeedsConstantsAndAnInstance(): void
    {
        $this->assertSame('order_lock_%s', Lock_Service::REDIS_LOCK_KEY_TEMPLATE);
        $this->assertSame(86400, Lock_Service::REDIS_LOCK_DEFAULT_EXPIRE_TIME);
        $this->assertSame('lock_unique_id', Lock_Service::REDIS_LOCK_UNIQUE_ID_KEY);
        $this->assertSame('127.0.0.1', Lock_Service::REDIS_CONFIG_HOST);
        $this->assertSame(6379, Lock_Service::REDIS_CONFIG_PORT);
        $service = new Lock_Service();
        $this->assertIsInt($service->addLock('inst'));
    }

    public function testOldUserlandProcessesAndTheExtensionShareLocks(): void
    {
        // The seed's own code, on phpredis: INCR then SET NX EX.
        $seedAdd = function ($order) {
            $id = $this->redis->incr('lock_unique_id');
            return $this->redis->set("order_lock_$order", $id, ['nx', 'ex' => 60]) ? $id : false;
        };
        $old = $seedAdd('shared');
        $this->assertIsInt($old);
        $this->assertFalse(Lock_Service::addLock('shared'));
        $this->assertTrue(Lock_Service::releaseLock('shared', $old));
        $new = Lock_Service::addLock('shared');
        $this->assertGreaterThan($old, $new);
        $this->assertFalse($seedAdd('shared'));
    }

    /**
     * Order locks on keys of a copy's own (`Client::orderLocks()`): its
     * template and counter under the client's prefix, shared with old code
     * that still runs the copy, and one id sequence across processes.
     */
    public function testOrderLocksOnKeysOfTheirOwn(): void
    {
        $c = new RedisLock\Client(['prefix' => 'app:']);
        $orders = $c->orderLocks('staging_lock_%s:x', 'staging_lock_id');
        $id = $orders->addLock(7, 30);
        $this->assertSame((string) $id, $this->redis->get('app:staging_lock_7:x'));
        $this->assertSame((string) $id, $this->redis->get('app:staging_lock_id'));
        $this->assertEqualsWithDelta(30, $this->redis->ttl('app:staging_lock_7:x'), 1);
        $this->assertSame(0, $this->redis->exists('app:order_lock_7'), 'not the seed\'s keys');
        $this->assertFalse($orders->addLock(7, 30), 'held');
        $this->assertFalse($orders->releaseLock(7, $id + 1));
        $this->assertTrue($orders->releaseLock(7, "$id"));
        // Old code running the copy: its SET NX on the same key excludes the extension, and the other way round.
        $this->assertTrue($this->redis->set('app:staging_lock_8:x', 99, ['nx', 'ex' => 30]));
        $this->assertFalse($orders->addLock(8, 30));
        $mine = $orders->addLock(9, 30);
        $this->assertFalse($this->redis->set('app:staging_lock_9:x', 100, ['nx', 'ex' => 30]));
        $this->assertGreaterThan($mine, $orders->generateUniqueLockId());
        // Two layouts, two sequences; the seed's is untouched.
        $this->assertSame(1, $c->orderLocks('prod_lock_%s', 'prod_lock_id')->addLock(7, 30));
        $this->assertSame(['%s', 'lock_unique_id'], [substr($c->orderLocks()->template(), -2), $c->orderLocks()->counter()]);
        $this->assertSame(0, $this->redis->exists('app:lock_unique_id'));
        // Processes racing for one order: exactly one wins, the ids are distinct.
        $outs = self::phpMany(array_fill(0, 8, '$o = (new RedisLock\Client(["prefix" => "app:"]))->orderLocks("staging_lock_%s:x", "staging_lock_id");'
            . ' echo json_encode($o->addLock("race", 30));'));
        $ids = array_map('json_decode', $outs);
        $this->assertCount(1, array_filter($ids, 'is_int'), implode(' ', $outs));
        $this->assertSame((string) array_values(array_filter($ids, 'is_int'))[0], $this->redis->get('app:staging_lock_race:x'));
        foreach (['x', '%s%s', '%d', 'a%sb%'] as $bad) {
            try {
                $c->orderLocks($bad);
                $this->fail("'$bad' taken");
            } catch (ValueError $e) {
                $this->assertStringContainsString('Argument #1 ($template) must hold %s once', $e->getMessage());
            }
        }
        $this->expectExceptionMessage('Argument #2 ($counter) must not be empty');
        $c->orderLocks(null, '');
    }

    public function testLocksOutliveTheRequest(): void
    {
        $out = self::php('echo Lock_Service::addLock("kept", 60);');
        $this->assertSame($out, $this->redis->get('order_lock_kept'));
        $this->assertTrue(Lock_Service::releaseLock('kept', (int) $out));
    }
}
