<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Console\Scheduling\Event;
use Illuminate\Console\Scheduling\EventMutex as LaravelEventMutex;
use RedisLock\Client;
use RedisLock\Lock;
use RedisLock\LockLostException;
use RedisLock\NotHeldException;

/**
 * `withoutOverlapping()` on redislock: while an event runs, a lock of its
 * own (`lock:{schedule-running:<event's mutex name>}`) says so, with
 * Laravel's expiry (`withoutOverlapping($minutes)`, a day by default). The
 * lock belongs to the event, not to a process: the `schedule:finish` of
 * an event run in the background releases it. It is a lock, not a cache
 * entry, so `cache:clear` does not wipe it.
 */
final class EventMutex implements LaravelEventMutex
{
    public function __construct(private readonly Client $client)
    {
    }

    public function create(Event $event): bool
    {
        return $this->lock($event)->acquire();
    }

    public function exists(Event $event): bool
    {
        return $this->lock($event)->isHeld();
    }

    public function forget(Event $event): void
    {
        try {
            $this->lock($event)->release();
        } catch (NotHeldException | LockLostException) {
            // Expired, or never taken: nothing overlaps any more.
        }
    }

    private function lock(Event $event): Lock
    {
        $name = 'schedule-running:' . $event->mutexName();
        return $this->client->lock($name, [
            'ttl' => max(1, (int) $event->expiresAt) * 60,
            'owner' => $name,
            'releaseAtRequestEnd' => false,
        ]);
    }
}
