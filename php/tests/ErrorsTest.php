<?php

use RedisLock\ConnectionException;
use RedisLock\RedisLockException;
use RedisLock\ServerException;

/** @group server */

#[PHPUnit\Framework\Attributes\Group('server')]
final class ErrorsTest extends RedisLockTestCase
{
    /** A timeout under a millisecond counts as one (1e-10 was stored as 0, and every constructor threw). */
    public function testATimeoutBelowAMillisecondIsOne(): void
    {
        $out = self::php('ini_set("redislock.read_timeout", "1e-10"); ini_set("redislock.connect_timeout", "1e-10");
            new RedisLock(); new RedisLock\Client("redis://127.0.0.1:1?timeout=1e-10&read_timeout=1e-10"); echo "made\n";');
        $this->assertSame("made\n", $out);
    }

    public function testRedisDownThrowsTheExtensionsExceptionNamingTheServer(): void
    {
        $port = RedisServer::freePort();
        $calls = [
            fn () => (new RedisLock("redis://user:s3cret@127.0.0.1:$port"))->lock('x'),
            fn () => (new RedisQueue("redis://:s3cret@127.0.0.1:$port"))->pop('q'),
            function () use ($port) {
                ini_set('redislock.default_dsn', "redis://127.0.0.1:$port");
                try {
                    Lock_Service::addLock(1);
                } finally {
                    ini_set('redislock.default_dsn', RedisServer::$main->dsn());
                }
            },
        ];
        foreach ($calls as $call) {
            try {
                $call();
                $this->fail('no exception');
            } catch (ConnectionException $e) {
                $this->assertInstanceOf(RedisLockException::class, $e);
                $this->assertInstanceOf(RuntimeException::class, $e);
                $this->assertStringContainsString("127.0.0.1:$port", $e->getMessage());
                $this->assertStringNotContainsString('s3cret', $e->getMessage());
            }
        }
    }

    public function testAServerThatNeverAnswersTimesOut(): void
    {
        // A listening socket that accepts connections but never replies.
        $silent = stream_socket_server('tcp://127.0.0.1:0');
        $addr = stream_socket_get_name($silent, false);
        $lock = new RedisLock(['dsn' => "redis://$addr", 'read_timeout' => 0.2]);
        $this->expectException(ConnectionException::class);
        $this->expectExceptionMessage($addr);
        $lock->lock('x');
    }

    public function testRecoveryAfterRedisRestarts(): void
    {
        $server = RedisServer::start();
        $lock = new RedisLock($server->dsn());
        $this->assertTrue($lock->lock('r'));
        $server->stop();
        try {
            $lock->isLocking('r');
            $this->fail('no exception while Redis is down');
        } catch (ConnectionException) {
        }
        $server->restart();
        $this->assertSame('', $lock->isLocking('r'), 'the restarted server lost the key');
        $this->assertTrue($lock->lock('r'));
        $this->assertTrue($lock->unlock('r'));
    }

    public function testARequestEndsCleanlyWhenRedisDiedWhileLocksWereHeld(): void
    {
        $server = RedisServer::start();
        $flag = tempnam(sys_get_temp_dir(), 'flag-');
        // The child takes three locks, then its Redis dies before the request
        // ends: releasing them at request end must fail quietly.
        $p = proc_open(self::command('
            $l = new RedisLock(["dsn" => "' . $server->dsn() . '", "timeout" => 0.2]);
            foreach (["a", "b", "c"] as $n) { $l->lock($n, 0, 60); }
            file_put_contents("' . $flag . '", "ready");
            while (file_get_contents("' . $flag . '") !== "stopped") { usleep(10000); }
            echo "done";'), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        for ($i = 0; $i < 500 && file_get_contents($flag) !== 'ready'; $i++) {
            usleep(10000);
        }
        $this->assertSame(3, count($server->client()->keys('Lock:*')));
        $server->stop();
        file_put_contents($flag, 'stopped');
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame('done', $out);
        $this->assertSame(0, proc_close($p), 'no crash in request shutdown');
        unlink($flag);
    }

    public function testAnErrorReplyIsAServerException(): void
    {
        $this->redis->set('Queue:str', 'not a zset');
        try {
            (new RedisQueue())->enqueue('str', 'x');
            $this->fail('enqueued on a string');
        } catch (ServerException $e) {
            $this->assertMatchesRegularExpression('/answered with an error: WRONGTYPE key Queue:str holds a string, where redislock keeps a [a-z ]+$/', $e->getMessage());
        }
        // Where a read meets it first (reserve reads the lease ends before
        // it writes): named all the same, and nothing changed.
        $this->redis->del('Queue:str');
        $this->redis->set('{Queue:str}:leased', 'not a zset either');
        $queue = (new RedisLock\Client())->queue('str');
        try {
            $queue->reserve(1, 30);
            $this->fail('reserved from a string');
        } catch (ServerException $e) {
            $this->assertStringEndsWith('answered with an error: WRONGTYPE key {Queue:str}:leased holds a string, where redislock keeps a zset', $e->getMessage());
        }
        // (Not even noted as a worker: a reserve that fails writes nothing.)
        $this->assertSame(['{Queue:str}:leased'], $this->redis->keys('*Queue:str*'));
        $this->assertSame('not a zset either', $this->redis->get('{Queue:str}:leased'));
    }

    /**
     * A lock's key holding another type (written by hand): the seed API, the
     * object API and an operator's look name it, and nothing is left in its
     * line.
     */
    public function testALockKeyOfAnotherTypeIsNamed(): void
    {
        $this->redis->hSet('Lock:h', 'by', 'hand');
        $this->redis->hSet('lock:{h}', 'by', 'hand');
        foreach ([
            'Lock:h' => fn () => (new RedisLock())->lock('h', 0, 30),
            'lock:{h}' => fn () => (new RedisLock\Client())->lock('h', ['ttl' => 30])->acquire(0.2),
            // An operator's look at it.
            'Lock:h ' => fn () => (new RedisLock\Client())->lockState('h', 'seed'),
        ] as $key => $call) {
            $key = trim($key);
            try {
                $call();
                $this->fail("took $key");
            } catch (ServerException $e) {
                $this->assertStringEndsWith("answered with an error: WRONGTYPE key $key holds a hash, where redislock keeps a string", $e->getMessage());
            }
        }
        $keys = $this->redis->keys('*');
        sort($keys);
        $this->assertSame(['Lock:h', 'lock:{h}'], $keys);
    }

    /** A held lock whose line holds another type: an operator's list of locks names the line. */
    public function testAListOfLocksNamesALineOfAnotherType(): void
    {
        $lock = (new RedisLock\Client())->lock('l', ['ttl' => 30]);
        $this->assertTrue($lock->acquire());
        $this->redis->hSet('lock:{l}:line', 'by', 'hand');
        try {
            (new RedisLock\Client())->locks('*');
            $this->fail('listed');
        } catch (ServerException $e) {
            $this->assertStringEndsWith('answered with an error: WRONGTYPE key lock:{l}:line holds a hash, where redislock keeps a list', $e->getMessage());
        }
        $this->assertSame(['by' => 'hand'], $this->redis->hGetAll('lock:{l}:line'));
        $this->assertTrue($lock->isHeld());
    }

    /**
     * A reply the extension cannot read (a process description written by
     * hand with bytes that are not UTF-8): a ServerException that says so,
     * not a ConnectionException, and the connection stays.
     */
    public function testAReplyThatCannotBeReadIsAServerException(): void
    {
        $client = new RedisLock\Client();
        $lock = $client->lock('d', ['ttl' => 30]);
        $this->assertTrue($lock->acquire());
        // The process behind the lock's owner token (its first 12
        // characters), as it describes itself (or would have, had an
        // earlier test not flushed its description).
        $owner = $this->redis->get('lock:{d}');
        $this->redis->hSet('redislock:holder:' . substr($owner, 0, 12), 'host', "\xff\xfe");
        try {
            $client->lockState('d');
            $this->fail('read');
        } catch (ServerException $e) {
            $this->assertStringContainsString('answered with a reply redislock cannot read: ', $e->getMessage());
        }
        $this->assertTrue($lock->isHeld());
    }

    /** A peer that is not Redis (an HTTP proxy on the port) is named as such, quoted. */
    public function testAPeerThatIsNotRedisIsSaidToBeOne(): void
    {
        $port = RedisServer::freePort();
        $proxy = self::start(<<<PHP
            \$server = stream_socket_server('tcp://127.0.0.1:$port');
            echo "up\\n";
            while (\$c = stream_socket_accept(\$server, 30)) {
                fread(\$c, 1000);
                fwrite(\$c, "HTTP/1.1 400 Bad Request\\r\\nContent-Length: 0\\r\\n\\r\\n");
                fclose(\$c);
            }
            PHP);
        $this->assertSame("up\n", fgets($proxy[1][1]));
        try {
            foreach ([fn () => (new RedisLock("redis://127.0.0.1:$port"))->lock('x'), fn () => (new RedisLock\Client("redis://127.0.0.1:$port"))->queue('q')->enqueue('a')] as $call) {
                try {
                    $call();
                    $this->fail('a lock on an HTTP server');
                } catch (ConnectionException $e) {
                    $this->assertSame(
                        "redislock: Redis at 127.0.0.1:$port is unavailable: the server there does not speak the Redis protocol (it answered 'HTTP/1.1 400 Bad Request')",
                        $e->getMessage(),
                    );
                }
            }
        } finally {
            proc_terminate($proxy[0]);
            self::finish($proxy);
        }
    }

    /** The ids of this process's connections, as Redis lists them. */
    private function myConnections(Redis $redis): array
    {
        $ids = [];
        foreach ($redis->client('list') as $c) {
            if ($c['name'] === 'redislock-' . getmypid()) {
                $ids[] = $c['id'];
            }
        }
        return $ids;
    }

    /**
     * Redis answered: a value of the wrong kind (a stock holding "2.5") and a
     * write on a read-only replica are ServerExceptions that name the key or
     * say READONLY, nothing changes, and the connection stays.
     */
    public function testAnAnswerThatRefusesIsAServerExceptionAndTheConnectionStays(): void
    {
        $client = new RedisLock\Client();
        $stock = $client->stock('{half}', ['orders' => '{half}:orders']);
        $stock->set(3);
        $this->redis->set('stock:{half}#6:{half}', '2.5');
        // This process' connections to the main server: other test classes
        // run before this one may have left some of their own (another
        // database), so the check is that none is dropped or added.
        $before = $this->myConnections($this->redis);
        $this->assertNotEmpty($before);
        foreach ([fn () => $stock->take(1, 'buyer', ['perBuyer' => 2, 'task' => 'order-1']), fn () => $stock->giveBack(1, 'buyer')] as $call) {
            try {
                $call();
                $this->fail('a stock of 2.5 units');
            } catch (ServerException $e) {
                $this->assertStringContainsString('stock:{half}#6:{half} holds "2.5", not a whole number', $e->getMessage());
            }
        }
        $this->assertSame('2.5', $this->redis->get('stock:{half}#6:{half}'));
        $this->assertFalse($this->redis->exists('stock:{half}#6:{half}:buyers') > 0, 'no buyer counted');
        $this->assertSame(0, $this->redis->zCard('Queue:{half}:orders'), 'no order task');
        $this->assertSame($before, $this->myConnections($this->redis), 'the connection stayed');

        $primary = RedisServer::start();
        $replica = RedisServer::startWith(['--replicaof', '127.0.0.1', (string) $primary->port]);
        $lock = new RedisLock($replica->dsn());
        $seen = [];
        for ($i = 0; $i < 2; $i++) {
            try {
                $lock->lock('x');
                $this->fail('locked on a replica');
            } catch (ServerException $e) {
                // Redis' own words, without the script's sha and line.
                $this->assertStringEndsWith("answered with an error: READONLY You can't write against a read only replica.", $e->getMessage());
            }
            $seen[] = $this->myConnections($replica->client());
        }
        $this->assertCount(1, $seen[0]);
        $this->assertSame($seen[0], $seen[1], 'the connection stayed');
    }

    public function testTheExceptionsArePlainClassesUsersCanThrowAndExtend(): void
    {
        $e = new ConnectionException('mine', 7);
        $this->assertSame('mine', $e->getMessage());
        $this->assertSame(7, $e->getCode());
        $sub = new class ('sub') extends ServerException {};
        $this->assertInstanceOf(RedisLockException::class, $sub);
    }

    public function testBadDsnsAndOptionsAreValueErrors(): void
    {
        foreach (['', 'http://x', 'redis://h:notaport', 'redis://:pw@h:1?bogus=1', ['bogus' => 1],
                  ['port' => 70000], ['timeout' => -1], ['read_timeout' => NAN], [1, 2]] as $bad) {
            try {
                new RedisLock($bad);
                $this->fail('accepted ' . var_export($bad, true));
            } catch (ValueError $e) {
                $this->assertStringNotContainsString('pw@', $e->getMessage());
            }
        }
        foreach ([1, 1.5, true, new stdClass()] as $bad) {
            try {
                new RedisQueue($bad);
                $this->fail('accepted ' . var_export($bad, true));
            } catch (TypeError) {
                $this->addToAssertionCount(1);
            }
        }
    }

    public function testIniSettingsAreValidated(): void
    {
        $this->assertFalse(ini_set('redislock.default_dsn', 'nonsense'));
        $this->assertFalse(ini_set('redislock.connect_timeout', '-1'));
        $this->assertFalse(ini_set('redislock.read_timeout', 'abc'));
        $this->assertFalse(ini_set('redislock.release_at_request_end', 'maybe'));
        $this->assertSame(RedisServer::$main->dsn(), ini_get('redislock.default_dsn'));
        $this->assertTrue((new RedisLock())->lock('still works'));
    }

    /**
     * A bad value in php.ini (or -d, or a PHP-FPM pool's php_value) is said
     * in a startup warning, without the password, and the entry keeps its
     * default: nobody checks a return value there. ini_set() only returns
     * false (testIniSettingsAreValidated).
     */
    public function testABadIniValueIsAWarningAtStartup(): void
    {
        $out = self::php('echo ini_get("redislock.default_dsn"), "|", ini_get("redislock.read_timeout"), "|";
            var_dump(ini_set("redislock.read_timeout", "abc"));',
            ['redislock.default_dsn' => 'redis://:s3cret@db.internal:63790x', 'redislock.read_timeout' => 'abc']);
        $this->assertStringContainsString("PHP Startup: redislock.default_dsn: invalid DSN 'redis://:***@db.internal:63790x': invalid port number", $out);
        $this->assertStringContainsString("'redislock.read_timeout' must be a number of seconds in (0, 86400], got 'abc'; the setting is ignored", $out);
        $this->assertSame(2, substr_count($out, 'the setting is ignored'), $out);
        $this->assertStringContainsString('redis://127.0.0.1:6379|2|bool(false)', $out);
        $this->assertStringNotContainsString('s3cret', $out);
        // A value that is not a plain word is not shown (it may be a DSN
        // with its password, set in the wrong entry).
        $out = self::php('echo "ran";', ['redislock.release_at_request_end' => 'redis://:s3cret@h', 'redislock.connect_timeout' => 'soon']);
        $this->assertStringContainsString("redislock.release_at_request_end must be on or off, got a value that is not shown (not a plain word or number); the setting is ignored", $out);
        $this->assertStringContainsString("'redislock.connect_timeout' must be a number of seconds in (0, 86400], got 'soon'", $out);
        $this->assertStringNotContainsString('s3cret', $out);
        // phpinfo() lists them (PHP-FPM shows no startup warning), and not
        // the refusal of ini_set(), which returned false to its caller.
        $out = self::php('ini_set("redislock.connect_timeout", "-1"); phpinfo(INFO_MODULES);',
            ['redislock.default_dsn' => 'redis://:s3cret@db.internal:63790x', 'display_startup_errors' => '0']);
        $this->assertStringContainsString("refused from configuration => redislock.default_dsn: invalid DSN 'redis://:***@db.internal:63790x'", $out);
        $this->assertSame(1, substr_count($out, 'refused from configuration'), $out);
        $this->assertStringNotContainsString('s3cret', $out);
    }

    public function testPhpinfoShowsTheSettingsWithoutThePassword(): void
    {
        $out = self::php('phpinfo(INFO_MODULES);', ['redislock.default_dsn' => 'redis://app:s3cret@127.0.0.1:6379/2']);
        $this->assertStringContainsString('redislock support => enabled', $out);
        $this->assertStringContainsString('redis://app:***@127.0.0.1:6379/2', $out);
        $this->assertStringContainsString('redislock.release_at_request_end => On', $out);
        $this->assertStringNotContainsString('s3cret', $out);
        // Every INI entry has its row, with its effective value.
        $entries = json_decode(self::php('echo json_encode(array_keys(ini_get_all("redislock")));'), true);
        $this->assertContains('redislock.partitions', $entries);
        foreach ($entries as $entry) {
            $this->assertMatchesRegularExpression('/^' . preg_quote($entry, '/') . ' => /m', $out, "$entry in phpinfo()");
        }
        $out = self::php('phpinfo(INFO_MODULES);', ['redislock.partitions' => 'orders=4 mail=2']);
        $this->assertStringContainsString('redislock.partitions => orders=4 mail=2', $out);
    }

    public function testAPrefixFromTheIniApplies(): void
    {
        $out = self::php('$l = new RedisLock(); $l->lock("p", 0, 60); echo Lock_Service::addLock(5);',
                         ['redislock.prefix' => 'app:', 'redislock.release_at_request_end' => 'off']);
        $this->assertTrue((bool) $this->redis->exists('app:Lock:p'));
        $this->assertSame($out, $this->redis->get('app:order_lock_5'));
        $this->assertSame($out, $this->redis->get('app:lock_unique_id'));
    }

    /** A password needed and none given: said plainly, on every call. */
    public function testAMissingPasswordIsSaidPlainlyEveryTime(): void
    {
        $server = RedisServer::startWith(['--requirepass', 'sekret']);
        $q = (new RedisLock\Client($server->dsn()))->queue('x');
        $lock = new RedisLock($server->dsn());
        foreach ([fn () => $q->enqueue('a'), fn () => $q->enqueue('b'), fn () => $lock->lock('a'), fn () => $q->reserve()] as $call) {
            try {
                $call();
                $this->fail('no error without a password');
            } catch (RedisLock\RedisLockException $e) {
                $this->assertStringContainsString('authentication required', $e->getMessage());
                $this->assertStringContainsString("127.0.0.1:{$server->port}", $e->getMessage());
            }
        }
    }
}
