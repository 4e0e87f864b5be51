<?php

require_once __DIR__ . '/stubs/describe.php';
require_once __DIR__ . '/stubs/StubTypes.php';

use RedisLock\Client;
use RedisLock\Redlock;

/**
 * The published stubs (stubs/redislock.php) against the built extension:
 * the same classes, methods, parameters, defaults and native types as its
 * reflection; PHPDoc that parses, fits the native types and names classes
 * that exist; and methods that return what their @return says.
 */
final class StubsTest extends RedisLockTestCase
{
    private const STUBS = __DIR__ . '/../../stubs/redislock.php';

    private static ?array $stubs = null;

    /** @var array<string, true> the Class::method whose @return a call checked */
    private array $checked = [];

    /** The stubs as reflection sees them in a PHP without the extension. */
    private static function stubs(): array
    {
        if (self::$stubs === null) {
            $json = shell_exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', __DIR__ . '/stubs/describe.php', self::STUBS])));
            self::$stubs = json_decode((string) $json, true, flags: JSON_THROW_ON_ERROR);
        }
        return self::$stubs;
    }

    private static function withoutDocs(array $class): array
    {
        unset($class['doc']);
        foreach ($class['methods'] as &$m) {
            unset($m['doc']);
        }
        sort($class['interfaces']);
        return $class;
    }

    public function testTheStubsDeclareTheExtensionsClassesAndSignatures(): void
    {
        // The seed classes enter the class table only when the app uses
        // them (their names yield to an app's own classes): listed by name.
        $names = array_merge((new ReflectionExtension('redislock'))->getClassNames(), ['Lock_Service', 'RedisLock', 'RedisQueue']);
        sort($names);
        $ext = stub_describe($names);
        $stubs = self::stubs();
        $this->assertSame(array_keys($ext), array_keys($stubs), 'the same classes');
        $private = 0;
        foreach ($ext as $class => $e) {
            $s = $stubs[$class];
            $ctor = $s['methods']['__construct']['modifiers'] ?? [];
            if (in_array('private', $ctor, true)) {
                // Where `new` fails, saying what to call instead, the
                // stub's constructor is private (so analysers flag `new`).
                try {
                    new $class('x', 1);
                    $this->fail("new $class() works: its stub constructor must be public");
                } catch (Error $x) {
                    $this->assertMatchesRegularExpression('/^Cannot create ' . preg_quote($class, '/') . ' with new: .*(\$(client|queue)->|RedisLock\\\\(Runtime|Telemetry)::)[a-zA-Z]+\(/', $x->getMessage());
                }
                $s['methods']['__construct'] = $e['methods']['__construct'];
                $private++;
            } elseif ($ctor !== []) {
                $args = array_fill(0, (new ReflectionMethod($class, '__construct'))->getNumberOfRequiredParameters(), 'x');
                try {
                    new $class(...$args);
                } catch (Throwable $x) {
                    $this->assertStringNotContainsString('Cannot create', $x->getMessage(), "$class: a public stub constructor");
                }
            }
            $this->assertEquals(self::withoutDocs($e), self::withoutDocs($s), $class);
        }
        $this->assertSame(14, $private, 'Batches, Decision, Leader, Limiter, Lock, MultiLock, OrderLocks, Queue, Runtime, Semaphore, Slot, Stock, Task and Telemetry');
    }

    /**
     * A method's description is written once: the stubs are its source
     * (with the tags PHP code reads), and the `///` comment of the method
     * in src/php says the same words, checked here (73 of 94 were kept in
     * step by hand, 42 of them had drifted). Copy the stub's text.
     */
    public function testEachDescriptionIsWrittenOnceInTheStubs(): void
    {
        $words = fn (string $text): string => trim(preg_replace('/\s+/', ' ', $text));
        $described = function (?string $doc) use ($words): ?string {
            if ($doc === null) {
                return null;
            }
            $lines = [];
            foreach (explode("\n", $doc) as $line) {
                $line = preg_replace('#^\s*(/\*\*|\*/|\*)\s?#', '', $line);
                if (str_starts_with(ltrim($line), '@')) {
                    break;
                }
                $lines[] = $line;
            }
            return $words(implode(' ', $lines));
        };
        $rust = self::bindingDocs(dirname(__DIR__, 2) . '/src/php');
        $stubs = self::stubs();
        $drifted = [];
        $compared = 0;
        foreach ($rust as $class => $methods) {
            foreach ($methods as $method => $doc) {
                $stub = $described($stubs[$class]['methods'][$method]['doc'] ?? null);
                if ($stub === null) {
                    continue;
                }
                $compared++;
                if ($words($doc) !== $stub) {
                    $drifted[] = "$class::$method()\n  stub: $stub\n  src/php: " . $words($doc);
                }
            }
        }
        $this->assertGreaterThan(100, $compared, 'the binding docs were found');
        $this->assertSame([], $drifted, "the src/php comment differs from the stub's description");
    }

    /**
     * The `///` comments of the methods of the #[php_impl] blocks in
     * src/php, by PHP class and method name.
     *
     * @return array<string, array<string, string>>
     */
    private static function bindingDocs(string $dir): array
    {
        $classes = [];
        foreach (glob("$dir/*.rs") as $file) {
            preg_match_all('/#\[php_class\]\s*(?:#\[[^\]]*\]\s*)*?#\[php\(name = "([^"]+)"\)\]\s*(?:#\[[^\]]*\]\s*)*pub struct (\w+)/',
                file_get_contents($file), $m, PREG_SET_ORDER);
            foreach ($m as [, $php, $rust]) {
                $classes[$rust] = stripslashes($php);
            }
        }
        $out = [];
        foreach (glob("$dir/*.rs") as $file) {
            $class = null;
            $impl = false;
            $doc = [];
            $name = null;
            foreach (file($file, FILE_IGNORE_NEW_LINES) as $line) {
                if (str_starts_with($line, '#[php_impl]')) {
                    $impl = true;
                } elseif ($impl && preg_match('/^impl (\w+) \{/', $line, $m)) {
                    [$class, $impl] = [$classes[$m[1]] ?? null, false];
                } elseif (str_starts_with($line, '}')) {
                    $class = null;
                } elseif ($class !== null && preg_match('#^    /// ?(.*)$#', $line, $m)) {
                    $doc[] = $m[1];
                } elseif ($class !== null && preg_match('/^    #\[php\(name = "([^"]+)"\)\]/', $line, $m)) {
                    $name = $m[1];
                } elseif ($class !== null && str_starts_with($line, '    #[')) {
                    // Another attribute between the comment and the method.
                } else {
                    if ($class !== null && $doc !== [] && preg_match('/^    pub fn (\w+)/', $line, $m)) {
                        $out[$class][$name ?? lcfirst(str_replace('_', '', ucwords($m[1], '_')))] = implode(' ', $doc);
                    }
                    [$doc, $name] = [[], null];
                }
            }
        }
        return $out;
    }

    public function testThePhpDocParsesFitsTheNativeTypesAndNamesClassesThatExist(): void
    {
        $tags = 0;
        foreach (self::stubs() as $class => $c) {
            $this->assertNotNull($c['doc'], "$class has a docblock");
            foreach ($c['methods'] as $name => $m) {
                $where = "$class::$name()";
                $this->assertNotNull($m['doc'], "$where has a docblock");
                $doc = StubTypes::parseDoc($m['doc']);
                $types = $this->types($class, $doc);

                $params = array_column($m['params'], 'type', 'name');
                $documented = [];
                foreach ($doc->getParamTagValues() as $tag) {
                    $param = substr($tag->parameterName, 1);
                    $this->assertArrayHasKey($param, $params, "$where: @param $tag->parameterName is no parameter");
                    $this->assertNotContains($param, $documented, "$where: @param \$$param twice");
                    $this->assertTypeFits($types, $tag->type, $params[$param], "$where @param \$$param");
                    $documented[] = $param;
                    $tags++;
                }
                foreach ($params as $param => $native) {
                    if ($native === null || $native === 'mixed') {
                        $this->assertContains($param, $documented, "$where: \$$param has no native type, so it needs a @param");
                    }
                }

                $returns = $doc->getReturnTagValues();
                $this->assertLessThanOrEqual(1, count($returns), "$where: one @return");
                if ($name === '__construct') {
                    $this->assertCount(0, $returns, "$where: no @return");
                } elseif ($m['return'] === null || $m['return'] === 'mixed') {
                    $this->assertCount(1, $returns, "$where: no native return type, so it needs a @return");
                }
                foreach ($returns as $tag) {
                    $this->assertTypeFits($types, $tag->type, $m['return'], "$where @return");
                    $tags++;
                }

                foreach ($doc->getThrowsTagValues() as $tag) {
                    $thrown = $types->className((string) $tag->type);
                    $this->assertTrue(is_a($thrown, Throwable::class, true), "$where: @throws $thrown is no Throwable");
                    $tags++;
                }
            }
        }
        $this->assertGreaterThan(100, $tags, 'the tags were read');
    }

    private function types(string $class, $doc): StubTypes
    {
        $namespace = substr($class, 0, max(0, (int) strrpos($class, '\\')));
        return new StubTypes($namespace, array_map(fn ($t) => $t->name, $doc->getTemplateTagValues()));
    }

    private function assertTypeFits(StubTypes $types, $type, ?string $native, string $where): void
    {
        $this->assertNotSame('mixed', (string) $type, "$where: a type more exact than mixed");
        foreach ($types->natives($type) as $n) {
            $this->assertTrue(StubTypes::fits($n, $native), "$where: $type holds $n, which the native type $native does not");
        }
        foreach ($types->classes($type) as $c) {
            $this->assertTrue(class_exists($c), "$where: class $c does not exist");
        }
    }

    /** Calls `$method` and checks what it returns against the stub's @return. */
    private function call(object|string $on, string $method, mixed ...$args): mixed
    {
        $value = is_object($on) ? $on->$method(...$args) : $on::$method(...$args);
        $class = is_object($on) ? get_class($on) : $on;
        $doc = StubTypes::parseDoc(self::stubs()[$class]['methods'][$method]['doc']);
        $return = $doc->getReturnTagValues()[0] ?? null;
        $this->assertNotNull($return, "$class::$method() has no @return to check");
        $this->assertTrue(
            $this->types($class, $doc)->accepts($return->type, $value),
            "$class::$method() returned " . var_export($value, true) . ", which is no $return->type",
        );
        $this->checked["$class::$method"] = true;
        return $value;
    }

    public function testEveryMethodReturnsWhatItsReturnTagSays(): void
    {
        $c = new Client();
        $this->call($c, '__debugInfo');
        $held = $c->lock('runtime');
        $held->acquire();
        $this->assertSame(['lock:{runtime}'], $this->call(RedisLock\Runtime::class, 'held'));
        $this->assertSame(1, $this->call(RedisLock\Runtime::class, 'endRequest'));
        $q = $c->queue('jobs', ['maxAttempts' => 2]);
        $this->call($q, 'name');
        $this->call($q, 'enqueue', 'a', "pay\0load");
        $this->call($q, 'enqueue', 'a', null, 0, 'replace');
        $this->call($q, 'enqueue', 'a');
        $this->call($q, 'enqueueMany', ['b' => null, 7 => 'seven'], 0, null, ['batch-1']);
        $this->call($q, 'enqueue', 'tagged', null, 0, null, ['shop-1', 'vip']);
        $this->assertSame(['shop-1', 'vip'], $this->call($q, 'tagged', 'vip')[0]['tags']);
        $this->call($q, 'tagged', 'none', 5);
        $this->call($q, 'enqueue', 'later', null, 60);
        $this->call($q, 'metrics');
        $this->call($q, 'peek');
        $this->call($q, 'find', 'a');
        $this->call($q, 'find', 'none');
        $tasks = $this->call($q, 'reserve', 3, 30);
        $this->assertCount(3, $tasks);
        foreach ($tasks as $t) {
            foreach (['id', 'payload', 'queue', 'attempts', '__debugInfo'] as $m) {
                $this->call($t, $m);
            }
        }
        $this->call($q, 'find', $tasks[0]->id());
        // A workflow: a parent waiting for its child, and the child's result.
        $parents = $c->queue('stub-parents');
        $this->call($parents, 'enqueue', 'p', null, 0, null, null, null, [['queue' => 'stub-children', 'id' => 'c']]);
        $this->assertSame(['waiting', 1], array_values(array_intersect_key($this->call($parents, 'find', 'p'), ['state' => 0, 'children' => 0])));
        $children = $c->queue('stub-children');
        $this->assertTrue($children->ack($children->reserve()[0], 'r'));
        $this->assertSame(['stub-children/c' => 'r'], $this->call($parents->reserve()[0], 'childResults'));
        $this->call($q, '__debugInfo');
        $this->call($q, 'metrics');
        $this->call($q, 'leased');
        $this->call($q, 'workers');
        $q->pause();
        $this->call($q, 'metrics');
        $q->resume();
        $q->enqueue('c');
        $this->assertCount(1, $this->call($c, 'reserve', [$q]));
        $this->call($q, 'ackMany', [$tasks[0]]);
        $q->nack($tasks[1]);
        $q->nack($this->call($q, 'reserve')[0]);
        $this->call($q, 'dead');
        $this->call($q, 'find', $tasks[1]->id());
        $this->call($q, 'retryDead');
        $q->nack($q->reserve()[0]);
        $q->nack($q->reserve()[0]);
        $this->call($q, 'purgeDead', [$tasks[1]->id()]);
        $q->enqueue('d');
        $this->call($q, 'remove', ['d', 'none']);
        $q->enqueue('e');
        $this->assertTrue($q->bury($q->reserve()[0]));
        $q->enqueue('f');
        $this->assertSame(2, $this->call($q, 'moveTo', $c->queue('jobs-moved')), "'f' and 'later'");
        $this->call($q, 'clear');
        $q->enqueue('ungrouped');
        $this->call($q, 'enqueue', 'grouped', null, 0, null, null, 'tenant-1');
        $this->assertSame([null, 'tenant-1'], array_column($this->call($q, 'groups'), 'group'), 'the task it had before, and the group');
        $this->call($q, 'groups', 1);
        $q->clear();
        $this->call($q, 'history');
        $this->assertGreaterThanOrEqual(4, count($this->call($q, 'recent')));
        $this->assertSame('dead', $this->call($q, 'recent', 1, 'e')[0]['outcome']);
        $this->call($q, 'recent', 10, null, 'batch-1');
        $footprint = $this->call($q, 'recentFootprint');
        $this->assertGreaterThanOrEqual(4, $footprint['kept']);
        $this->assertGreaterThan(0, $footprint['bytes']);
        $this->call($c, 'queues');
        $this->assertSame(1, $this->call($q, 'partitions'));
        $this->assertCount(1, $this->call($q, 'partitionMetrics'));
        $split = $c->queue('jobs-split', ['partitions' => 3]);
        $split->enqueue('s');
        $this->assertSame(3, $this->call($split, 'partitions'));
        $this->assertSame([0, 1, 0], array_map(fn ($m) => $m['ready'], $this->call($split, 'partitionMetrics')), "'s' in partition 1 of 3: CRC16 of its id");
        $this->assertSame(['jobs-split' => 3], $this->call($c, 'queuePartitions'));
        $this->assertContains('', $this->call($c, 'queuePrefixes'), 'the own prefix of this client, which has queues');

        $lock = $c->lock('l');
        $this->call($lock, 'owner');
        $this->call($lock, 'token');
        $this->call($lock, '__debugInfo');
        $lock->acquire();
        $this->call($lock, 'owner');
        $this->call($lock, 'token');
        $this->call($lock, '__debugInfo');
        $this->call($lock, 'extend', 5);
        $this->call($c, 'lockState', 'l');
        $this->call($c, 'lockState', 'free', 'RedisLock');
        $this->call($c, 'lockState', 'free', 'seed');
        $this->assertFalse($c->forceRelease('free', 'seed'));
        $exact = $c->lock('laravel_cache:x', ['exactKey' => true, 'owner' => $this->call($c, 'newOwner')]);
        $exact->acquire();
        $this->call($c, 'lockState', 'laravel_cache:x', 'exact');
        $this->assertSame(['exact', 'lock'], array_column($this->call($c, 'locks'), 'kind'));
        $exact->release();
        $this->call($lock, 'release');
        $this->call($lock, 'synchronized', fn () => 'done');

        $many = $c->lockMany(['m1', '42']);
        $this->call($many, 'names');
        $this->call($many, 'tokens');
        $this->call($many, '__debugInfo');
        $many->acquire();
        $this->call($many, 'tokens');
        $this->call($many, '__debugInfo');
        $this->call($many, 'extend');
        $this->call($many, 'release');

        $sem = $c->semaphore('s', 3);
        $this->call($sem, 'token');
        $sem->acquire(3);
        foreach (['available', 'held', 'permits', 'token', 'waiting', '__debugInfo', 'extend', 'release'] as $m) {
            $this->call($sem, $m);
        }

        $stock = $c->stock('sale');
        $this->call($stock, 'name');
        $this->call($stock, '__debugInfo');
        $this->call($stock, 'giveBack');
        $this->call($stock, 'set', 2);
        $this->call($stock, 'take', 1, 'alice');
        $this->call($stock, 'take', 1, '1001');
        $this->call($stock, 'take', 1, 'bob');
        $this->call($stock, 'giveBack', 1, 'alice');
        $this->call($stock, 'buyers');
        $this->call($stock, 'bought', 'alice');
        $this->call($stock, 'remaining');

        $limiter = $c->limiter('api', ['limit' => 1, 'per' => 60]);
        $this->call($limiter, 'name');
        $this->call($limiter, '__debugInfo');
        $limiter->attempt('ip');
        $refused = $limiter->peek('ip');
        foreach (['limiter', 'key', 'remaining', '__debugInfo'] as $m) {
            $this->call($refused, $m);
        }
        $allowed = $c->attempt([[$limiter, 'other']]);
        foreach (['limiter', 'key', 'remaining', '__debugInfo'] as $m) {
            $this->call($allowed, $m);
        }

        $leader = $c->leader('cron');
        $this->call($leader, 'current');
        $leader->campaign(0);
        foreach (['name', 'current', '__debugInfo'] as $m) {
            $this->call($leader, $m);
        }
        $leader->resign();

        $slot = $c->once('nightly', '2026-11-28');
        foreach (['slot', 'state', '__debugInfo'] as $m) {
            $this->call($slot, $m);
        }
        $slot->done();
        $this->call($slot, 'state');

        $redlock = new Redlock('r', ['nodes' => [RedisServer::$main->dsn()]]);
        $this->call($redlock, '__debugInfo');
        $redlock->acquire();
        $this->call($redlock, 'extend');
        $this->call($redlock, 'release');

        $this->call(Lock_Service::class, 'addLock', 1);
        $this->call(Lock_Service::class, 'addLock', 1);
        $this->call(Lock_Service::class, 'releaseLock', 1, 1);
        $this->call(Lock_Service::class, 'generateUniqueLockId');
        $this->call(Lock_Service::class, 'getRedisConn');
        $orders = $c->orderLocks('test_lock_%s', 'test_lock_id');
        $id = $this->call($orders, 'addLock', 1, 60);
        $this->call($orders, 'addLock', 1);
        $this->assertTrue($orders->releaseLock(1, $id));
        $this->call($orders, 'generateUniqueLockId');
        $this->assertSame(['test_lock_%s', 'test_lock_id'], [$this->call($orders, 'template'), $this->call($orders, 'counter')]);

        $seedLock = new RedisLock();
        $this->call($seedLock, 'lock', 'x');
        $this->call($seedLock, 'isLocking', 'x');
        $this->call($seedLock, 'isLocking', 'never');
        $this->call($seedLock, 'expire', 'x', 5);
        $this->call($seedLock, 'unlock', 'x');
        $this->call($seedLock, 'unlockAll');

        $batches = $c->batches('stub-batches');
        $this->call($batches, '__debugInfo');
        $batch = $this->call($batches, 'create', 'b', 'options');
        $this->call($batches, 'find', $batch['id']);
        $this->call($batches, 'find', 'none');
        $this->assertTrue($batches->addJobs($batch['id'], 2));
        $this->assertSame(['pending' => 2, 'failed' => 1], $this->call($batches, 'jobFailed', $batch['id'], 'j1'));
        $this->assertSame(['pending' => 1, 'failed' => 1], $this->call($batches, 'jobDone', $batch['id'], 'j1'));
        $this->assertNull($this->call($batches, 'jobDone', 'none', 'j1'));
        $this->call($batches, 'list');
        $this->assertTrue($batches->finish($batch['id']));
        $this->assertTrue($batches->cancel($batch['id']));
        $this->assertSame(1, $batches->prune(microtime(true) + 60, 'cancelled'));
        $this->assertFalse($batches->delete('none'));

        $seedQueue = new RedisQueue();
        $this->call($seedQueue, 'enqueue', 'sq', [42, 'b']);
        $this->call($seedQueue, 'top', 'sq');
        $this->call($seedQueue, 'top', 'sq', 5);
        $first = $this->call($seedQueue, 'pop', 'sq');
        $this->call($seedQueue, 'pop', 'sq', 5);
        $this->call($seedQueue, 'pop', 'sq');
        $this->call($seedQueue, 'dequeue', 'sq', $first['id'], $first['score']);

        $promised = [];
        foreach (self::stubs() as $class => $s) {
            foreach ($s['methods'] as $name => $m) {
                if ($m['doc'] !== null && StubTypes::parseDoc($m['doc'])->getReturnTagValues() !== []) {
                    $promised[] = "$class::$name";
                }
            }
        }
        sort($promised);
        $checked = array_keys($this->checked);
        sort($checked);
        $this->assertSame($promised, $checked, 'every @return checked by a call');
    }
    /**
     * Each method's options array is one list, the extension's own: the
     * options its "unknown option" error names are exactly the keys of the
     * stub's array shape, and each is documented where the docs describe
     * that method.
     */
    public function testEveryOptionsArrayIsTheExtensionsListInTheStubsAndTheDocs(): void
    {
        $client = new Client();
        $methods = [
            // Class::method $param => [call with $options, doc file, a line of the method's doc]
            'RedisLock\Client::__construct $connection' => [fn ($o) => new Client($o), 'configuration.md', 'options array with any of'],
            'RedisLock\Client::lock $options' => [fn ($o) => $client->lock('x', $o), 'locks.md', 'Options of `Client::lock()`'],
            'RedisLock\Client::readLock $options' => [fn ($o) => $client->readLock('x', $o), 'primitives.md', '`Client::readLock('],
            'RedisLock\Client::writeLock $options' => [fn ($o) => $client->writeLock('x', $o), 'primitives.md', '`Client::writeLock('],
            'RedisLock\Client::semaphore $options' => [fn ($o) => $client->semaphore('x', 1, $o), 'primitives.md', '`Client::semaphore('],
            'RedisLock\Client::lockMany $options' => [fn ($o) => $client->lockMany(['x'], $o), 'primitives.md', '`Client::lockMany('],
            'RedisLock\Client::queue $options' => [fn ($o) => $client->queue('x', $o), 'queues.md', '`Client::queue('],
            'RedisLock\Client::stock $options' => [fn ($o) => $client->stock('x', $o), 'primitives.md', '`Client::stock('],
            'RedisLock\Client::leader $options' => [fn ($o) => $client->leader('x', $o), 'once.md', 'Options of `Client::leader()`'],
            'RedisLock\Client::once $options' => [fn ($o) => $client->once('x', null, $o), 'once.md', 'Options of `Client::once()`'],
            'RedisLock\Client::limiter $options' => [fn ($o) => $client->limiter('x', $o), 'limits.md', '`Client::limiter('],
            'RedisLock\Stock::take $options' => [fn ($o) => $client->stock('x')->take(1, null, $o), 'primitives.md', '`Stock::take('],
            'RedisLock\Redlock::__construct $options' => [fn ($o) => new Redlock('x', ['nodes' => ['redis://127.0.0.1:1']] + $o), 'topologies.md', '- Options: `nodes`'],
        ];
        $stubs = self::stubs();
        foreach ($methods as $label => [$call, $file, $marker]) {
            [$method, $param] = explode(' ', $label);
            [$class, $name] = explode('::', $method);
            try {
                $call(['no such option' => 1]);
                $this->fail("$label takes an unknown option");
            } catch (ValueError $e) {
                $this->assertMatchesRegularExpression('/\(known: ([a-zA-Z_, ]+)\)/', $e->getMessage(), $label);
                preg_match('/\(known: ([a-zA-Z_, ]+)\)/', $e->getMessage(), $m);
                $known = explode(', ', $m[1]);
            }
            $doc = $stubs[$class]['methods'][$name]['doc'] ?? '';
            $this->assertSame(1, preg_match('/@param\s+(?:string\|)?array\{([^}]*)\}\|null(?:\|[\\\\\w]+)*\s+\\' . $param . '\b/', $doc, $shape), "$label: the stub's array shape");
            preg_match_all('/([a-zA-Z_]+)\?:/', $shape[1], $keys);
            $this->assertSame($known, $keys[1], "$label: the stub's options, in the extension's order");
            $text = $this->docOf($file, $marker);
            foreach ($known as $option) {
                $this->assertStringContainsString("`$option`", $text, "$label: docs/$file documents option '$option'");
            }
        }
    }

    /** The paragraph, table row or table of docs/$file that holds $marker. */
    private function docOf(string $file, string $marker): string
    {
        $lines = file(__DIR__ . "/../../docs/$file", FILE_IGNORE_NEW_LINES);
        foreach ($lines as $i => $line) {
            if (str_contains($line, $marker)) {
                if (str_starts_with($line, '|')) {
                    return $line;
                }
                // The paragraph, and a table that follows it.
                $text = '';
                for ($j = $i; $j < count($lines); $j++) {
                    if ($lines[$j] === '' && $j > $i + 1 && !str_starts_with($lines[$j + 1] ?? '', '|')) {
                        break;
                    }
                    $text .= $lines[$j] . "\n";
                }
                return $text;
            }
        }
        $this->fail("docs/$file has no line with '$marker'");
    }
}
