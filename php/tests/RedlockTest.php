<?php

use RedisLock\ConnectionException;
use RedisLock\LockLostException;
use RedisLock\NotHeldException;
use RedisLock\Redlock;

/**
 * RedisLock\Redlock over independent redis-servers.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class RedlockTest extends RedisLockTestCase
{
    /** @var RedisServer[] */
    private array $servers = [];

    private function nodes(int $n): array
    {
        for ($i = count($this->servers); $i < $n; $i++) {
            $this->servers[] = RedisServer::start();
        }
        return array_map(fn (RedisServer $s) => $s->dsn() . '?timeout=0.3&read_timeout=0.3', $this->servers);
    }

    protected function tearDown(): void
    {
        $this->servers = [];
    }

    public function testAMajorityHoldsIt(): void
    {
        $nodes = $this->nodes(3);
        $lock = new Redlock('job', ['nodes' => $nodes, 'ttl' => 10]);
        $this->assertFalse($lock->isHeld());
        $this->assertNull($lock->remaining());
        $this->assertTrue($lock->acquire());
        $this->assertTrue($lock->isHeld());
        $this->assertLessThanOrEqual(10.0, $lock->remaining(), 'validity never exceeds the ttl');
        $this->assertGreaterThan(9.0, $lock->remaining());
        foreach ($this->servers as $s) {
            $this->assertSame(1, $s->client()->exists('lock:{job}'));
        }
        $other = new Redlock('job', ['nodes' => $nodes]);
        $this->assertFalse($other->acquire(0.3));
        $this->assertTrue($lock->extend(20));
        $this->assertGreaterThan(19.0, $lock->remaining());
        $this->assertTrue($lock->release());
        foreach ($this->servers as $s) {
            $this->assertSame(0, $s->client()->exists('lock:{job}'));
        }
        $this->expectException(NotHeldException::class);
        $lock->release();
    }

    public function testTwoOfFiveDownIsFineThreeDownNamesThem(): void
    {
        $nodes = $this->nodes(5);
        $this->servers[0]->stop();
        $this->servers[1]->stop();
        $lock = new Redlock('down', ['nodes' => $nodes]);
        $this->assertTrue($lock->acquire());
        $this->assertTrue($lock->release());
        $this->servers[2]->stop();
        try {
            $lock->acquire();
            $this->fail('acquired without a majority');
        } catch (ConnectionException $e) {
            foreach (array_slice($this->servers, 0, 3) as $s) {
                $this->assertStringContainsString("127.0.0.1:{$s->port}", $e->getMessage());
            }
        }
        foreach (array_slice($this->servers, 3) as $s) {
            $this->assertSame(0, $s->client()->exists('lock:{down}'), 'released after the failed attempt');
        }
    }

    public function testALockLostOnAMajorityIsReported(): void
    {
        $nodes = $this->nodes(3);
        $lock = new Redlock('lost', ['nodes' => $nodes]);
        $this->assertTrue($lock->acquire());
        $this->servers[0]->client()->del('lock:{lost}');
        $this->servers[1]->client()->del('lock:{lost}');
        $this->assertFalse($lock->isHeld());
        $this->expectException(LockLostException::class);
        $lock->release();
    }

    public function testOptionsAreChecked(): void
    {
        $nodes = $this->nodes(1);
        foreach ([[[], ValueError::class], [['nodes' => []], ValueError::class], [['nodes' => 'x'], TypeError::class],
                  [['nodes' => [1]], TypeError::class], [['nodes' => $nodes, 'ttl' => 0], ValueError::class],
                  [['nodes' => $nodes, 'driftFactor' => 2], ValueError::class], [['nodes' => $nodes, 'tll' => 1], ValueError::class]]
                 as [$options, $class]) {
            try {
                new Redlock('o', $options);
                $this->fail(var_export($options, true));
            } catch (TypeError | ValueError $e) {
                $this->assertInstanceOf($class, $e, $e->getMessage());
            }
        }
        $lock = new Redlock('o', ['nodes' => $nodes]);
        $this->assertTrue($lock->acquire());
        unset($lock);
        $this->assertSame(0, $this->servers[0]->client()->exists('lock:{o}'), 'released when the object went away');
    }

    /**
     * Nodes as options arrays, as docs/topologies.md shows them; drift and
     * retryDelay say what is wrong with them (not "INF to wait").
     */
    public function testNodesAsOptionsArraysAndSpansSayWhatIsWrong(): void
    {
        $this->nodes(3);
        $nodes = array_map(fn ($s) => ['host' => '127.0.0.1', 'port' => $s->port], $this->servers);
        $lock = new Redlock('arrays', ['nodes' => $nodes]);
        $this->assertTrue($lock->acquire());
        $this->assertSame(1, $this->servers[2]->client()->exists('lock:{arrays}'));
        $this->assertTrue($lock->release());
        foreach (['drift' => -1, 'retryDelay' => INF] as $option => $bad) {
            try {
                new Redlock('o', ['nodes' => $nodes, $option => $bad]);
                $this->fail("$option accepted");
            } catch (ValueError $e) {
                $this->assertStringContainsString("option '$option' must be a finite number of seconds >= 0", $e->getMessage());
                $this->assertStringNotContainsString('INF to wait', $e->getMessage());
            }
        }
    }

    public function testSettingsThatCouldNeverWorkAreRefused(): void
    {
        $nodes = $this->nodes(3);
        foreach ([
            'never acquirable' => ['nodes' => $nodes, 'ttl' => 1, 'drift' => 1],
            'never acquirable by factor' => ['nodes' => $nodes, 'ttl' => 1, 'driftFactor' => 0.5, 'drift' => 0.5],
            'a node twice' => ['nodes' => [$nodes[0], $nodes[1], $nodes[0]]],
        ] as $case => $options) {
            try {
                new Redlock('s', $options);
                $this->fail($case);
            } catch (ValueError $e) {
                $this->assertNotSame('', $e->getMessage(), $case);
            }
        }
        $lock = new Redlock('s', ['nodes' => $nodes, 'retryDelay' => 0.5]);
        $this->expectException(ValueError::class);
        $lock->acquire(0.1);
    }

    public function testNodesAnsweringWithErrorsAreAServerException(): void
    {
        $servers = [];
        for ($i = 0; $i < 3; $i++) {
            $servers[] = RedisServer::startWith(['--maxmemory', '1', '--maxmemory-policy', 'noeviction']);
        }
        $lock = new Redlock('oom', ['nodes' => array_map(fn ($s) => $s->dsn(), $servers)]);
        // A server at maxmemory 1 now and then closes a new connection (Redis
        // 6.2 did once in CI): then that node was out of reach, not
        // answering, and the next try, on a new connection, hears it.
        for ($try = 1; ; $try++) {
            try {
                $lock->acquire();
                $this->fail('acquired with every node out of memory');
            } catch (RedisLock\ServerException $e) {
                $this->assertStringContainsString('OOM', $e->getMessage());
                break;
            } catch (RedisLock\ConnectionException $e) {
                $this->assertLessThan(3, $try, $e->getMessage());
                $this->assertStringContainsString('unexpected end of file', $e->getMessage());
            }
        }
    }

    public function testTenProcessesNeverOverlap(): void
    {
        $nodes = $this->nodes(3);
        $code = '
            $l = new RedisLock\Redlock("c", ["nodes" => ' . var_export($nodes, true) . ', "ttl" => 10, "retryDelay" => 0.02]);
            for ($i = 0; $i < 5; $i++) {
                if (!$l->acquire(60)) { exit(3); }
                $enter = hrtime(true); usleep(500); $exit = hrtime(true);
                echo "$enter $exit\n";
                $l->release();
            }';
        $outs = self::phpMany(array_fill(0, 10, $code), [], $exits);
        $this->assertSame(array_fill(0, 10, 0), $exits, implode("\n", $outs));
        $sections = self::records($outs);
        $this->assertCount(50, $sections);
        $overlaps = 0;
        for ($i = 1; $i < count($sections); $i++) {
            $overlaps += $sections[$i][0] < $sections[$i - 1][1] ? 1 : 0;
        }
        $this->assertSame(0, $overlaps);
    }

    public function testNodesFromTheIniEntry(): void
    {
        $this->nodes(3);
        $code = <<<'PHP'
            $lock = new RedisLock\Redlock('ini', ['ttl' => 10]);
            echo json_encode([$lock->acquire(), $lock->isHeld(), ini_get('redislock.redlock_nodes')]);
            PHP;
        $ini = ['redislock.redlock_nodes' => implode(' ', array_map(fn ($s) => $s->dsn(), $this->servers))];
        $out = json_decode(self::php($code, $ini), true);
        $this->assertSame([true, true, $ini['redislock.redlock_nodes']], $out);
        foreach ($this->servers as $s) {
            $this->assertSame(0, $s->client()->exists('lock:{ini}'), 'released at the end');
        }
        // phpinfo() shows the nodes without their passwords.
        $info = self::php('phpinfo(INFO_MODULES);', ['redislock.redlock_nodes' => 'redis://:pw@127.0.0.1:1 redis://127.0.0.1:2']);
        $this->assertStringContainsString('redislock.redlock_nodes => redis://:***@127.0.0.1:1 redis://127.0.0.1:2', $info);
        // With neither the option nor the entry, the constructor says so.
        try {
            new Redlock('x');
            $this->fail('no nodes');
        } catch (ValueError $e) {
            $this->assertStringContainsString("no 'nodes' and the redislock.redlock_nodes INI entry is empty", $e->getMessage());
        }
        // A bad DSN in the entry is refused by ini_set().
        $this->assertFalse(ini_set('redislock.redlock_nodes', 'redis://127.0.0.1:1 http://x'));
        $this->assertSame('', ini_get('redislock.redlock_nodes'));
    }

    /**
     * A Redlock is a hold like every other kind at the request boundary:
     * `Runtime::held()` lists its key, `endRequest()` releases it on every
     * node (counted once) and the object kept across requests holds
     * nothing after; with `releaseAtRequestEnd` false it stays its
     * object's to release.
     */
    public function testARedlockKeptAcrossRequestsEndsWithTheRequest(): void
    {
        $nodes = $this->nodes(3);
        $lock = new Redlock('kept', ['nodes' => $nodes, 'ttl' => 60]);
        $this->assertTrue($lock->acquire());
        $this->assertSame(['lock:{kept}'], RedisLock\Runtime::held());
        $this->assertSame(1, RedisLock\Runtime::endRequest());
        foreach ($this->servers as $s) {
            $this->assertSame(0, $s->client()->exists('lock:{kept}'), 'released on every node');
        }
        $this->assertSame([false, null, []], [$lock->isHeld(), $lock->remaining(), RedisLock\Runtime::held()]);
        try {
            $lock->release();
            $this->fail('released a lock the request end let go of');
        } catch (NotHeldException) {
        }
        $this->assertTrue($lock->acquire(), 'the object can take it again');

        $outliving = new Redlock('outliving', ['nodes' => $nodes, 'ttl' => 60, 'releaseAtRequestEnd' => false]);
        $this->assertTrue($outliving->acquire());
        $this->assertSame(1, RedisLock\Runtime::endRequest(), 'only the first');
        $this->assertTrue($outliving->isHeld());
        $this->assertGreaterThan(50, $outliving->remaining());
        $this->assertSame(['lock:{outliving}'], RedisLock\Runtime::held());
        $this->assertTrue($outliving->release());
        foreach ($this->servers as $s) {
            $this->assertSame(0, $s->client()->exists('lock:{outliving}'));
        }
        $this->expectException(TypeError::class);
        new Redlock('x', ['nodes' => $nodes, 'releaseAtRequestEnd' => 1]);
    }

    /**
     * A one-try acquire over two silent nodes (a listener that never
     * answers) and one live node meets each silent node once: the undo of
     * the failed try goes only to the node that took the lock (the silent
     * ones' keys, if they took any, run out with their lease), so a try
     * costs one node timeout, not two. Counted in connections, not time.
     */
    public function testAOneTryMeetsEachSilentNodeOnce(): void
    {
        [$live] = $this->nodes(1);
        $silent = [];
        $dsns = [$live];
        for ($i = 0; $i < 2; $i++) {
            $silent[$i] = stream_socket_server('tcp://127.0.0.1:0');
            $port = (int) substr(strrchr(stream_socket_get_name($silent[$i], false), ':'), 1);
            $dsns[] = "redis://127.0.0.1:$port?timeout=0.3&read_timeout=0.3";
        }
        $lock = new Redlock('quiet', ['nodes' => $dsns, 'ttl' => 10]);
        try {
            $lock->acquire(0);
            $this->fail('acquired without a majority');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('a majority of the 3 nodes is out of reach', $e->getMessage());
        }
        $this->assertSame(0, $this->servers[0]->client()->exists('lock:{quiet}'), 'undone where it was taken');
        foreach ($silent as $i => $server) {
            $met = 0;
            while (($c = @stream_socket_accept($server, 0)) !== false) {
                $met++;
                fclose($c);
            }
            $this->assertSame(1, $met, "silent node $i: connections");
        }
    }
}
