<?php

/**
 * The request boundary of long-running runtimes (RedisLock\Runtime): one
 * PHP process serving many requests, as RoadRunner, FrankenPHP's worker
 * mode, Octane and queue workers do, where PHP's request end never comes.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class RuntimeTest extends RedisLockTestCase
{
    /**
     * The loop of a worker runtime (a RoadRunner or FrankenPHP worker
     * script has this shape) serving 10,000 requests that leak every kind
     * of hold: thrown out of mid-hold, parked in statics, taken twice and
     * given back once, semaphore permits and read locks never given back,
     * multi-locks. After each request's endRequest(): the process holds
     * nothing, Redis has no lock, the parked objects say so, and the next
     * request takes the same locks at once. Memory stays flat.
     */
    public function testAWorkerLoopLeavesNoLockBehindAnyRequest(): void
    {
        $out = self::php('
            final class Parked { public static $lock; public static $seed; public static array $slots = []; }
            $c = new RedisLock\Client();
            $handle = function (int $i) use ($c): void {
                switch ($i % 6) {
                    case 0:
                        Parked::$seed = new RedisLock();
                        Parked::$seed->lock("seed", 0, 30) or throw new LogicException("seed lock busy");
                        throw new RuntimeException("failed mid-hold");
                    case 1:
                        Parked::$lock = $c->lock("renewed", ["ttl" => 1, "autoRenew" => true]);
                        Parked::$lock->acquire() or throw new LogicException("renewed lock busy");
                        throw new RuntimeException("failed mid-hold");
                    case 2:
                        $l = $c->lock("reentrant", ["reentrant" => true, "ttl" => 30]);
                        ($l->acquire() && $l->acquire()) or throw new LogicException("reentrant lock busy");
                        $l->release();
                        Parked::$slots[0] = $l;
                        return;
                    case 3:
                        $s = $c->semaphore("pool", 3);
                        $s->acquire(2) or throw new LogicException("permits busy");
                        $r = $c->readLock("doc", ["ttl" => 30]);
                        $r->acquire() or throw new LogicException("read lock busy");
                        Parked::$slots[1] = [$s, $r];
                        return;
                    case 4:
                        $m = $c->lockMany(["m1", "m2"], ["ttl" => 30]);
                        $m->acquire() or throw new LogicException("multi-lock busy");
                        Parked::$slots[2] = $m;
                        return;
                    default:
                        $l = $c->lock("clean", ["ttl" => 30]);
                        $l->acquire() or throw new LogicException("clean lock busy");
                        $l->release();
                }
            };
            $errors = $refused = $released = $heldAfter = $inRedis = $stillSaysHeld = 0;
            $memory = $rss = [];
            $rssKb = fn () => preg_match("/^VmRSS:\\s+(\\d+)/m", file_get_contents("/proc/self/status"), $m) ? (int) $m[1] : -1;
            for ($i = 0; $i < 10000; $i++) {
                try {
                    $handle($i);
                } catch (LogicException $e) {
                    $refused++;
                    fwrite(STDERR, "request $i: " . $e->getMessage() . "\n");
                } catch (RuntimeException $e) {
                    $errors++;
                }
                $released += RedisLock\Runtime::endRequest();
                $heldAfter += RedisLock\Runtime::held() === [] ? 0 : 1;
                $inRedis += count($c->locks());
                $stillSaysHeld += (Parked::$lock?->isHeld() ? 1 : 0) + (Parked::$seed?->isLocking("seed") ? 1 : 0);
                if ($i === 999 || $i === 9999) {
                    $memory[] = memory_get_usage();
                    $rss[] = $rssKb();
                }
            }
            echo json_encode(compact("errors", "refused", "released", "heldAfter", "inRedis", "stillSaysHeld", "memory", "rss"));');
        $r = json_decode($out, true);
        $this->assertIsArray($r, $out);
        $perSix = intdiv(10000, 6);
        $kinds = fn (int $kind) => $perSix + ($kind < 10000 % 6 ? 1 : 0);
        $this->assertSame(0, $r['refused'], 'every request took its locks at once: none was left by an earlier one');
        $this->assertSame($kinds(0) + $kinds(1), $r['errors'], 'the requests that threw mid-hold');
        // Released at each boundary: the seed lock, the renewed lock, the
        // reentrant hold left, the permits and the read lock, both locks of
        // the multi-lock; the clean request nothing.
        $this->assertSame($kinds(0) + $kinds(1) + $kinds(2) + 2 * $kinds(3) + 2 * $kinds(4), $r['released']);
        $this->assertSame(0, $r['heldAfter'], 'the process held nothing after a boundary');
        $this->assertSame(0, $r['inRedis'], 'Redis had no lock after a boundary');
        $this->assertSame(0, $r['stillSaysHeld'], 'the parked objects knew they held nothing');
        $this->assertLessThan(64 * 1024, $r['memory'][1] - $r['memory'][0], 'PHP memory flat from request 1,000 to 10,000');
        $this->assertLessThan(1024, $r['rss'][1] - $r['rss'][0], 'resident memory flat (under 1 MB) from request 1,000 to 10,000');
        fwrite(STDERR, sprintf("\n[runtime] 10,000 requests: %d locks released at boundaries, PHP memory %+d bytes, resident %+d kB from request 1,000 on\n",
            $r['released'], $r['memory'][1] - $r['memory'][0], $r['rss'][1] - $r['rss'][0]));
    }

    /**
     * With release at request end switched off the boundary releases
     * nothing, but still stops the renewals: the parked lock's lease runs
     * out while the process serves on. A lock made to outlive the request
     * stays held, listed among the process' holds, and its object
     * releases it in a later request.
     */
    public function testTheBoundaryStopsRenewalsWhileTheProcessServesOn(): void
    {
        $out = self::php('
            $c = new RedisLock\Client();
            $parked = $c->lock("parked", ["ttl" => 1, "autoRenew" => true]);
            $parked->acquire();
            $kept = $c->lock("kept", ["ttl" => 30, "releaseAtRequestEnd" => false, "owner" => "job:7"]);
            $kept->acquire();
            echo RedisLock\Runtime::endRequest(), " ", json_encode(RedisLock\Runtime::held()), " ", var_export($parked->isHeld(), true), "\n";
            $start = microtime(true);
            $gone = null;
            while (microtime(true) - $start < 3 && $gone === null) {
                usleep(50000);   // the process serves on
                if (!$c->lockState("parked")["held"]) {
                    $gone = microtime(true) - $start;
                }
            }
            printf("%s %s\n", $gone === null ? "renewed" : "expired", var_export($c->lockState("kept")["held"], true));
            $kept->release();
            echo var_export($c->lockState("kept")["held"], true), "\n";', ['redislock.release_at_request_end' => '0']);
        $this->assertSame("0 [\"lock:{kept}\"] false\nexpired true\nfalse\n", $out, 'the kept lock is still the process\'s');
    }

    /**
     * Reentrant holds belong to the process: a parked object whose holds a
     * boundary ended cannot give back the hold another object took in the
     * next request, nor end it when it goes away.
     */
    public function testAnObjectFromAnEndedRequestCannotTouchTheNextRequestsHold(): void
    {
        $out = self::php('
            $c = new RedisLock\Client();
            $old = $c->lock("r", ["reentrant" => true, "ttl" => 30]);
            $old->acquire(); $old->acquire();
            RedisLock\Runtime::endRequest();
            $new = $c->lock("r", ["reentrant" => true, "ttl" => 30]);
            $new->acquire();
            try { $old->release(); echo "released\n"; } catch (RedisLock\NotHeldException $e) { echo "not held\n"; }
            unset($old);
            echo var_export($new->isHeld(), true), " ", var_export($c->lockState("r")["held"], true), "\n";
            $old = $c->lock("r", ["reentrant" => true, "ttl" => 30]);
            echo var_export($old->acquire(), true), " ", json_encode(RedisLock\Runtime::held()), "\n";');
        $this->assertSame("not held\ntrue true\ntrue [\"lock:{r}\"]\n", $out);
    }

    /**
     * Coroutines interleave between redislock's calls, never inside one:
     * a call runs to its reply on the process's connection before anything
     * else runs (what Swoole's coroutines see too, its hooks not reaching
     * the extension's sockets). 20 PHP Fibers suspending between every call
     * share one client: a lock still excludes (no two fibers inside), and
     * every task reserved is one enqueued, with its own payload, acked once.
     */
    public function testFibersInterleavingBetweenCallsShareOneClientSafely(): void
    {
        $out = self::php('
            $c = new RedisLock\Client();
            $q = $c->queue("fibers");
            $inside = $overlaps = $took = $acked = $crossed = 0;
            $fibers = [];
            for ($f = 0; $f < 20; $f++) {
                $fibers[] = new Fiber(function () use ($c, $q, $f, &$inside, &$overlaps, &$took, &$acked, &$crossed): void {
                    for ($i = 0; $i < 50; $i++) {
                        $l = $c->lock("shared", ["ttl" => 30]);
                        if ($l->acquire()) {
                            $took++;
                            $overlaps += $inside++ > 0 ? 1 : 0;
                            Fiber::suspend();
                            $inside--;
                            $l->release();
                        }
                        $q->enqueue("$f-$i", "payload of $f-$i");
                        Fiber::suspend();
                        foreach ($q->reserve(2) as $task) {
                            $crossed += $task->payload() === "payload of " . $task->id() ? 0 : 1;
                            Fiber::suspend();
                            $acked += $q->ack($task) ? 1 : 0;
                        }
                    }
                });
            }
            foreach ($fibers as $fiber) {
                $fiber->start();
            }
            while ($fibers = array_filter($fibers, fn ($fiber) => !$fiber->isTerminated())) {
                foreach ($fibers as $fiber) {
                    $fiber->resume();
                }
            }
            foreach ($q->reserve(1000) as $task) {
                $crossed += $task->payload() === "payload of " . $task->id() ? 0 : 1;
                $acked += $q->ack($task) ? 1 : 0;
            }
            echo json_encode(compact("overlaps", "took", "acked", "crossed") + ["left" => $q->metrics()["ready"]]);');
        $r = json_decode($out, true);
        $this->assertIsArray($r, $out);
        $this->assertSame(0, $r['overlaps'], 'no two fibers inside the lock at once');
        $this->assertGreaterThan(50, $r['took'], 'fibers took the lock in turn');
        $this->assertSame(1000, $r['acked'], 'every task acked once');
        $this->assertSame(0, $r['crossed'], 'every task came with its own payload');
        $this->assertSame(0, $r['left']);
    }
}
