<?php

/**
 * A Redis ACL user limited to its app's prefix (`~app:*`) uses every
 * feature with no error, and nothing is written outside the prefix but the
 * documented `redislock:prefixes`, which such a user cannot write (best
 * effort: it costs only the operators' listing of other prefixes).
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class AclTest extends RedisLockTestCase
{
    public function testAUserLimitedToItsPrefixUsesEveryFeature(): void
    {
        $server = RedisServer::startWith(['--user', 'app', 'on', '>s3cret', '~app:*',
            ...(RedisServer::features()['aclChannels'] ? ['&*'] : []), '+@all']);
        $dsn = 'redis://app:s3cret@127.0.0.1:' . $server->port;
        $code = <<<'PHP'
            $c = new RedisLock\Client(['dsn' => ini_get('redislock.default_dsn'), 'prefix' => 'app:']);
            $done = [];
            $l = $c->lock('invoice', ['ttl' => 30]);
            $done[] = $l->acquire(1) && $l->token() > 0 && $l->extend(20) && $l->isHeld() && $l->release();
            $r = $c->lock('reentrant', ['reentrant' => true]);
            $done[] = $r->acquire() && $r->acquire() && $r->release() && $r->release();
            $w = $c->writeLock('doc');
            $done[] = $w->acquire() && $w->release() && $c->readLock('doc')->acquire();
            $m = $c->lockMany(['a', 'b']);
            $done[] = $m->acquire() && $m->release();
            $s = $c->semaphore('pool', 3);
            $done[] = $s->acquire(2) && $s->release();
            $done[] = is_array($c->lockState('pool', 'semaphore'));
            $done[] = is_array($c->locks());
            $q = $c->queue('mail', ['lease' => 30, 'maxAttempts' => 1]);
            $q->enqueue('t1', 'payload', 0, null, ['welcome'], 'tenant-a');
            $q->enqueueMany(['t2' => null, 't3' => 'x']);
            [$t] = $q->reserve(1);
            $done[] = $q->extend($t, 10) && $q->ack($t);
            [$t] = $q->reserve(1);
            $done[] = $q->nack($t, 0, 'fails');
            $done[] = count($q->dead()) === 1 && $q->retryDead() === 1;
            $done[] = is_array($q->metrics()) && is_array($q->recent()) && is_array($q->peek()) && is_array($q->tagged('welcome'))
                && is_array($q->groups()) && is_array($q->workers()) && is_array($q->leased()) && is_array($q->history());
            $done[] = $q->pause() && $q->resume() && $q->setRate(100, 1) && $q->setGroupConcurrency(2) && $q->keepRecent(10, 60);
            $done[] = $q->moveTo($c->queue('mail2')) >= 0;
            $p = $c->queue('orders', ['partitions' => 4]);
            $p->enqueueMany(['o1' => null, 'o2' => null, 'o3' => null]);
            // (A batch comes from one partition: docs/past-one-node.md.)
            $done[] = count($p->reserve(3)) >= 1 && $p->partitions() === 4;
            $done[] = count($c->reserve([$q, $c->queue('mail2')], 5)) >= 0;
            $stock = $c->stock('sale', ['perBuyer' => 2, 'orders' => 'sale:orders']);
            $done[] = $stock->set(5) && $stock->take(1, 'u1') === 4 && $stock->giveBack(1, 'u1') === 5;
            $sharded = $c->stock('big', ['shards' => 4]);
            $done[] = $sharded->set(8) && $sharded->take(1) !== false;
            $limiter = $c->limiter('api', ['limit' => 10, 'per' => 60]);
            $done[] = $limiter->attempt('203.0.113.9')->allowed();
            $done[] = $c->attempt([$limiter, $c->limiter('burst', ['policy' => 'sliding_window', 'limit' => 5, 'per' => 1])])->allowed();
            $slot = $c->once('nightly', 'day');
            $done[] = $slot->won() && $slot->done();
            $leader = $c->leader('scheduler', ['ttl' => 5]);
            $done[] = $leader->campaign() && $leader->term() > 0 && $leader->resign();
            $done[] = is_array($c->queues()) && is_array($c->queuePrefixes());
            // The drop-in classes, on the INI's server and prefix.
            $id = Lock_Service::addLock(42, 60);
            $done[] = is_int($id) && Lock_Service::releaseLock(42, $id);
            $rl = new RedisLock();
            $done[] = $rl->lock('report', 0, 15) && $rl->isLocking('report') !== false && $rl->expire('report', 20) && $rl->unlock('report');
            $rq = new RedisQueue();
            $done[] = $rq->enqueue('jobs', [1, 2]) && count($rq->pop('jobs', 5)) === 2;
            $failed = array_keys(array_filter($done, fn ($ok) => $ok !== true));
            echo $failed === [] ? 'ok' : 'failed: ' . implode(', ', $failed);
            PHP;
        $out = self::phpMany([$code], ['redislock.default_dsn' => $dsn, 'redislock.prefix' => 'app:'], $exits)[0];
        $this->assertSame('ok', $out);
        $this->assertSame(0, $exits[0]);
        $outside = array_values(array_filter($server->client()->keys('*'), fn (string $k) => !str_starts_with($k, 'app:')));
        $this->assertSame([], $outside, 'no key outside the prefix');
        $this->assertGreaterThan(20, count($server->client()->keys('app:*')), 'the features wrote under the prefix');
    }
}
