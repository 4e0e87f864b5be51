<?php

use RedisLock\Client;
use RedisLock\Symfony\RequestBoundary;
use RedisLock\Symfony\Messenger\QueueStamp;
use RedisLock\Symfony\Messenger\ReceivedStamp;
use RedisLock\Symfony\Messenger\Transport;
use RedisLock\Symfony\Messenger\TransportFactory;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\HttpKernel\DependencyInjection\ServicesResetter;
use Symfony\Component\Messenger\Envelope;
use Symfony\Component\Messenger\EventListener\ResetServicesListener;
use Symfony\Component\Messenger\EventListener\StopWorkerOnMessageLimitListener;
use Symfony\Component\Messenger\Handler\HandlersLocator;
use Symfony\Component\Messenger\MessageBus;
use Symfony\Component\Messenger\Middleware\HandleMessageMiddleware;
use Symfony\Component\Messenger\Worker;
use Symfony\Component\Messenger\Stamp\DelayStamp;
use Symfony\Component\Messenger\Stamp\TransportMessageIdStamp;
use Symfony\Component\Messenger\Transport\Serialization\PhpSerializer;

/**
 * The Messenger transport on the leased queue: its receiver and sender
 * contract, and Messenger's own Worker in separate processes, SIGKILLed
 * mid-message, with Messenger's retry for failing handlers.
 */
final class SymfonyMessengerTest extends RedisLockTestCase
{
    protected function setUp(): void
    {
        parent::setUp();
        require_once __DIR__ . '/messenger/Recorded.php';
    }

    private static function transport(array $options = []): Transport
    {
        return (new TransportFactory())->createTransport(
            'redislock://127.0.0.1:' . RedisServer::$main->port . '?queues=high,low&wait=0&lease=30', $options, new PhpSerializer());
    }

    public function testSendGetAckRejectCountListAndFind(): void
    {
        $t = self::transport();
        $this->assertTrue((new TransportFactory())->supports('redislock://x', []));
        $this->assertFalse((new TransportFactory())->supports('redis://x', []));
        $sent = $t->send(new Envelope(new Recorded(1)));
        $id = $sent->last(TransportMessageIdStamp::class)->getId();
        $t->send(new Envelope(new Recorded(2), [new DelayStamp(60000)]));
        $t->send(new Envelope(new Recorded(3), [new QueueStamp('low')]));
        $this->assertSame(3, $t->getMessageCount());
        $this->assertSame(1, $this->redis->zCard('Queue:low'));
        $listed = array_map(fn (Envelope $e) => $e->getMessage()->n, iterator_to_array($t->all(), false));
        $this->assertSame([1, 2, 3], $listed, 'high first, due first');
        $this->assertCount(1, iterator_to_array($t->all(1), false));
        $this->assertSame(1, $t->find($id)->getMessage()->n);
        $this->assertNull($t->find('nope'));

        [$got] = $t->get();
        $this->assertSame(1, $got->getMessage()->n);
        $this->assertSame($id, $got->last(TransportMessageIdStamp::class)->getId());
        $this->assertSame('high', $got->last(ReceivedStamp::class)->queue);
        $this->assertTrue($t->keepalive($got, 120));
        $t->ack($got);
        [$low] = $t->get();
        $this->assertSame(3, $low->getMessage()->n, 'the delayed one is not due: the other queue');
        $t->reject($low);
        $this->assertSame([], $t->get());
        $this->assertSame(1, $t->getMessageCount());
        $this->assertSame([], iterator_to_array($t->getFromQueues(['low'])));
        $this->assertNull($t->find($id), 'acked: gone');
    }

    /**
     * The CLI and the dashboard name a message by its class (as Messenger's
     * own tools do): read from PhpSerializer's body, plain or in base64
     * (a body that is not UTF-8), never instantiated.
     */
    public function testTheOperatorToolsNameAMessageByItsClass(): void
    {
        require_once dirname(__DIR__, 3) . '/php/src/Operator/Report.php';
        $t = self::transport();
        $q = (new Client(RedisServer::$main->dsn()))->queue('high');
        foreach ([new Recorded(1), new AnonymousRecorded("\xff\xfe")] as $message) {
            $id = $t->send(new Envelope($message))->last(TransportMessageIdStamp::class)->getId();
            $this->assertSame($message::class, RedisLock\Operator\Report::job($q->find($id)['payload']));
        }
        $this->assertNull(RedisLock\Operator\Report::job(serialize(['body' => 'no envelope'])));
        $this->assertSame('App\\Message\\Mail', RedisLock\Operator\Report::job(serialize(['body' => '{}', 'headers' => ['type' => 'App\\Message\\Mail']])));
    }

    /**
     * Messenger's worker is a process serving many messages: with the
     * request boundary registered for `kernel.reset`, Symfony's services
     * resetter ends each message's locks, though the handler left its lock
     * in a variable that outlives it or threw while holding it.
     */
    public function testMessengersWorkerEndsEachMessagesLocksByResettingServices(): void
    {
        require_once '/usr/share/php/Symfony/Component/HttpKernel/autoload.php';
        $t = self::transport();
        for ($n = 1; $n <= 10; $n++) {
            $t->send(new Envelope(new Recorded($n)));
        }
        $client = new Client(RedisServer::$main->dsn());
        $parked = null;
        $runs = [];
        $bus = new MessageBus([new HandleMessageMiddleware(new HandlersLocator([Recorded::class => [
            function (Recorded $m) use ($client, &$parked, &$runs): void {
                $held = count(RedisLock\Runtime::held());
                $parked = $client->lock('message-lock', ['ttl' => 30]);
                $runs[] = [$m->n, $held, $parked->acquire()];
                if ($m->n % 2 === 1) {
                    throw new RuntimeException("message {$m->n} fails while holding the lock");
                }
            },
        ]]))]);
        $events = new EventDispatcher();
        $events->addSubscriber(new ResetServicesListener(new ServicesResetter(
            new ArrayIterator(['redislock.request_boundary' => new RequestBoundary()]),
            ['redislock.request_boundary' => 'reset'],
        )));
        $events->addSubscriber(new StopWorkerOnMessageLimitListener(10));
        (new Worker(['redislock' => $t], $bus, $events))->run(['sleep' => 0]);
        $this->assertSame(array_map(fn ($n) => [$n, 0, true], range(1, 10)), $runs,
            'each message held nothing when it started, and took the lock');
        $this->assertFalse($client->lockState('message-lock')['held']);
        $this->assertSame([], RedisLock\Runtime::held());
    }

    /**
     * Nothing renews a lease while a handler runs, so the default lease is
     * Symfony's Redis transport's redeliver_timeout (an hour): a handler of
     * a minute is not delivered to a second worker meanwhile (the default
     * was 30 s).
     */
    public function testTheDefaultLeaseIsSymfonysRedeliverTimeout(): void
    {
        $t = (new TransportFactory())->createTransport('redislock://127.0.0.1:' . RedisServer::$main->port . '?wait=0', [], new PhpSerializer());
        $t->send(new Envelope(new Recorded(1)));
        [$received] = $t->get();
        $until = $t->queue('messages')->leased()[0]['until'];
        $this->assertEqualsWithDelta(3600, $until - microtime(true), 5);
        $t->ack($received);
        $this->assertSame(3600.0, (new \ReflectionParameter([Transport::class, '__construct'], 'lease'))->getDefaultValue());
    }

    public function testAMessageLeftUnackedIsDeliveredAgainAfterItsLease(): void
    {
        $t = (new TransportFactory())->createTransport(
            'redislock://127.0.0.1:' . RedisServer::$main->port . '?wait=0', ['lease' => 0.2], new PhpSerializer());
        $t->send(new Envelope(new Recorded(7)));
        [$first] = $t->get();
        $this->assertSame([], $t->get());
        usleep(300000);
        [$again] = $t->get();
        $this->assertSame(7, $again->getMessage()->n);
        $this->assertSame(2, $again->last(ReceivedStamp::class)->task->attempts());
        $t->ack($again);
        $this->assertSame(0, $t->getMessageCount());
    }

    /**
     * A message of queue `low` whose handler fails for good, with the
     * failure transport on the same Redis (Messenger's own Worker and
     * failure listener): it lands in the failure transport, and its
     * handler ran once. The failure transport's send() followed the
     * message's QueueStamp back into `low`, where the main worker ran it
     * again and Symfony's listener, seeing it was sent to the failure
     * transport already, dropped it: the message was lost.
     */
    public function testAMessageThatFailsForGoodIsKeptByTheFailureTransport(): void
    {
        $main = self::transport();
        $failed = (new TransportFactory())->createTransport(
            'redislock://127.0.0.1:' . RedisServer::$main->port . '?queues=failed&wait=0', [], new PhpSerializer());
        $main->send(new Envelope(new Recorded(1), [new QueueStamp('low')]));
        $runs = 0;
        $bus = new MessageBus([new HandleMessageMiddleware(new HandlersLocator([Recorded::class => [
            function (Recorded $m) use (&$runs): void {
                $runs++;
                throw new Symfony\Component\Messenger\Exception\UnrecoverableMessageHandlingException('for good');
            },
        ]]))]);
        $senders = new class ($failed) implements Psr\Container\ContainerInterface {
            public function __construct(private object $failed) {}
            public function get(string $id): mixed { return $this->failed; }
            public function has(string $id): bool { return true; }
        };
        $events = new EventDispatcher();
        $events->addSubscriber(new Symfony\Component\Messenger\EventListener\SendFailedMessageToFailureTransportListener($senders));
        $events->addSubscriber(new StopWorkerOnMessageLimitListener(2));
        $events->addSubscriber(new Symfony\Component\Messenger\EventListener\StopWorkerOnTimeLimitListener(2));
        (new Worker(['main' => $main], $bus, $events))->run(['sleep' => 10000]);
        $this->assertSame(1, $runs, 'the handler ran once');
        $this->assertSame(0, $main->getMessageCount(), 'nothing back in the main queues');
        $kept = iterator_to_array($failed->all(), false);
        $this->assertCount(1, $kept, 'the failure transport holds the message');
        $this->assertSame(1, $kept[0]->getMessage()->n);
        $this->assertSame(1, $this->redis->zCard('Queue:failed'));
    }

    /** Junk in the DSN's options is refused when the DSN is read, naming the option. */
    public function testJunkOptionsAreRefusedWhenTheDsnIsRead(): void
    {
        $base = 'redislock://127.0.0.1:' . RedisServer::$main->port;
        foreach (['lease=abc' => 'lease', 'lease=0' => 'lease', 'wait=abc' => 'wait', 'wait=-1' => 'wait',
                  'max_attempts=1.5' => 'max_attempts', 'max_attempts=-1' => 'max_attempts',
                  'partitions=0' => 'partitions', 'partitions=1.5' => 'partitions', 'partitions=x' => 'partitions'] as $query => $option) {
            try {
                (new TransportFactory())->createTransport("$base?$query", [], new PhpSerializer());
                $this->fail("$query was taken");
            } catch (Symfony\Component\Messenger\Exception\InvalidArgumentException $e) {
                $this->assertStringContainsString("the $option option must be", $e->getMessage(), $query);
            }
        }
        $this->assertInstanceOf(Transport::class, (new TransportFactory())->createTransport("$base?wait=0&lease=0.5&max_attempts=3", [], new PhpSerializer()));
    }

    /** `partitions` keeps each queue of the transport in that many slots. */
    public function testATransportsQueuesCanBeKeptInPartitions(): void
    {
        $t = (new TransportFactory())->createTransport('redislock://127.0.0.1:' . RedisServer::$main->port . '?wait=0&partitions=4', [], new PhpSerializer());
        for ($n = 1; $n <= 8; $n++) {
            $t->send(new Envelope(new Recorded($n)));
        }
        $this->assertSame(8, $t->getMessageCount());
        $this->assertSame(4, $t->queue('messages')->partitions());
        $this->assertSame(0, $this->redis->exists('Queue:messages'), 'nothing in the one-slot layout');
        $got = [];
        while ($envelopes = $t->get()) {
            foreach ($envelopes as $e) {
                $got[] = $e->getMessage()->n;
                $t->ack($e);
            }
        }
        sort($got);
        $this->assertSame(range(1, 8), $got);
        $this->assertSame(0, $t->getMessageCount());
    }

    public function testAnEnvelopeNotReceivedHereIsRefused(): void
    {
        $this->expectException(Symfony\Component\Messenger\Exception\LogicException::class);
        self::transport()->ack(new Envelope(new Recorded(1)));
    }

    /** Runs Messenger's console on the failure transport at $dsn; returns [exit code, output]. */
    private static function console(string $dsn, string $file, string ...$args): array
    {
        $argv = var_export(array_merge(['console', $dsn, $file], $args, ['--no-interaction']), true);
        // Symfony's console needs intl and mbstring (or polyfills) for text.
        $out = self::php('$argv = ' . $argv . '; require "' . __DIR__ . '/messenger/console.php";', ['extension' => self::shared('intl', 'mbstring')], $exit);
        return [$exit, $out];
    }

    public function testMessengersFailedRetryAndRemoveCommandsSettleTheMessage(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'failed');
        $dsn = 'redislock://127.0.0.1:' . RedisServer::$main->port . '?queues=failed&wait=0';
        $t = (new TransportFactory())->createTransport($dsn, [], new PhpSerializer());
        $id = fn (Envelope $e) => $e->last(TransportMessageIdStamp::class)->getId();
        $retried = $id($t->send(new Envelope(new Recorded(1))));
        $removed = $id($t->send(new Envelope(new Recorded(2))));
        $again = $id($t->send(new Envelope(new Recorded(3, 0, 1))));

        [$exit, $out] = self::console($dsn, $file, 'messenger:failed:show');
        $this->assertSame(0, $exit, $out);
        foreach ([$retried, $removed, $again] as $shown) {
            $this->assertStringContainsString($shown, $out);
        }

        [$exit, $out] = self::console($dsn, $file, 'messenger:failed:retry', $retried, '--force');
        $this->assertSame(0, $exit, $out);
        $this->assertSame(['1'], array_map(fn ($l) => explode(' ', $l)[0], file($file, FILE_IGNORE_NEW_LINES)));
        $this->assertNull($t->find($retried), 'acked: gone from the failure transport');
        [$exit, $out] = self::console($dsn, $file, 'messenger:failed:retry', $retried, '--force');
        $this->assertNotSame(0, $exit);
        $this->assertStringContainsString('not found', $out);
        $this->assertCount(1, file($file), 'the handler ran once');

        [$exit, $out] = self::console($dsn, $file, 'messenger:failed:remove', $removed, '--force');
        $this->assertSame(0, $exit, $out);
        $this->assertNull($t->find($removed));
        $this->assertFileDoesNotExist("$file.tries.2", 'removed without running');

        // Fails again: back in the failure transport as a new message, the
        // old one rejected.
        [$exit, $out] = self::console($dsn, $file, 'messenger:failed:retry', $again, '--force');
        $this->assertSame(0, $exit, $out);
        $this->assertNull($t->find($again));
        $left = iterator_to_array($t->all(), false);
        $this->assertCount(1, $left);
        $this->assertSame(3, $left[0]->getMessage()->n);
        $this->assertSame('1', file_get_contents("$file.tries.3"));
        [$exit, $out] = self::console($dsn, $file, 'messenger:failed:retry', $id($left[0]), '--force');
        $this->assertSame(0, $exit, $out);
        $this->assertSame(0, $t->getMessageCount());
        $this->assertSame(['1', '3'], array_map(fn ($l) => explode(' ', $l)[0], file($file, FILE_IGNORE_NEW_LINES)));
        $this->assertSame([], $t->queue('failed')->dead());
        array_map('unlink', glob("$file*"));
    }

    public function testAMessageThatCannotBeDecodedIsADeadLetterAtTheFirstTry(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'undecodable');
        // max_attempts=0: before, it came back after every lease, forever.
        $dsn = 'redislock://127.0.0.1:' . RedisServer::$main->port . '?lease=1&wait=0&max_attempts=0';
        $t = (new TransportFactory())->createTransport($dsn, [], new PhpSerializer());
        // A class the workers do not have (gone after a deploy).
        eval('final class GoneAfterDeploy { public int $n = 9; }');
        $t->send(new Envelope(new GoneAfterDeploy()));
        usleep(5000);
        $t->send(new Envelope(new Recorded(1)));
        $worker = self::start('$argv = ["w", "' . $dsn . '", "' . $file . '"]; require "' . __DIR__ . '/messenger/worker.php";');
        $out = self::finish($worker);
        $this->assertStringContainsString('GoneAfterDeploy', $out, 'the worker says why it stopped');
        $dead = $t->queue('messages')->dead();
        $this->assertCount(1, $dead);
        $this->assertSame(1, $dead[0]['attempts']);
        $this->assertStringContainsString('GoneAfterDeploy', $dead[0]['payload'], 'kept to be looked at');
        $this->assertStringStartsWith('Symfony\\Component\\Messenger\\Exception\\MessageDecodingFailedException: ', $dead[0]['reason'], 'and why it died');
        $this->assertStringContainsString('GoneAfterDeploy', $dead[0]['reason']);
        $this->assertSame(1, $t->getMessageCount(), 'the other message waits');
        $this->assertSame(0, $t->queue('messages')->metrics()['leased']);

        $worker = self::start('$argv = ["w", "' . $dsn . '", "' . $file . '"]; require "' . __DIR__ . '/messenger/worker.php";');
        $deadline = microtime(true) + 10;
        while (clearstatcache() || filesize($file) === 0) {
            $this->assertLessThan($deadline, microtime(true));
            usleep(20000);
        }
        posix_kill($worker[2], SIGTERM);
        self::finish($worker);
        $this->assertSame(['1'], array_map(fn ($l) => explode(' ', $l)[0], file($file, FILE_IGNORE_NEW_LINES)));
        $this->assertCount(1, $t->queue('messages')->dead(), 'the next worker does not meet it again');
        array_map('unlink', glob("$file*"));
    }

    public function testMessengersWorkerLosesNothingWhenWorkersAreKilled(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'messenger');
        $dsn = 'redislock://127.0.0.1:' . RedisServer::$main->port . '?lease=1&wait=1';
        $t = (new TransportFactory())->createTransport($dsn, [], new PhpSerializer());
        $messages = 60;
        for ($n = 1; $n <= $messages; $n++) {
            // Every tenth handler fails its first delivery: Messenger's retry.
            $t->send(new Envelope(new Recorded($n, 40, $n % 10 === 0 ? 1 : 0)));
        }
        $start = fn () => self::start('$argv = ["w", "' . $dsn . '", "' . $file . '"]; require "' . __DIR__ . '/messenger/worker.php";');
        $workers = [$start(), $start(), $start()];
        $handled = fn () => array_count_values(array_map(fn ($l) => (int) $l, file($file, FILE_IGNORE_NEW_LINES)));
        $kills = 0;
        $deadline = microtime(true) + 60;
        while (count($handled()) < $messages || $t->getMessageCount() > 0 || $this->redis->zCard('{Queue:messages}:leased') > 0) {
            $this->assertLessThan($deadline, microtime(true), 'left: ' . $t->getMessageCount());
            usleep(150000);
            if ($kills < 8) {
                $i = $kills % 3;
                posix_kill($workers[$i][2], SIGKILL);
                self::finish($workers[$i]);
                $workers[$i] = $start();
                $kills++;
            }
        }
        foreach ($workers as $w) {
            posix_kill($w[2], SIGTERM);
        }
        $outs = array_map(fn ($w) => self::finish($w), $workers);
        $counts = $handled();
        ksort($counts);
        $this->assertSame(range(1, $messages), array_keys($counts), 'every message handled: ' . implode(' ', $outs));
        $this->assertSame([], $t->queue('messages')->dead());
        $this->assertSame(0, $t->getMessageCount());
        $again = array_filter(range(1, $messages), fn ($n) => $n % 10 !== 0 && (int) file_get_contents("$file.tries.$n") > 1);
        $this->assertNotEmpty($again, 'no kill hit a message');
        array_map('unlink', glob("$file*"));
    }
}

/** A message whose serialized form is not UTF-8 (PhpSerializer then uses base64). */
final class AnonymousRecorded
{
    public function __construct(public string $bytes)
    {
    }
}
