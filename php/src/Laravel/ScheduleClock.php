<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Carbon\Carbon;
use Carbon\CarbonImmutable;
use Carbon\CarbonInterface;
use RedisLock\Client;

/**
 * The scheduler's clock when its mutexes are redislock's: a `schedule:run`
 * is the run of one minute of the Redis server's clock, the minute nearest
 * to when the run starts, whatever this machine's clock says. From the
 * start of the run to its end, Laravel's clock (`now()`, `Date::now()`,
 * Carbon) reads that minute and runs on from it, so the events due, their
 * filters and the minute `onOneServer()` claims are the same on every
 * server whose cron started the run within 30 s of that minute. A clock
 * the application faked (`Carbon::setTestNow()`, `travelTo()`) is kept:
 * the run is then that clock's minute.
 */
final class ScheduleClock
{
    /** Unix seconds of the minute being run, while a run lasts. */
    private ?int $minute = null;
    /** @var array<class-string, mixed> what each Carbon class's test clock was before the run */
    private array $before = [];

    public function __construct(private readonly Client $client)
    {
    }

    /** Starts a run: its minute, and Laravel's clock on it. */
    public function start(): void
    {
        $this->stop();
        if (Carbon::hasTestNow() || CarbonImmutable::hasTestNow()) {
            $this->minute = self::nearest((float) Carbon::now()->format('U.u'));
            return;
        }
        $minute = self::nearest($this->client->time());
        $shift = (int) round(($minute - microtime(true)) * 1e6);
        $clock = static fn (CarbonInterface $real) => $real->modify(sprintf('%+d microseconds', $shift));
        foreach ([Carbon::class, CarbonImmutable::class] as $class) {
            $this->before[$class] = $class::getTestNow();
            $class::setTestNow($clock);
        }
        $this->minute = $minute;
    }

    /** Ends the run: Laravel's clock is again what it was. */
    public function stop(): void
    {
        foreach ($this->before as $class => $clock) {
            $class::setTestNow($clock);
        }
        $this->before = [];
        $this->minute = null;
    }

    /**
     * The minute `$time` belongs to: the run's while one lasts (the time
     * `schedule:run` passes is its own start), else the server's minute
     * nearest to now.
     */
    public function minute(): int
    {
        return $this->minute ?? self::nearest($this->client->time());
    }

    private static function nearest(float $seconds): int
    {
        return (int) (round($seconds / 60) * 60);
    }
}
