<?php

use RedisLock\Client;
use RedisLock\Symfony\Messenger\OnceMiddleware;
use RedisLock\Symfony\Messenger\OnceStamp;
use Symfony\Component\Messenger\Envelope;
use Symfony\Component\Messenger\Exception\HandlerFailedException;
use Symfony\Component\Messenger\Handler\HandlersLocator;
use Symfony\Component\Messenger\MessageBus;
use Symfony\Component\Messenger\Middleware\HandleMessageMiddleware;
use Symfony\Component\Messenger\Stamp\HandledStamp;
use Symfony\Component\Messenger\Stamp\ReceivedStamp;

/**
 * Messenger's messages stamped with a OnceStamp run once per key across
 * workers (OnceMiddleware): duplicates are acknowledged unhandled, a
 * handler that throws gives the key back for Messenger's retry, and
 * messages being sent pass through.
 */
final class SymfonyOnceTest extends RedisLockTestCase
{
    /** A bus of the middleware and a handler that counts in the Redis list `ran` (and throws while `$fails` > 0). */
    private static function bus(int &$fails = 0): MessageBus
    {
        $handler = function (stdClass $message) use (&$fails): string {
            if ($fails-- > 0) {
                throw new RuntimeException('the mail server said no');
            }
            $redis = RedisServer::$main->client();
            $redis->rPush('ran', $message->n);
            return 'sent';
        };
        return new MessageBus([new OnceMiddleware(new Client()),
            new HandleMessageMiddleware(new HandlersLocator([stdClass::class => [$handler]]))]);
    }

    private static function received(int $n, string $key): Envelope
    {
        $message = new stdClass();
        $message->n = $n;
        return new Envelope($message, [new OnceStamp($key), new ReceivedStamp('async')]);
    }

    public function testAKeyRunsOnceAndAFailureGivesItBack(): void
    {
        $fails = 0;
        $bus = self::bus($fails);
        $first = $bus->dispatch(self::received(1, 'invoice-42'));
        $second = $bus->dispatch(self::received(2, 'invoice-42'));
        $this->assertSame('sent', $first->last(HandledStamp::class)?->getResult());
        $this->assertNull($second->last(HandledStamp::class), 'a duplicate is not handled');
        $this->assertSame(['1'], $this->redis->lRange('ran', 0, -1));
        $this->assertNotNull((new Client())->once('messenger', 'invoice-42', ['claim' => false])->state()['done']);

        // A handler that throws: Messenger's retry runs the message again.
        $fails = 1;
        try {
            $bus->dispatch(self::received(3, 'invoice-43'));
            $this->fail('the handler threw');
        } catch (HandlerFailedException) {
        }
        $this->assertSame(0, (new Client())->once('messenger', 'invoice-43', ['claim' => false])->state()['runs'], 'given back');
        $bus->dispatch(self::received(3, 'invoice-43'));
        $this->assertSame(['1', '3'], $this->redis->lRange('ran', 0, -1));

        // Being sent (not received), or without the stamp: untouched.
        $message = new stdClass();
        $message->n = 4;
        $bus->dispatch(new Envelope($message, [new OnceStamp('invoice-44')]));
        $bus->dispatch(new Envelope($message, [new ReceivedStamp('async')]));
        $this->assertSame(['1', '3', '4', '4'], $this->redis->lRange('ran', 0, -1));
        $this->assertSame(0, (new Client())->once('messenger', 'invoice-44', ['claim' => false])->state()['runs']);
    }

    public function testWorkersRacingForOneKeyRunItOnce(): void
    {
        // 12 processes receive 12 copies of one scheduled message (a
        // scheduler that produces it once per worker), 3 keys in all.
        $code = 'require "/usr/share/php/Symfony/Component/Messenger/autoload.php";
            require "' . __DIR__ . '/messenger/autoload.php";
            $ran = 0;
            $bus = new Symfony\Component\Messenger\MessageBus([new RedisLock\Symfony\Messenger\OnceMiddleware(new RedisLock\Client()),
                new Symfony\Component\Messenger\Middleware\HandleMessageMiddleware(new Symfony\Component\Messenger\Handler\HandlersLocator(
                    [stdClass::class => [function () use (&$ran) { $ran++; }]]))]);
            foreach (["report-08:00", "report-08:05", "report-08:10"] as $key) {
                $bus->dispatch(new Symfony\Component\Messenger\Envelope(new stdClass(),
                    [new RedisLock\Symfony\Messenger\OnceStamp($key), new Symfony\Component\Messenger\Stamp\ReceivedStamp("async")]));
            }
            echo $ran, "\n";';
        $runs = array_map('intval', self::phpMany(array_fill(0, 12, $code)));
        $this->assertSame(3, array_sum($runs), 'each key ran once: ' . implode(' ', $runs));
    }
}
