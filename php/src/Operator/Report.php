<?php

declare(strict_types=1);

namespace RedisLock\Operator;

use RedisLock\Client;

/**
 * What the CLI, the dashboard and the metrics page show, read through the
 * extension: queues with their counts, totals and rates, and locks.
 */
final class Report
{
    /**
     * @param float $goneAfter seconds unseen after which a worker running none of the queue's tasks is gone (GONE_AFTER)
     * @param (\Closure(string): Client)|null $forPrefix a client of the same server under another key prefix
     */
    public function __construct(
        private readonly Client $client,
        private readonly float $goneAfter = self::GONE_AFTER,
        private readonly ?\Closure $forPrefix = null,
    ) {
    }

    /**
     * The queues under the other key prefixes of this server (other apps',
     * Laravel's `laravel_database_`): prefix => list of ['name', 'ready',
     * 'delayed', 'leased', 'dead'], sorted; none without $forPrefix.
     *
     * @return array<string, list<array{name: string, ready: int, delayed: int, leased: int, dead: int}>>
     */
    public function otherPrefixes(): array
    {
        if ($this->forPrefix === null) {
            return [];
        }
        $own = $this->client->__debugInfo()['prefix'];
        $out = [];
        foreach ($this->client->queuePrefixes() as $prefix) {
            if ($prefix === $own) {
                continue;
            }
            $client = ($this->forPrefix)($prefix);
            $partitions = $client->queuePartitions();
            foreach ($client->queues() as $name) {
                $m = $client->queue($name, ['partitions' => $partitions[$name] ?? 1])->metrics();
                $out[$prefix][] = ['name' => $name, 'ready' => $m['ready'], 'delayed' => $m['delayed'], 'leased' => $m['leased'], 'dead' => $m['dead']];
            }
        }
        return $out;
    }

    /** Seconds unseen after which a worker running none of the queue's tasks is gone. */
    public function goneAfter(): float
    {
        return $this->goneAfter;
    }

    /** @var array<string, int>|null queues kept in partitions: name => count */
    private ?array $partitions = null;

    /** The queue $name, whole when it is kept in partitions. */
    private function open(string $name): \RedisLock\Queue
    {
        $this->partitions ??= $this->client->queuePartitions();
        return $this->client->queue($name, ['partitions' => $this->partitions[$name] ?? 1]);
    }

    /** Every registered queue (see queue()), by name. */
    public function queues(bool $history = false): array
    {
        return array_map(fn (string $name) => $this->queue($name, $history), $this->client->queues());
    }

    /**
     * A queue's metrics() with its name first and 'perMinute': each counter
     * over the last minute (the six whole periods of 10 s before the
     * running one); with $history also its history().
     */
    public function queue(string $name, bool $history = false): array
    {
        $queue = $this->open($name);
        $periods = $queue->history();
        $metrics = $queue->metrics();
        $minute = array_slice($periods, -7, 6);
        $perMinute = [];
        foreach (array_keys($metrics['totals']) as $counter) {
            $perMinute[$counter] = array_sum(array_column($minute, $counter));
        }
        $parts = $queue->partitions() > 1 ? ['partitions' => array_map(
            fn (array $m) => array_intersect_key($m, array_flip(['ready', 'delayed', 'leased', 'dead'])),
            $queue->partitionMetrics(),
        )] : [];
        return ['name' => $name] + $metrics + ['perMinute' => $perMinute] + $parts
            + ['timings' => self::timings($queue->recent(1000), microtime(true))]
            + ($history ? ['history' => $periods] : []);
    }

    /** What the queue's recent attempts take in Redis (Queue::recentFootprint()). */
    public function recentFootprint(string $name): array
    {
        return $this->open($name)->recentFootprint();
    }

    /** "12 of the last 100 for 3600 s, 4.1 kB": a footprint said in a line. */
    public static function footprintText(array $f, string $unit = ' '): string
    {
        $bytes = $f['bytes'] === null ? 'size unknown' : sprintf("%.1f{$unit}kB", $f['bytes'] / 1024);
        $bound = ($f['maxBytes'] ?? null) === null ? '' : sprintf(" within %.1f{$unit}kB of records", $f['maxBytes'] / 1024);
        return sprintf("%d of the last %d for %d{$unit}s%s, %s", $f['kept'], $f['keep'], $f['seconds'], $bound, $bytes);
    }

    /** The span of the recent attempts the timings are over, in seconds. */
    public const TIMINGS_OVER = 300;

    /**
     * The runtime and wait of the attempts that ended in the last
     * TIMINGS_OVER seconds (of those the queue keeps: Queue::keepRecent()):
     * 'attempts' (how many), and 'runtime' and 'wait', each ['p50' => s,
     * 'p95' => s] or null when none says. Runtime is a worker's (acked,
     * nacked or buried attempts); wait is from due to reserve, every attempt.
     */
    public static function timings(array $recent, float $now): array
    {
        $recent = array_filter($recent, fn (array $a) => $a['at'] >= $now - self::TIMINGS_OVER);
        $worked = array_filter($recent, fn (array $a) => $a['outcome'] !== 'expired'
            && !($a['outcome'] === 'dead' && $a['reason'] === 'lease ran out'));
        return [
            'attempts' => count($recent),
            'runtime' => self::quantiles(array_column($worked, 'runtime')),
            'wait' => self::quantiles(array_column($recent, 'wait')),
        ];
    }

    /** A runtime or wait as the CLI and the dashboard show it: ms under a second, else seconds. */
    public static function span(?float $seconds): string
    {
        return match (true) {
            $seconds === null => '-',
            $seconds < 1 => sprintf('%d ms', (int) round($seconds * 1000)),
            default => sprintf('%.2fs', $seconds),
        };
    }

    /** The median and 95th percentile (nearest rank) of some seconds, or null for none. */
    private static function quantiles(array $seconds): ?array
    {
        $seconds = array_values(array_filter($seconds, fn ($s) => $s !== null));
        if ($seconds === []) {
            return null;
        }
        sort($seconds);
        $rank = fn (float $q) => $seconds[max(0, (int) ceil($q * count($seconds)) - 1)];
        return ['p50' => $rank(0.5), 'p95' => $rank(0.95)];
    }

    /**
     * The recent attempts of a queue (Queue::recent()), newest first, of
     * task $id and with tag $tag only when given; each with the 'host' and
     * 'pid' of its worker when the queue's workers still name it (else null).
     */
    public function recent(string $name, int $limit = 100, ?string $id = null, ?string $tag = null): array
    {
        $recent = $this->open($name)->recent($limit, $id, $tag);
        $workers = [];
        foreach ($this->open($name)->workers(1000) as $w) {
            $workers[$w['id']] = $w;
        }
        foreach ($recent as &$a) {
            $a['host'] = $workers[$a['worker'] ?? '']['host'] ?? null;
            $a['pid'] = $workers[$a['worker'] ?? '']['pid'] ?? null;
        }
        return $recent;
    }

    /** Sets how many recent attempts a queue keeps, for how long and within how many bytes (Queue::keepRecent()). */
    public function keepRecent(string $name, int $count, float $seconds, ?int $maxBytes = null): bool
    {
        return $this->open($name)->keepRecent($count, $seconds, $maxBytes);
    }

    /** The dead letters of a queue, oldest first. */
    public function dead(string $name, int $limit = 100): array
    {
        return $this->open($name)->dead($limit);
    }

    /** The first tasks queued on a queue, earliest due first. */
    public function queued(string $name, int $limit = 10): array
    {
        return $this->open($name)->peek($limit);
    }

    public function retry(string $name, array $ids = []): int
    {
        return $this->open($name)->retryDead($ids ?: null);
    }

    public function purge(string $name, array $ids = []): int
    {
        return $this->open($name)->purgeDead($ids ?: null);
    }

    /** The task `$id` of a queue wherever it is (Queue::find()), or null. */
    public function task(string $name, string $id): ?array
    {
        return $this->open($name)->find($id);
    }

    /** The groups of a queue (Queue::groups()), the one served next first. */
    public function groups(string $name, int $limit = 100): array
    {
        return $this->open($name)->groups($limit);
    }

    /**
     * A search by tag: the tasks of a queue with tag $tag (Queue::tagged():
     * queued, running and dead), and its recent attempts with it.
     */
    public function tagged(string $name, string $tag, int $limit = 100): array
    {
        // One more than shown says whether the list was cut (up to 1000: then it is not known).
        $tasks = $this->open($name)->tagged($tag, min($limit + 1, 1000));
        return ['tasks' => array_slice($tasks, 0, $limit), 'more' => count($tasks) > $limit,
            'recent' => $this->recent($name, $limit, null, $tag)];
    }

    /** How many tasks of each state a search by job name looks at. */
    public const JOBS_SCANNED = 1000;

    /**
     * A search by job name: the tasks whose payload names the framework job
     * $job (job(): Laravel's displayName, Messenger's message class; the
     * class's short name matches too), among the first JOBS_SCANNED queued,
     * running and dead ones: ['tasks' => the first $limit, the earliest
     * `at` first, each with id, state, at, attempts, reason and payload;
     * 'more' => whether more matched].
     */
    public function jobs(string $name, string $job, int $limit = 100): array
    {
        $queue = $this->open($name);
        $all = [];
        foreach ($queue->peek(self::JOBS_SCANNED) as $t) {
            $all[] = ['state' => 'queued', 'at' => $t['at']] + $t;
        }
        foreach ($queue->leased(self::JOBS_SCANNED) as $t) {
            $all[] = ['state' => 'leased', 'at' => $t['until']] + $t;
        }
        foreach ($queue->dead(self::JOBS_SCANNED) as $t) {
            $all[] = ['state' => 'dead', 'at' => $t['diedAt']] + $t;
        }
        $matches = array_values(array_filter($all, function (array $t) use ($job): bool {
            $found = self::job($t['payload']);
            return $found !== null && ($found === $job || substr((string) strrchr('\\' . $found, '\\'), 1) === $job);
        }));
        usort($matches, fn (array $a, array $b) => $a['at'] <=> $b['at']);
        return ['tasks' => array_slice($matches, 0, $limit), 'more' => count($matches) > $limit];
    }

    /** Removes the tasks waiting under these ids (Queue::remove()); how many. */
    public function remove(string $name, array $ids): int
    {
        return $this->open($name)->remove($ids);
    }

    /** The tasks running now (leased), the earliest lease end first. */
    public function running(string $name, int $limit = 100): array
    {
        return $this->open($name)->leased($limit);
    }

    /**
     * A worker not seen reserving for this long (seconds, by default: the
     * CLI's --gone-after, the dashboard's REDISLOCK_GONE_AFTER), and running
     * none of the queue's tasks, is gone: its process ended or stopped
     * taking tasks. It is forgotten a day after it was last seen.
     */
    public const GONE_AFTER = 600;

    /** A worker unseen longer than this many seconds is said plainly to be "not seen for". */
    public const SEEN_PLAINLY = 60;

    /**
     * How long ago a worker was seen, $seconds ago: "1.5 s ago", or "not
     * seen for 75 s" past SEEN_PLAINLY; $unit joins number and unit.
     */
    public static function seen(float $seconds, string $unit = ' s'): string
    {
        return $seconds < self::SEEN_PLAINLY ? sprintf("%.1f{$unit} ago", $seconds) : sprintf("not seen for %d{$unit}", $seconds);
    }

    /**
     * What is left of a lease ending at $until: a lease that ran out is
     * the task's no longer (the next reserve takes it back), so it says
     * "expired N s ago"; $unit joins number and unit.
     */
    public static function leaseLeft(float $until, float $now, string $unit = ' s'): string
    {
        return $until > $now ? sprintf("%.1f{$unit}", $until - $now) : sprintf("expired %.1f{$unit} ago", $now - $until);
    }

    /**
     * The name of the framework job a task's payload holds, as Horizon and
     * Messenger's own tools show it: a Laravel job's `displayName` (its
     * class, or a closure's or a mailable's name), a Messenger message's
     * class (the `type` header of Symfony's serializer, or the class of
     * the envelope's message in PHP's serialization); null for any other
     * payload. Nothing is instantiated: the payload is read as text.
     */
    public static function job(?string $payload): ?string
    {
        if ($payload === null || $payload === '') {
            return null;
        }
        if ($payload[0] === '{') {
            $job = json_decode($payload, true, 8);
            $name = is_array($job) ? ($job['displayName'] ?? null) : null;
            return is_string($name) && $name !== '' ? $name : null;
        }
        $encoded = @unserialize($payload, ['allowed_classes' => false]);
        if (!is_array($encoded)) {
            return null;
        }
        $type = $encoded['headers']['type'] ?? null;
        if (is_string($type) && $type !== '') {
            return $type;
        }
        $body = $encoded['body'] ?? null;
        if (!is_string($body)) {
            return null;
        }
        // PhpSerializer's body: the envelope serialized, with slashes added
        // (and base64 when that is not UTF-8); its message is an object
        // property.
        foreach ([$body, base64_decode($body, true)] as $text) {
            if (is_string($text) && preg_match('/\x00message";O:\d+:"([^"]+)"/', stripslashes($text), $m)) {
                return $m[1];
            }
        }
        return null;
    }

    /**
     * Whether and how a lock of locks() is held: "no", "yes", a
     * semaphore's permits in use, of all when known ("2 of 4 permits",
     * "3 of 4 permits, 2 holders"; "2 permits" before a holder said), or a
     * shared lock's holders ("3 holders").
     */
    public static function held(array $lock): string
    {
        if (!$lock['held']) {
            return 'no';
        }
        $holders = $lock['holders'] > 1 ? "{$lock['holders']} holders" : null;
        if ($lock['kind'] === 'semaphore') {
            $of = ($lock['total'] ?? null) === null ? '' : " of {$lock['total']}";
            $permits = $lock['permits'] . $of . ($lock['permits'] === 1 && $of === '' ? ' permit' : ' permits');
            return $holders === null ? $permits : "$permits, $holders";
        }
        return $holders ?? 'yes';
    }

    /**
     * The gone threshold REDISLOCK_GONE_AFTER asks for (GONE_AFTER when it
     * is not set).
     *
     * @throws \InvalidArgumentException when it is set to anything but seconds > 0
     */
    public static function goneAfterFromEnvironment(): float
    {
        $value = getenv('REDISLOCK_GONE_AFTER');
        if ($value === false) {
            return self::GONE_AFTER;
        }
        if (!is_numeric($value) || !is_finite((float) $value) || (float) $value <= 0) {
            throw new \InvalidArgumentException('REDISLOCK_GONE_AFTER must be a number of seconds > 0, ' . var_export($value, true) . ' given');
        }
        return (float) $value;
    }

    /** The processes consuming a queue, the last seen first, each with whether it is `gone`. */
    public function workers(string $name, int $limit = 100): array
    {
        $workers = $this->open($name)->workers($limit);
        $now = microtime(true);
        $running = null;
        foreach ($workers as &$w) {
            $w['gone'] = false;
            if ($now - $w['seen'] > $this->goneAfter) {
                // Who runs the queue's tasks now: a worker busy with a long task is not gone.
                $running ??= array_flip(array_map(fn ($t) => $t['worker'] === null ? '' : "{$t['worker']['host']} {$t['worker']['pid']}",
                    $this->running($name, 1000)));
                $w['gone'] = $w['host'] === null || !isset($running["{$w['host']} {$w['pid']}"]);
            }
        }
        return $workers;
    }

    /** Pauses a queue's consumers; false when it was paused already. */
    public function pause(string $name): bool
    {
        return $this->open($name)->pause();
    }

    /** Lets a queue's consumers take tasks again; false when it was not paused. */
    public function resume(string $name): bool
    {
        return $this->open($name)->resume();
    }

    /** Removes every task waiting in a queue (leased ones finish); how many. */
    public function clear(string $name): int
    {
        return $this->open($name)->clear();
    }

    /**
     * Moves the tasks queued on queue $name (due now or later) to queue
     * $toName of $to: Queue::moveTo(). Returns how many left $name.
     */
    /**
     * Moves the tasks waiting in queue $name (kept in $from partitions,
     * default: as registered) to queue $toName of $to (in $toCount, default:
     * as registered there, else 1).
     */
    public function move(string $name, Client $to, string $toName, ?int $from = null, ?int $toCount = null): int
    {
        $source = $from === null ? $this->open($name) : $this->client->queue($name, ['partitions' => $from]);
        $toCount ??= $to->queuePartitions()[$toName] ?? 1;
        try {
            return $source->moveTo($to->queue($toName, ['partitions' => $toCount]));
        } catch (\ValueError) {
            // Its only one: the destination is the queue itself.
            throw new \ValueError("move: the destination is queue '" . Cli::clean($name) . "' itself (the same server, database and prefix): nothing was moved");
        }
    }

    /** Locks matching a glob (null: all), see Client::locks(). */
    public function locks(?string $pattern = null, int $limit = 100): array
    {
        return $this->client->locks($pattern, $limit);
    }

    /** The most locks the metrics read (each costs a script): their help says so. */
    public const METRIC_LOCKS = 10000;

    /**
     * The Prometheus exposition of every queue and of the locks (none on a
     * Cluster, where locks cannot be listed).
     */
    public function metrics(): string
    {
        $queues = $this->metricQueues();
        return Prometheus::render($queues, $this->metricLocks(), $this->metricWorkers($queues));
    }

    /** The metric families of metrics(), as data (Prometheus::families()). */
    public function metricFamilies(): array
    {
        $queues = $this->metricQueues();
        return Prometheus::families($queues, $this->metricLocks(), $this->metricWorkers($queues));
    }

    /** Every queue (queue()) with what its recent attempts take (recentFootprint()). */
    private function metricQueues(): array
    {
        return array_map(fn (array $q) => $q + ['recentFootprint' => $this->recentFootprint($q['name'])], $this->queues());
    }

    /** Each queue's workers (up to 1000), by queue name. */
    private function metricWorkers(array $queues): array
    {
        $workers = [];
        foreach ($queues as $q) {
            $workers[$q['name']] = $this->workers($q['name'], 1000);
        }
        return $workers;
    }

    private function metricLocks(): array
    {
        try {
            return $this->locks(null, self::METRIC_LOCKS);
        } catch (\ValueError) {
            return [];
        }
    }

    /**
     * Whether a queue of that name exists: registered by an enqueue, or
     * holding tasks (queued by code that predates the registry).
     */
    public function exists(string $name): bool
    {
        if (in_array($name, $this->client->queues(), true)) {
            return true;
        }
        $m = $this->open($name)->metrics();
        return $m['ready'] + $m['delayed'] + $m['leased'] + $m['dead'] > 0;
    }

    /** The registered queue names closest to a mistyped one (at most 2 edits away). */
    public function like(string $name): array
    {
        return array_values(array_filter(
            $this->client->queues(),
            fn (string $known) => strlen($known) < 256 && strlen($name) < 256 && levenshtein($known, $name) <= 2,
        ));
    }

    /** Frees the lock `$name` of `$kind` (as Client::lockState()'s) whoever holds it; false if it was not held. */
    public function release(string $name, string $kind): bool
    {
        return $this->client->forceRelease($name, $kind);
    }

    /**
     * Frees the lock `$name` whoever holds it: a `RedisLock\Client::lock()`
     * lock, and an exact-key lock (Laravel's) or a drop-in `RedisLock` lock
     * of that name as `locks` lists them (any key could be named: only those
     * the extension took are locks). False if none was held.
     */
    public function unlock(string $name): bool
    {
        $locks = [[$name, 'lock']];
        // A Lock_Service order lock is named by its order id; its key
        // `order_lock_<id>` names it too.
        $orderId = str_starts_with($name, 'order_lock_') ? substr($name, strlen('order_lock_')) : null;
        try {
            foreach ($this->client->locks(addcslashes($name, '*?[]\\'), 10) as $lock) {
                if ($lock['name'] === $name && $lock['held']) {
                    $locks[] = [$name, $lock['kind']];
                }
            }
            if ($orderId !== null && $orderId !== '' && $this->client->lockState($orderId, 'Lock_Service')['held']) {
                $locks[] = [$orderId, 'Lock_Service'];
            }
        } catch (\ValueError) {
            // A Cluster: locks are not listed, only lock() locks are freed.
        }
        $freed = false;
        foreach (array_unique($locks, SORT_REGULAR) as [$lockName, $kind]) {
            $freed = $this->client->forceRelease($lockName, $kind) || $freed;
        }
        return $freed;
    }
}
