<?php

declare(strict_types=1);

namespace RedisLock\Symfony\Messenger;

use RedisLock\Client;
use Symfony\Component\Messenger\Envelope;
use Symfony\Component\Messenger\Middleware\MiddlewareInterface;
use Symfony\Component\Messenger\Middleware\StackInterface;
use Symfony\Component\Messenger\Stamp\ReceivedStamp;

/**
 * Runs a received message stamped with a `OnceStamp` once per key, across
 * every worker and transport: each key is a slot of `Client::once()`
 * (`once:{<name>}:s:<key>`). The worker that claims it runs the rest of
 * the bus (the handlers) and marks it done; a worker that finds it claimed
 * returns the envelope unhandled, and Messenger acknowledges it. A handler
 * that throws gives the slot back, so Messenger's retry of that message
 * runs it. Messages being sent, and messages without the stamp, pass
 * through untouched. Put it before `handle_message` in the bus.
 */
final class OnceMiddleware implements MiddlewareInterface
{
    public function __construct(private readonly Client $client, private readonly string $name = 'messenger')
    {
    }

    public function handle(Envelope $envelope, StackInterface $stack): Envelope
    {
        $once = $envelope->last(OnceStamp::class);
        if (!$once instanceof OnceStamp || $envelope->last(ReceivedStamp::class) === null) {
            return $stack->next()->handle($envelope, $stack);
        }
        $slot = $this->client->once($this->name, $once->key,
            ['keep' => $once->keep] + ($once->retryAfter === null ? [] : ['retryAfter' => $once->retryAfter]));
        if (!$slot->won()) {
            return $envelope;
        }
        try {
            $envelope = $stack->next()->handle($envelope, $stack);
        } catch (\Throwable $e) {
            $slot->release();
            throw $e;
        }
        $slot->done();
        return $envelope;
    }
}
