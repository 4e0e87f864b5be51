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

    public function testLocksOutliveTheRequest(): void
    {
        $out = self::php('echo Lock_Service::addLock("kept", 60);');
        $this->assertSame($out, $this->redis->get('order_lock_kept'));
        $this->assertTrue(Lock_Service::releaseLock('kept', (int) $out));
    }
}
