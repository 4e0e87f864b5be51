<?php

use RedisLock\Client;

/**
 * Leader election (docs/once.md, "Leaders"): one leader at a time, terms
 * that grow with every leader, who leads and since when, a killed leader
 * followed within its ttl, and never two leaders acting: every write goes
 * through a fence that refuses an older term.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class LeaderTest extends RedisLockTestCase
{
    /** A write fenced by the leader's term: refused when a later term wrote. */
    private const FENCED = "local t = tonumber(ARGV[1]) if t < tonumber(redis.call('GET', KEYS[1]) or '0') then return 0 end
        redis.call('SET', KEYS[1], ARGV[1]) redis.call('RPUSH', KEYS[2], ARGV[1] .. ' ' .. ARGV[2]) return 1";

    public function testOneLeaderAtATimeWithGrowingTerms(): void
    {
        $c = new Client();
        $a = $c->leader('cron', ['ttl' => 5]);
        $b = $c->leader('cron', ['ttl' => 5]);
        $this->assertNull($a->current(), 'nobody leads yet');
        $this->assertTrue($a->campaign(0));
        $this->assertTrue($a->campaign(0), 'already leading');
        $this->assertFalse($b->campaign(0));
        $this->assertTrue($a->isLeader());
        $this->assertFalse($b->isLeader());
        $this->assertNull($b->term());
        $first = $a->term();
        $this->assertIsInt($first);
        $now = $b->current();
        $this->assertSame($first, $now['term']);
        $this->assertEqualsWithDelta(microtime(true), $now['since'], 5);
        $this->assertGreaterThan(4, $now['remaining']);
        $this->assertTrue($a->resign());
        $this->assertFalse($a->resign(), 'not leading any more');
        $this->assertFalse($a->isLeader());
        $this->assertNull($a->current());
        $this->assertTrue($b->campaign(0));
        $this->assertGreaterThan($first, $b->term(), 'a new leader, a larger term');
        $this->assertSame($b->term(), $a->current()['term']);
        $this->assertSame(['leader:{cron}', 'leader:{cron}:fence', 'leader:{cron}:term'], $this->sortedKeys());
        $this->assertFalse($c->lockState('cron')['held'], 'a leader is not a lock of the same name');
    }

    public function testAKilledLeaderIsFollowedWithinItsTtl(): void
    {
        $leader = self::start('$l = (new RedisLock\Client())->leader("daemon", ["ttl" => 1]);
            echo $l->campaign(0) ? $l->term() : "no", "\n";
            sleep(60);');
        $term = (int) fgets($leader[1][1]);
        $this->assertGreaterThan(0, $term);
        $c = new Client();
        $next = $c->leader('daemon', ['ttl' => 1]);
        $this->assertFalse($next->campaign(1.5), 'renewed while its process lives');
        $this->assertSame($leader[2], $next->current()['holder']['pid'], 'who leads');
        $this->assertSame($term, $next->current()['term']);
        posix_kill($leader[2], SIGKILL);
        self::finish($leader);
        $killed = microtime(true);
        $this->assertTrue($next->campaign(10));
        $this->assertLessThan(5, microtime(true) - $killed, 'within the ttl and a recheck, not the wait');
        $this->assertGreaterThan($term, $next->term());
        $this->assertSame($next->term(), $next->current()['term']);
    }

    /**
     * Three daemons campaign in a loop for 4 s, each acting through the fence
     * while it leads and resigning now and then; one is SIGKILLed mid-term.
     * The accepted writes' terms never go back, and each term is one process's.
     */
    public function testNeverTwoLeadersActing(): void
    {
        $sha = $this->redis->script('load', self::FENCED);
        $daemon = '$c = new RedisLock\Client();
            $r = new Redis(); $r->connect("127.0.0.1", ' . RedisServer::$main->port . ');
            $l = $c->leader("daemon", ["ttl" => 0.5]);
            $end = microtime(true) + 4;
            while (microtime(true) < $end) {
                if (!$l->campaign(0.2)) { continue; }
                for ($i = 0; $i < 5 && $l->isLeader(); $i++) {
                    $r->evalSha("' . $sha . '", ["fence", "writes", $l->term(), getmypid()], 2);
                    usleep(20000);
                }
                $l->resign();
            }';
        $procs = [];
        foreach (range(1, 3) as $i) {
            $procs[] = self::start($daemon, ['extension' => self::phpredisExtensions()]);
        }
        usleep(1500000);
        posix_kill($procs[0][2], SIGKILL);
        foreach ($procs as $p) {
            self::finish($p);
        }
        $writes = array_map(fn ($w) => array_map('intval', explode(' ', $w)), $this->redis->lRange('writes', 0, -1));
        $this->assertGreaterThan(10, count($writes), 'the daemons led in turns');
        $pids = $going = [];
        $back = 0;
        foreach ($writes as [$term, $pid]) {
            $pids[$term][$pid] = true;
            if ($going !== [] && $term < end($going)) {
                $back++;
            }
            $going[] = $term;
        }
        $this->assertSame(0, $back, 'no write of an older term after a newer one');
        $this->assertSame([], array_filter($pids, fn ($p) => count($p) > 1), 'one process per term');
        $this->assertGreaterThan(2, count($pids), 'several terms');
    }

    public function testBadInputIsRefused(): void
    {
        $c = new Client();
        $this->assertAllRefused([
            fn () => $c->leader(''),
            fn () => $c->leader(null),
            fn () => $c->leader([]),
            fn () => $c->leader('x', ['ttl' => 0]),
            fn () => $c->leader('x', ['ttl' => -1]),
            fn () => $c->leader('x', ['ttl' => NAN]),
            fn () => $c->leader('x', ['ttl' => INF]),
            fn () => $c->leader('x', ['autoRenew' => false]),
            fn () => $c->leader('x', ['releaseAtRequestEnd' => 1]),
            fn () => $c->leader('x', 'options'),
            fn () => $c->leader('x')->campaign(-1),
            fn () => $c->leader('x')->campaign(NAN),
            fn () => $c->leader('x')->campaign('soon'),
        ]);
        $this->assertSame([], $this->sortedKeys());
        $this->expectExceptionMessage('Cannot create RedisLock\Leader with new');
        new RedisLock\Leader();
    }

    private function sortedKeys(): array
    {
        $keys = array_values(array_filter($this->redis->keys('*'), fn ($k) => !str_starts_with($k, 'redislock:holder:')));
        sort($keys);
        return $keys;
    }
}
