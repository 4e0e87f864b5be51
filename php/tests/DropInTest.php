<?php

/**
 * The drop-in classes in real apps: a host whose apps have their own,
 * unrelated classes named `RedisLock`, `RedisQueue` or `Lock_Service`
 * (declared or autoloaded) keeps running them; an app without one gets the
 * extension's. Constructors as the originals were called (a connection
 * name, an injected phpredis connection), the originals' helper
 * `Lock_Service::getRedisConn()`, and the defaults php.ini may change.
 */
final class DropInTest extends RedisLockTestCase
{
    /** Unrelated classes of the seed names, each in a style public apps use. */
    private const OWN = [
        // A config-array constructor.
        'array' => '<?php class RedisLock { private $c; public function __construct(array $c) { $this->c = $c; }
            public function lock($k) { return "array " . $this->c["host"] . " $k"; } }',
        // An injected client, any object.
        'injected' => '<?php class RedisLock { private $r; public function __construct($redis) { $this->r = $redis; }
            public function acquire($k) { return "injected " . get_class($this->r) . " $k"; } }',
        // A singleton, declared in another case (class names ignore case).
        'singleton' => '<?php class redisLock { private static $i; public static function getInstance($redis) { return self::$i ??= new self(); }
            public function tryLock($k) { return "singleton $k"; } }',
        // Static methods.
        'static' => '<?php class RedisLock { public static function addLock($k, $ttl) { return "static $k $ttl"; } }',
        'queue' => '<?php class RedisQueue { public function push($job) { return "queue $job"; } }',
        'service' => '<?php class Lock_Service { public static function addLock($id) { return "service $id"; } }',
    ];

    /** How each style's app uses its own class. */
    private const USE = [
        'array' => 'echo (new RedisLock(["host" => "h"]))->lock("k");',
        'injected' => 'echo (new RedisLock(new ArrayObject()))->acquire("k");',
        'singleton' => 'echo RedisLock::getInstance(null)->tryLock("k");',
        'static' => 'echo RedisLock::addLock("k", 5);',
        'queue' => 'echo (new RedisQueue())->push("j");',
        'service' => 'echo Lock_Service::addLock(7);',
    ];

    private const EXPECTED = [
        'array' => 'array h k', 'injected' => 'injected ArrayObject k', 'singleton' => 'singleton k',
        'static' => 'static k 5', 'queue' => 'queue j', 'service' => 'service 7',
    ];

    /** An app of the extension's classes: what it prints, as the originals return it. */
    private const EXTENSION_APP = '$l = new RedisLock(); $q = new RedisQueue();
        echo get_class($l), " ", (new ReflectionClass("RedisLock"))->isInternal() ? "internal" : "user", " ",
            var_export($l->lock("dropin-app"), true), " ", is_int(Lock_Service::addLock("dropin-app", 5)) ? "int" : "no", " ",
            var_export($q->enqueue("dropin-app", 1), true);';

    public static function tearDownAfterClass(): void
    {
        exec('rm -rf ' . escapeshellarg(sys_get_temp_dir() . '/redislock-dropin-' . getmypid()));
    }

    private static function files(): string
    {
        $dir = sys_get_temp_dir() . '/redislock-dropin-' . getmypid();
        @mkdir($dir);
        foreach (self::OWN as $style => $code) {
            file_put_contents("$dir/$style.php", $code);
        }
        return $dir;
    }

    /** The app of `$style`, loading its class by require_once or by an autoloader. */
    private static function app(string $dir, string $style, bool $autoload): string
    {
        $load = $autoload
            ? 'spl_autoload_register(function ($c) { if (in_array(strtolower($c), ["redislock", "redisqueue", "lock_service"], true)) { require_once "' . "$dir/$style.php" . '"; } });'
            : 'require_once "' . "$dir/$style.php" . '";';
        return $load . self::USE[$style];
    }

    public function testAppsWithTheirOwnClassesOfTheseNamesRunUnchangedUnderTheCli(): void
    {
        $dir = self::files();
        foreach (self::OWN as $style => $_) {
            foreach ([false, true] as $autoload) {
                $out = self::php(self::app($dir, $style, $autoload), [], $exit);
                $how = $autoload ? 'autoloaded' : 'required';
                $this->assertSame(0, $exit, "$style, $how: $out");
                $this->assertSame(self::EXPECTED[$style], $out, "$style, $how");
            }
        }
        $out = self::php(self::EXTENSION_APP, [], $exit);
        $this->assertSame('RedisLock internal true int true', $out, 'an app without its own class gets the extension\'s');
    }

    /**
     * @return array<string, array{array<string, string>}> without opcache, and
     *                                                     with it (as PHP-FPM runs in production)
     */
    public static function opcache(): array
    {
        $dir = ini_get('extension_dir');
        $with = is_file("$dir/opcache.so")
            ? ['zend_extension' => 'opcache', 'opcache.enable' => '1', 'opcache.validate_timestamps' => '1', 'opcache.revalidate_freq' => '0']
            : null;
        return ['without opcache' => [[]]] + ($with === null ? [] : ['with opcache' => [$with]]);
    }

    /** @dataProvider opcache */

    #[PHPUnit\Framework\Attributes\DataProvider('opcache')]
    public function testAppsOfBothKindsShareAPhpFpmWorker(array $ini): void
    {
        $dir = self::files();
        $scripts = ['extension.php' => '<?php ' . self::EXTENSION_APP,
                    'subclass.php' => '<?php class MyLock extends RedisLock { public function lock($n, $t = 0, $e = 15, $w = 100000) { return parent::lock("my-$n", $t, $e, $w); } }
                        echo get_parent_class(new MyLock()), " ", var_export((new MyLock())->lock("sub"), true);',
                    'opcache.php' => '<?php echo function_exists("opcache_get_status") && (opcache_get_status(false)["opcache_enabled"] ?? false) ? "on" : "off";'];
        foreach (self::OWN as $style => $_) {
            $scripts["$style-required.php"] = '<?php ' . self::app($dir, $style, false);
            $scripts["$style-autoloaded.php"] = '<?php ' . self::app($dir, $style, true);
        }
        // One worker serves every app in turn: what one request declares
        // or enters is gone at the next.
        $pool = new FpmPool($scripts, ['pm.max_children' => '1'], $ini);
        try {
            $this->assertTrue($pool->started());
            if ($ini !== []) {
                $this->assertSame('on', $pool->request('opcache.php'), 'opcache is on in the pool');
            }
            for ($round = 0; $round < 2; $round++) {
                foreach (self::OWN as $style => $_) {
                    $this->assertSame(self::EXPECTED[$style], $pool->request("$style-required.php"), "$style, required");
                    $this->assertSame('RedisLock internal true int true', $pool->request('extension.php'), "after $style");
                    $this->assertSame(self::EXPECTED[$style], $pool->request("$style-autoloaded.php"), "$style, autoloaded");
                    $this->assertSame('RedisLock true', $pool->request('subclass.php'), "a seed-era subclass, after $style");
                    $this->redis->flushAll();
                }
            }
        } finally {
            $pool->stop();
        }
    }

    public function testWhatTheAppUsesFirstHoldsTheName(): void
    {
        $dir = self::files();
        // The extension's class was entered first: declaring another of
        // the name later in the same request is PHP's usual fatal error.
        $out = self::php('class_exists("RedisLock"); require "' . "$dir/static.php" . '";', [], $exit);
        $this->assertNotSame(0, $exit);
        // (PHP 8.4 says "redeclare".)
        $this->assertMatchesRegularExpression('/Cannot (re)?declare class RedisLock/', $out);
        // Looked up without autoloading, the name is free until used.
        $out = self::php('var_dump(class_exists("RedisLock", false)); new RedisLock(); var_dump(class_exists("RedisLock", false));');
        $this->assertSame("bool(false)\nbool(true)\n", $out);
        // A subclass of the seed era still extends the extension's class.
        $out = self::php('class MyLock extends RedisLock {} echo get_parent_class(new MyLock());');
        $this->assertSame('RedisLock', $out);
    }

    public function testIsLockingAndDequeueReturnTheOriginalsShapes(): void
    {
        $lock = new RedisLock();
        $this->assertFalse($lock->isLocking('shape'), 'never taken');
        $this->assertTrue($lock->lock('shape', 0, 30));
        [$now] = $this->redis->time();
        $until = $lock->isLocking('shape');
        $this->assertIsString($until);
        $this->assertEqualsWithDelta((int) $now + 30, (int) $until, 1, 'the expiry time on the server\'s clock');
        $this->assertTrue($lock->expire('shape', 100));
        $this->assertEqualsWithDelta((int) $now + 100, (int) $lock->isLocking('shape'), 1);
        $this->redis->del('Lock:shape');
        $this->assertSame('', $lock->isLocking('shape'), 'taken, then gone');
        $this->assertTrue($lock->lock('shape'));
        $this->assertTrue($lock->unlock('shape'));
        $this->assertFalse($lock->isLocking('shape'), 'released');

        $q = new RedisQueue();
        $q->enqueue('shape', 5);
        $task = $q->top('shape');
        $this->assertSame(1.0, $q->dequeue('shape', 5, $task['score']));
        $this->assertFalse($q->dequeue('shape', 5, $task['score']));
    }

    public function testAConnectionNameSelectsAConfiguredServer(): void
    {
        $dsn = RedisServer::$main->dsn();
        $out = self::php('$l = new RedisLock("lock"); $l->lock("named"); $q = new RedisQueue("queue"); $q->enqueue("named", 1);
            echo Lock_Service::addLock(9) > 0 ? "ok" : "no";', ['redislock.connections' => "lock=$dsn/2 queue=$dsn/3 lock_service=$dsn/4", 'redislock.release_at_request_end' => '0'], $exit);
        $this->assertSame('ok', $out);
        $this->redis->select(2);
        $this->assertSame(1, $this->redis->exists('Lock:named'));
        $this->redis->select(3);
        $this->assertSame(1, $this->redis->zCard('Queue:named'));
        $this->redis->select(4);
        $this->assertSame(1, $this->redis->exists('order_lock_9'));
        $this->redis->select(0);

        try {
            new RedisLock('cache');
            $this->fail('an unknown name');
        } catch (ValueError $e) {
            $this->assertStringContainsString("no connection named 'cache'", $e->getMessage());
            $this->assertStringContainsString('redislock.connections', $e->getMessage());
        }
        $this->assertTrue((new RedisLock('default'))->lock('default-name'), '"default" is the default server');
        $this->assertFalse(ini_set('redislock.connections', 'bad name=redis://h'), 'refused');
        $this->assertFalse(ini_set('redislock.connections', 'x=http://h'), 'a DSN that does not parse');
    }

    public function testAnInjectedPhpredisConnectionIsItsServerDatabaseAndPrefix(): void
    {
        $redis = RedisServer::$main->client();
        $redis->select(5);
        $redis->setOption(Redis::OPT_PREFIX, 'app:');
        $lock = new RedisLock($redis);
        $this->assertTrue($lock->lock('injected'));
        $queue = new RedisQueue($redis);
        $queue->enqueue('injected', 1);
        $redis->setOption(Redis::OPT_PREFIX, '');
        $this->assertSame(1, $redis->exists('app:Lock:injected'));
        $this->assertSame(1, $redis->zCard('app:Queue:injected'));
        try {
            new RedisLock(new Redis());
            $this->fail('a \Redis that is not connected');
        } catch (ValueError $e) {
            $this->assertStringContainsString('not connected', $e->getMessage());
        }
    }

    public function testAnInjectedPredisClientIsItsServerDatabaseAndPrefix(): void
    {
        if (!class_exists(Predis\Client::class) && is_file('/usr/share/php/Predis/autoload.php')) {
            require_once '/usr/share/php/Predis/autoload.php';
        }
        if (!class_exists(Predis\Client::class)) {
            $this->markTestSkipped('Predis is not installed (Debian has it as php-nrk-predis where the release carries it)');
        }
        $predis = new Predis\Client(['host' => '127.0.0.1', 'port' => RedisServer::$main->port, 'database' => 6], ['prefix' => 'shop:']);
        $lock = new RedisLock($predis);
        $this->assertTrue($lock->lock('predis'));
        $this->redis->select(6);
        $this->assertSame(1, $this->redis->exists('shop:Lock:predis'));
    }

    public function testGetRedisConnIsAPhpredisConnectionToTheOrderLocksServer(): void
    {
        $id = Lock_Service::addLock('conn', 60);
        $redis = Lock_Service::getRedisConn();
        $this->assertInstanceOf(Redis::class, $redis);
        $this->assertSame((string) $id, $redis->get('order_lock_conn'));
        $explicit = Lock_Service::getRedisConn('127.0.0.1', RedisServer::$main->port);
        $this->assertSame((string) $id, $explicit->get('order_lock_conn'));
        $this->expectException(RedisException::class);
        Lock_Service::getRedisConn('127.0.0.1', 1);
    }

    public function testGetRedisConnSaysWhyWithoutPhpredis(): void
    {
        $out = self::php('try { Lock_Service::getRedisConn(); } catch (Error $e) { echo get_class($e), ": ", $e->getMessage(); }');
        $this->assertStringStartsWith('Error: Lock_Service::getRedisConn() returns a phpredis \Redis, and phpredis is not loaded', $out);
    }

    public function testPhpIniChangesTheDefaultsCopiesChanged(): void
    {
        $out = self::php('$id = Lock_Service::addLock("ini"); $l = new RedisLock(); $l->lock("ini");
            $r = Lock_Service::getRedisConn(); echo $r->ttl("order_lock_ini"), " ", $r->ttl("Lock:ini");
            echo " ", (new ReflectionMethod("Lock_Service", "addLock"))->getParameters()[1]->getDefaultValue();',
            ['extension' => self::phpredisExtensions(), 'redislock.lock_service_expire' => '30', 'redislock.redis_lock_expire' => '40']);
        $this->assertSame('30 40 86400', $out, 'the defaults in force; reflection shows the original\'s');
        // An explicit argument wins, and the article's values stay the defaults.
        $explicit = new RedisLock();
        $this->assertTrue($explicit->lock('explicit', 0, 50));
        $this->assertGreaterThan(45, $this->redis->ttl('Lock:explicit'));
        Lock_Service::addLock('article');
        $this->assertGreaterThan(86000, $this->redis->ttl('order_lock_article'));
        // The wait: a lock held elsewhere is waited for as php.ini says.
        $holder = new RedisLock();
        $this->assertTrue($holder->lock('waited', 0, 1));
        $this->assertTrue(ini_set('redislock.redis_lock_timeout', '3') !== false);
        try {
            $this->assertTrue((new RedisLock())->lock('waited'), 'waited up to 3 s for the 1 s lease');
        } finally {
            ini_restore('redislock.redis_lock_timeout');
        }
        foreach (['redislock.lock_service_expire' => '0', 'redislock.redis_lock_expire' => '-1', 'redislock.redis_lock_timeout' => 'NAN'] as $k => $v) {
            $this->assertFalse(ini_set($k, $v), "$k=$v is refused");
        }
    }
}
