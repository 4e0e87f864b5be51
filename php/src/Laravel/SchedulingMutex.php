<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use DateTimeInterface;
use Illuminate\Console\Scheduling\Event;
use Illuminate\Console\Scheduling\SchedulingMutex as LaravelSchedulingMutex;
use RedisLock\Client;

/**
 * `onOneServer()` on redislock: an event runs once per minute of the
 * Redis server's clock (ScheduleClock), across every server, whatever
 * their own clocks say. Each minute of each event is a slot of
 * `Client::once()` (`once:{schedule:<event's mutex name>}:s:<minute>`,
 * kept an hour, as Laravel keeps its own), outside the cache, so
 * `cache:clear` does not wipe it.
 */
final class SchedulingMutex implements LaravelSchedulingMutex
{
    public function __construct(private readonly Client $client, private readonly ScheduleClock $clock)
    {
    }

    public function create(Event $event, DateTimeInterface $time): bool
    {
        return $this->client->once(self::name($event), (string) $this->clock->minute(), ['keep' => 3600])->won();
    }

    public function exists(Event $event, DateTimeInterface $time): bool
    {
        $slot = $this->client->once(self::name($event), (string) $this->clock->minute(), ['claim' => false]);
        return $slot->state()['runs'] > 0;
    }

    private static function name(Event $event): string
    {
        return 'schedule:' . $event->mutexName();
    }
}
