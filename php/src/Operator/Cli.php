<?php

declare(strict_types=1);

namespace RedisLock\Operator;

use RedisLock\Client;

/** The `redislock` command: see USAGE. */
final class Cli
{
    public const USAGE = <<<'TXT'
        Usage: redislock [options] <command> [arguments]

        Commands:
          status               every queue: paused, throttled or running, ready, delayed, leased, dead,
                               oldest due, rates
          queue NAME           one queue: counts, totals, rates, the first queued tasks
          dead NAME            its dead letters, oldest first, with why each died
          task NAME ID         one task wherever it is: state, due or lease end, attempts,
                               why its last attempt failed, its whole payload
          remove NAME ID...    removes tasks waiting in it (running ones finish)
          running NAME         its tasks running now: worker, for how long, lease left
          recent NAME [ID]     its recent attempts, newest first (of task ID only): acked, nacked,
                               expired or dead, attempts, runtime, wait, worker, why it failed
          tagged NAME TAG      its tasks a producer tagged TAG (queued, running, dead), and
                               their recent attempts
          jobs NAME JOB        its tasks of the framework job JOB (Laravel's displayName,
                               Messenger's message class, or their short name), among
                               the first 1000 queued, running and dead
          groups NAME          its groups, the one reserve() serves next first: their tasks, limits
          keep-recent NAME COUNT [SECONDS [BYTES]]
                               how many recent attempts it keeps (0: none), for how long
                               (default 3600 s), within BYTES of records (10M, 512k;
                               default: no bound); what is past them goes now
          workers NAME         the processes consuming it: host, pid, since, last seen (gone:
                               not seen for 10 minutes and running none of its tasks), done
          retry NAME [ID...]   dead letters back to the queue (all without ids)
          purge NAME [ID...]   dead letters removed with their payloads (all without ids)
          pause NAME           its workers take no new tasks (running ones finish)
          resume NAME          its workers take tasks again
          clear NAME           removes every task waiting in it (running ones finish)
          locks [PATTERN]      locks, semaphores, read-write locks (glob on names): holder,
                               lease left, token, waiters
          unlock NAME --force  frees a lock (RedisLock\Client::lock()'s, Laravel's, a drop-in RedisLock's,
                               a semaphore, a read-write lock) whoever holds it
          move NAME [TO]       the tasks queued on NAME to queue TO (default NAME) of --to-url,
                               or under --to-partitions (a queue's new partition count)
          metrics              the Prometheus text exposition
          check [NAME...]      every queue (or those named) against the thresholds below;
                               exit 1 when one is crossed (for cron, probes, Nagios)
          doctor PATH          an app's copies of Lock_Service, RedisLock and RedisQueue (and
                               unrelated classes of those names): what each changed, what
                               the swap to the extension changes, the steps; changes nothing
          doctor --fix PATH    takes those steps: rewrites each copy (the old file kept as
                               FILE.orig) and writes the php.ini lines to redislock-doctor.ini;
                               exit 0 when no step is left for a human, else 4
          doctor --diff PATH   what --fix would change, as a patch (diff -u), changing nothing

        Options:
          --url=DSN            the Redis to look at (default: $REDISLOCK_URL, else the
                               redislock.default_dsn INI setting)
          --json               JSON instead of tables and text (one document per line)
          --watch[=SECONDS]    repeat every SECONDS (default 2) until interrupted; into a
                               pipe or file, each round starts with a line '--- <time>'
          --limit=N            at most N dead letters, tasks, workers or locks (default 100)
          --prefix=PREFIX      the key prefix to look under (default: the DSN's); status
                               lists the queues under the others too
          --to-url=DSN         where move puts the tasks (default: --url): another
                               prefix (?prefix=...), database or server
          --partitions=N       move: the source's partition count (default: as registered)
          --to-partitions=N    move: the destination's (default: as registered, else 1)
          --yes                do not ask before retry, purge, pause, resume, clear,
                               remove, unlock and move
          --ready=N            check: more than N tasks ready (due) is a problem
          --oldest=SECONDS     check: a due task waiting longer is a problem
          --dead=N             check: more than N dead letters is a problem
          --idle=SECONDS       check: no worker seen reserving for longer is a problem
          --gone-after=SECONDS workers: one not seen for longer, running none of the
                               queue's tasks, is gone (default $REDISLOCK_GONE_AFTER, or 600)
          -h, --help           this text

        Exit status: 0 done, 1 failed, declined or no such queue (check: a threshold
        crossed), 2 wrong usage, 3 check could not look (Redis out of reach, no such queue).

        TXT;

    private const COMMANDS = ['status', 'queue', 'task', 'remove', 'dead', 'running', 'recent', 'tagged', 'jobs', 'groups', 'keep-recent', 'workers', 'retry', 'purge', 'pause', 'resume', 'clear', 'locks', 'unlock', 'move', 'metrics', 'check', 'doctor'];
    /** check's thresholds: option => what crossing it says. */
    private const THRESHOLDS = ['ready' => 'tasks ready', 'oldest' => 's the oldest due task waited', 'dead' => 'dead letters', 'idle' => 's since a worker was seen'];
    private const DESTRUCTIVE = ['retry', 'purge', 'pause', 'resume', 'clear', 'remove', 'unlock', 'move', 'keep-recent'];
    /** The commands that name a queue, which must exist. */
    private const ON_A_QUEUE = ['queue', 'task', 'remove', 'dead', 'running', 'recent', 'tagged', 'jobs', 'groups', 'keep-recent', 'workers', 'retry', 'purge', 'pause', 'resume', 'clear', 'move'];

    /** @param resource $in @param resource $out @param resource $err */
    public function __construct(private $in = STDIN, private $out = STDOUT, private $err = STDERR)
    {
    }

    public function run(array $argv): int
    {
        try {
            [$command, $args, $options] = $this->parse(array_slice($argv, 1));
        } catch (\InvalidArgumentException $e) {
            $this->say($this->err, "redislock: {$e->getMessage()}\n" . self::usageOf(array_slice($argv, 1)) . "\n");
            return 2;
        }
        if ($command === 'help') {
            fwrite($this->out, self::USAGE);
            return 0;
        }
        if ($command !== 'doctor' && !extension_loaded('redislock')) {
            $this->say($this->err, "redislock: $command reads Redis through the redislock extension, which this PHP has not loaded (php -m lists what is; docs/install.md)\n");
            return 1;
        }
        if ($command === 'doctor') {
            $doctor = new Doctor();
            try {
                $reports = $doctor->examine($args[0]);
            } catch (\InvalidArgumentException $e) {
                $this->say($this->err, "redislock: {$e->getMessage()}\n");
                return 1;
            }
            $left = [];
            if ($options['fix'] || $options['diff']) {
                try {
                    [$done, $left] = $doctor->fix($reports, $args[0], $options['diff']);
                } catch (\RuntimeException $e) {
                    $this->say($this->err, "redislock: {$e->getMessage()}\n");
                    return 1;
                }
                if ($options['diff']) {
                    // (The patch as it is, to apply: only what is left goes through the escaping.)
                    fwrite($this->out, implode('', $doctor->patches()));
                    $this->say($this->err, $left === [] ? '' : Doctor::fixText([], $left));
                } else {
                    $options['json'] ? fwrite($this->out, self::json(['done' => $done, 'left' => $left]) . "\n")
                        : $this->say($this->out, Doctor::fixText($done, $left));
                }
            } else {
                $options['json'] ? fwrite($this->out, self::json($reports) . "\n") : $this->say($this->out, Doctor::text($reports));
            }
            // What could not be read is said, one line each; the report is of the rest.
            foreach ($doctor->skipped() as [$file, $why]) {
                $this->say($this->err, 'redislock: doctor skipped ' . self::clean($file, 300) . ": $why\n");
            }
            return $left !== [] ? 4 : ($doctor->skipped() === [] ? 0 : 3);
        }
        try {
            $forPrefix = fn (string $prefix) => new Client(['prefix' => $prefix] + ($options['url'] === null ? [] : ['dsn' => $options['url']]));
            $report = new Report($options['prefix'] === null ? new Client($options['url']) : $forPrefix($options['prefix']), $options['goneAfter'], $forPrefix);
            if (in_array($command, self::ON_A_QUEUE, true) && !$report->exists($args[0])) {
                $like = $report->like($args[0]);
                $this->say($this->err, "redislock: no queue '" . self::clean($args[0]) . "'"
                    . ($like ? ": did you mean '" . implode("' or '", array_map(self::clean(...), $like)) . "'?" : ' (redislock status lists the queues)') . "\n");
                return 1;
            }
            if (in_array($command, self::DESTRUCTIVE, true)) {
                return $this->change($report, $command, $args, $options);
            }
            if ($command === 'check') {
                return $this->check($report, $args, $options);
            }
            do {
                // (A reader that went, `| head`: the round is not written, and the watch ends.)
                $read = $this->show($command, $this->look($report, $command, $args, $options['limit'], $options['json']), $options);
                $again = $read && $options['watch'] !== null;
                if ($again) {
                    usleep((int) ($options['watch'] * 1e6));
                }
            } while ($again);
            return 0;
        } catch (\RedisLock\RedisLockException | \ValueError | \TypeError $e) {
            $this->say($this->err, self::message($e) . "\n");
            return $command === 'check' ? 3 : 1;
        }
    }

    /**
     * `check`: each queue (all, or those named) against the thresholds;
     * one line per problem, or one saying all is well. Exit 0, 1 (a
     * threshold crossed) or 3 (a named queue does not exist).
     */
    private function check(Report $report, array $names, array $options): int
    {
        foreach ($names as $name) {
            if (!$report->exists($name)) {
                $this->say($this->err, "redislock: no queue '" . self::clean($name) . "'\n");
                return 3;
            }
        }
        $queues = $names === [] ? $report->queues() : array_map(fn (string $name) => $report->queue($name), $names);
        $problems = [];
        foreach ($queues as $q) {
            $values = [
                'ready' => $q['ready'],
                'oldest' => $q['oldestDueAge'] ?? 0.0,
                'dead' => $q['dead'],
            ];
            if (isset($options['thresholds']['idle'])) {
                $seen = $report->workers($q['name'], 1)[0]['seen'] ?? null;
                $values['idle'] = $seen === null ? INF : max(0, microtime(true) - $seen);
            }
            foreach ($options['thresholds'] as $check => $max) {
                if ($values[$check] > $max) {
                    $problems[] = ['queue' => $q['name'], 'check' => $check, 'value' => is_finite($values[$check]) ? $values[$check] : null, 'threshold' => $max];
                }
            }
        }
        if ($options['json']) {
            fwrite($this->out, self::json(['ok' => $problems === [], 'queues' => count($queues), 'problems' => $problems]) . "\n");
        } elseif ($problems === []) {
            $this->say($this->out, 'OK: ' . count($queues) . " queue(s) within the thresholds\n");
        } else {
            foreach ($problems as $p) {
                $value = $p['value'] === null ? ($p['check'] === 'idle' ? 'no worker seen' : '-')
                    : (is_float($p['value']) ? sprintf('%.1f', $p['value']) : $p['value']) . ' ' . self::THRESHOLDS[$p['check']];
                $this->say($this->out, "PROBLEM queue '" . self::clean($p['queue']) . "': $value (over " . $p['threshold'] . ")\n");
            }
        }
        return $problems === [] ? 0 : 1;
    }

    /** An error's message, said once as redislock's (the extension's own say so already). */
    public static function message(\Throwable $e): string
    {
        $message = $e->getMessage();
        return str_starts_with($message, 'redislock: ') ? $message : "redislock: $message";
    }

    /** @return array{string, list<string>, array} the command, its arguments, the options */
    private function parse(array $words): array
    {
        $options = ['url' => getenv('REDISLOCK_URL') ?: null, 'prefix' => null, 'toUrl' => null, 'json' => false, 'watch' => null, 'limit' => 100, 'yes' => false, 'force' => false, 'fix' => false, 'diff' => false, 'thresholds' => [], 'partitions' => null, 'toPartitions' => null,
            'goneAfter' => getenv('REDISLOCK_GONE_AFTER') === false ? Report::GONE_AFTER : self::positive(getenv('REDISLOCK_GONE_AFTER'), 'REDISLOCK_GONE_AFTER')];
        $rest = [];
        foreach ($words as $i => $word) {
            if ($word === '--') {
                array_push($rest, ...array_slice($words, $i + 1));
                break;
            }
            if ($word === '-h') {
                return ['help', [], $options];
            }
            if (!str_starts_with($word, '--')) {
                $rest[] = $word;
                continue;
            }
            [$name, $value] = explode('=', substr($word, 2), 2) + [1 => null];
            match ($name) {
                'help' => $rest = ['help'],
                'json', 'yes', 'force', 'fix', 'diff' => $options[$name] = $value === null
                    ? true : throw new \InvalidArgumentException("--$name takes no value"),
                'url' => $options['url'] = $value ?? throw new \InvalidArgumentException('--url needs a value: --url=DSN'),
                'to-url' => $options['toUrl'] = $value ?? throw new \InvalidArgumentException('--to-url needs a value: --to-url=DSN'),
                'prefix' => $options['prefix'] = $value ?? throw new \InvalidArgumentException('--prefix needs a value: --prefix=PREFIX'),
                'watch' => $options['watch'] = self::positive($value ?? '2', '--watch'),
                'gone-after' => $options['goneAfter'] = self::positive($value ?? '', '--gone-after'),
                'limit' => $options['limit'] = self::count($value ?? '', '--limit'),
                'partitions' => $options['partitions'] = self::partitionCount($value ?? '', '--partitions'),
                'to-partitions' => $options['toPartitions'] = self::partitionCount($value ?? '', '--to-partitions'),
                'ready', 'oldest', 'dead', 'idle' => $options['thresholds'][$name] = self::threshold($value, "--$name"),
                default => throw new \InvalidArgumentException("unknown option --$name"),
            };
            if ($rest === ['help']) {
                return ['help', [], $options];
            }
        }
        $command = array_shift($rest) ?? 'status';
        if ($command === 'help') {
            return ['help', [], $options];
        }
        if (!in_array($command, self::COMMANDS, true)) {
            throw new \InvalidArgumentException("unknown command '$command'");
        }
        $needsName = in_array($command, [...self::ON_A_QUEUE, 'unlock'], true);
        if ($needsName && ($rest[0] ?? '') === '') {
            throw new \InvalidArgumentException("$command needs a name");
        }
        if ($command === 'doctor' && ($rest[0] ?? '') === '') {
            throw new \InvalidArgumentException('doctor needs the path of an app (a directory or a file)');
        }
        $takes = match ($command) {
            'status', 'metrics' => 0,
            'check' => PHP_INT_MAX,
            'task', 'recent', 'tagged', 'jobs' => 2,
            'keep-recent' => 4,
            'queue', 'dead', 'running', 'workers', 'groups', 'pause', 'resume', 'clear', 'unlock', 'locks', 'doctor' => 1,
            'move' => 2,
            default => PHP_INT_MAX,
        };
        if (count($rest) > $takes) {
            throw new \InvalidArgumentException("too many arguments for $command");
        }
        if ($options['watch'] !== null && in_array($command, [...self::DESTRUCTIVE, 'check'], true)) {
            throw new \InvalidArgumentException("--watch is for commands that look, not $command");
        }
        if ($command === 'move' && $options['toUrl'] === null && ($rest[1] ?? $rest[0]) === $rest[0]
            && ($options['toPartitions'] === null || $options['toPartitions'] === $options['partitions'])) {
            throw new \InvalidArgumentException('move needs another queue, --to-url or --to-partitions');
        }
        foreach (['partitions', 'toPartitions'] as $only) {
            if ($options[$only] !== null && $command !== 'move') {
                throw new \InvalidArgumentException('--' . ($only === 'partitions' ? 'partitions' : 'to-partitions') . " is for move, not $command");
            }
        }
        foreach (['fix', 'diff'] as $only) {
            if ($options[$only] && $command !== 'doctor') {
                throw new \InvalidArgumentException("--$only is for doctor, not $command");
            }
        }
        if ($options['toUrl'] !== null && $command !== 'move') {
            throw new \InvalidArgumentException("--to-url is for move, not $command");
        }
        if (in_array($command, ['task', 'remove'], true) && count($rest) < 2) {
            throw new \InvalidArgumentException("$command needs a queue and a task id");
        }
        if ($command === 'tagged' && ($rest[1] ?? '') === '') {
            throw new \InvalidArgumentException('tagged needs a queue and a tag');
        }
        if ($command === 'jobs' && ($rest[1] ?? '') === '') {
            throw new \InvalidArgumentException('jobs needs a queue and a job name');
        }
        if ($command === 'keep-recent') {
            if (!preg_match('/^(0|[1-9][0-9]{0,5})$/', $rest[1] ?? '') || (int) $rest[1] > 100000) {
                throw new \InvalidArgumentException("keep-recent needs a queue and a COUNT from 0 to 100000, '" . ($rest[1] ?? '') . "' given");
            }
            $seconds = self::positive($rest[2] ?? '3600', 'keep-recent SECONDS');
            if ($seconds > 31536000) {
                throw new \InvalidArgumentException("keep-recent SECONDS must be at most a year (31536000), '{$rest[2]}' given");
            }
            if (isset($rest[3])) {
                self::bytes($rest[3]);
            }
        }
        if ($options['thresholds'] !== [] && $command !== 'check') {
            throw new \InvalidArgumentException('--' . array_key_first($options['thresholds']) . " is for check, not $command");
        }
        if ($command === 'unlock' && !$options['force']) {
            throw new \InvalidArgumentException('unlock frees a lock another process holds: say so with --force');
        }
        return [$command, $rest, $options];
    }

    private static function threshold(?string $value, string $option): float
    {
        if ($value === null || !is_numeric($value) || (float) $value < 0 || !is_finite((float) $value)) {
            throw new \InvalidArgumentException("$option needs a number >= 0, '" . ($value ?? '') . "' given");
        }
        return (float) $value;
    }

    /** A partition count: 1 to 128. */
    private static function partitionCount(string $value, string $option): int
    {
        if (!preg_match('/^[1-9][0-9]{0,2}$/', $value) || (int) $value > 128) {
            throw new \InvalidArgumentException("$option needs a partition count of 1 to 128, '$value' given");
        }
        return (int) $value;
    }

    private static function count(string $value, string $option): int
    {
        if (!preg_match('/^[1-9][0-9]{0,8}$/', $value)) {
            throw new \InvalidArgumentException("$option needs a whole number >= 1, '$value' given");
        }
        return (int) $value;
    }

    /** BYTES of keep-recent: a whole number, or with k, M or G (powers of 1024). */
    private static function bytes(string $value): int
    {
        if (!preg_match('/^([1-9][0-9]{0,12})([kMG]?)$/', $value, $m)
            || ($n = (int) $m[1] * (1024 ** strpos(' kMG', $m[2] ?: ' '))) > 2 ** 40) {
            throw new \InvalidArgumentException("keep-recent BYTES needs a whole number of bytes from 1 to 1T (like 512k or 10M), '$value' given");
        }
        return $n;
    }

    private static function positive(string $value, string $option): float
    {
        if (!is_numeric($value) || (float) $value <= 0 || !is_finite((float) $value)) {
            throw new \InvalidArgumentException("$option needs a number > 0, '$value' given");
        }
        return (float) $value;
    }

    private function look(Report $report, string $command, array $args, int $limit, bool $json): mixed
    {
        return match ($command) {
            // (JSON keeps its shape: a list of this prefix's queues.)
            'status' => $json ? $report->queues() : ['queues' => $report->queues(), 'others' => $report->otherPrefixes()],
            'queue' => $report->queue($args[0]) + ['queued' => $report->queued($args[0], min($limit, 1000)), 'recentFootprint' => $report->recentFootprint($args[0])],
            'dead' => $json ? $report->dead($args[0], min($limit, 1000))
                : ['list' => $report->dead($args[0], min($limit, 1000)), 'total' => $report->queue($args[0])['dead']],
            'task' => $report->task($args[0], $args[1]) ?? throw new \ValueError("no task '" . self::clean($args[1]) . "' in queue '" . self::clean($args[0]) . "'"),
            'recent' => $report->recent($args[0], min($limit, 1000), $args[1] ?? null),
            'tagged' => $report->tagged($args[0], $args[1], min($limit, 1000)),
            'jobs' => $report->jobs($args[0], $args[1], min($limit, 1000)),
            'groups' => $json ? $report->groups($args[0], min($limit, 1000))
                : ['list' => $report->groups($args[0], min($limit, 1000)), 'total' => $report->queue($args[0])['groups']],
            'running' => $json ? $report->running($args[0], min($limit, 1000))
                : ['list' => $report->running($args[0], min($limit, 1000)), 'total' => $report->queue($args[0])['leased']],
            // One more than shown, to know whether there are more.
            'workers' => $report->workers($args[0], min($limit + 1, 1000)),
            'locks' => $report->locks($args[0] ?? null, min($limit + 1, 10000)),
            'metrics' => $json ? $report->metricFamilies() : $report->metrics(),
        };
    }

    private function change(Report $report, string $command, array $args, array $options): int
    {
        $name = $args[0];
        $ids = array_slice($args, 1);
        if (in_array($command, ['retry', 'purge'], true)) {
            // Said before anything is asked or done: retry and purge act on
            // dead letters, and an id that is none is a mistake to hear of.
            foreach ($ids as $id) {
                $state = $report->task($name, $id)['state'] ?? null;
                if ($state !== 'dead') {
                    $this->say($this->err, "redislock: no dead letter '" . self::clean($id) . "' in queue '" . self::clean($name) . "'"
                        . ($state === null ? '' : " (that task is $state)") . "\n");
                    return 1;
                }
            }
        }
        $what = match ($command) {
            'retry' => ($ids ? count($ids) . ' dead letter(s)' : 'every dead letter') . " of queue '$name' back to the queue",
            'purge' => ($ids ? count($ids) . ' dead letter(s)' : 'every dead letter') . " of queue '$name', with their payloads, for good",
            'pause' => "queue '$name': its workers take no new tasks until resume (running ones finish)",
            'resume' => "queue '$name': its workers take tasks again",
            'clear' => "queue '$name': remove every task waiting in it, for good (running ones finish)",
            'remove' => count($ids) . " task(s) waiting in queue '$name', for good (a running one finishes)",
            'unlock' => "lock '$name', whoever holds it",
            'move' => "the tasks queued on '$name' to queue '" . ($args[1] ?? $name) . "'"
                . ($options['toUrl'] !== null ? ' of --to-url' : ''),
            'keep-recent' => "queue '$name' to keep its last {$args[1]} attempts for " . (float) ($args[2] ?? 3600) . ' s'
                . (isset($args[3]) ? ' within ' . self::bytes($args[3]) . ' bytes' : '') . ' (older ones go now)',
        };
        if (!$options['yes']) {
            $this->say($this->err, ucfirst($command) . " $what? [y/N] ");
            $answer = strtolower(trim((string) fgets($this->in)));
            if (!in_array($answer, ['y', 'yes'], true)) {
                $this->say($this->err, "redislock: nothing done\n");
                return 1;
            }
        }
        $result = match ($command) {
            'retry' => ['retried' => $report->retry($name, $ids)],
            'purge' => ['purged' => $report->purge($name, $ids)],
            'pause' => ['paused' => $report->pause($name)],
            'resume' => ['resumed' => $report->resume($name)],
            'clear' => ['cleared' => $report->clear($name)],
            'remove' => ['removed' => $report->remove($name, $ids)],
            'unlock' => ['unlocked' => $report->unlock($name)],
            'move' => ['moved' => $report->move($name, new Client($options['toUrl'] ?? $options['url']), $args[1] ?? $name, $options['partitions'], $options['toPartitions'])],
            'keep-recent' => ['kept' => $report->keepRecent($name, (int) $args[1], (float) ($args[2] ?? 3600), isset($args[3]) ? self::bytes($args[3]) : null)],
        };
        if ($options['json']) {
            fwrite($this->out, self::json($result) . "\n");
        } else {
            $n = reset($result);
            $this->say($this->out, match ($command) {
                'retry' => "$n dead letter(s) back in queue '$name'\n",
                'purge' => "$n dead letter(s) purged from queue '$name'\n",
                'pause' => $n ? "queue '$name' paused\n" : "queue '$name' was paused already\n",
                'resume' => $n ? "queue '$name' resumed\n" : "queue '$name' was not paused\n",
                'clear', 'remove' => "$n task(s) removed from queue '$name'\n",
                'unlock' => $n ? "lock '$name' freed\n" : "lock '$name' was not held\n",
                'move' => "$n task(s) moved\n",
                'keep-recent' => "queue '$name' keeps its last {$args[1]} attempts for " . (float) ($args[2] ?? 3600) . ' s'
                    . (isset($args[3]) ? ' within ' . self::bytes($args[3]) . ' bytes' : '') . "\n",
            });
        }
        return 0;
    }

    /** The queues under other key prefixes, and how to look at one of them. */
    private static function otherPrefixesText(array $others): string
    {
        if ($others === []) {
            return '';
        }
        $rows = [];
        foreach ($others as $prefix => $queues) {
            foreach ($queues as $q) {
                $rows[] = [$prefix === '' ? "''" : (string) $prefix, $q['name'], $q['ready'], $q['delayed'], $q['leased'], $q['dead']];
            }
        }
        return "\nqueues under other prefixes (redislock --prefix=PREFIX queue NAME looks at one):\n"
            . self::table(['PREFIX', 'QUEUE', ...array_map('strtoupper', array_values(View::COUNTS))], $rows);
    }

    private static function json(mixed $value): string
    {
        return json_encode($value, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR);
    }

    private function show(string $command, mixed $data, array $options): bool
    {
        $limit = $options['limit'];
        $more = in_array($command, ['locks', 'workers'], true) && count($data) > $limit;
        if ($more) {
            $data = array_slice($data, 0, $limit);
        }
        if ($options['json']) {
            $text = self::json($data) . "\n";
        } else {
            $text = match ($command) {
                'metrics' => $data,
                'status' => ($data['queues'] === [] ? "no queues yet\n" : self::table(
                    ['QUEUE', 'STATE', ...array_map('strtoupper', array_values(View::COUNTS)), 'OLDEST DUE', 'IN/MIN', 'DONE/MIN', 'FAILED/MIN'],
                    array_map(fn (array $q) => [
                        $q['name'], $q['paused'] !== null ? 'paused' : ($q['throttled'] !== null ? 'throttled' : 'running'), $q['ready'], $q['delayed'], $q['leased'], $q['dead'], self::age($q['oldestDueAge']),
                        $q['perMinute']['enqueued'], $q['perMinute']['acked'], $q['perMinute']['dead'],
                    ], $data['queues']),
                )) . self::otherPrefixesText($data['others']),
                'queue' => self::queueText($data),
                'dead' => $data['list'] === [] ? "no dead letters\n" : self::tasks(
                    ['ID', 'ATTEMPTS', 'DIED', 'PAYLOAD', 'REASON'],
                    $data['list'],
                    fn (array $t) => [$t['id'], $t['attempts'], self::time($t['diedAt']), self::cut($t['payload']), $t['reason'] ?? '-'],
                ) . self::showing(count($data['list']), $data['total'], 'dead letters'),
                'task' => self::taskText($data),
                'recent' => self::recentText($data),
                'groups' => $data['list'] === [] ? "no groups\n" : self::table(
                    ['GROUP', 'QUEUED', strtoupper(View::COUNTS['leased']), 'THROTTLED'],
                    array_map(fn (array $g) => [$g['group'] ?? '(none)', $g['queued'], $g['leased'] ?? '-',
                        $g['throttled'] > 0 ? sprintf('%.1fs', $g['throttled']) : '-'], $data['list']),
                ) . self::showing(count($data['list']), $data['total'], 'groups'),
                'tagged' => ($data['tasks'] === [] ? "no tasks with the tag\n" : self::tasks(
                    ['ID', 'STATE', 'AT', 'ATTEMPTS', 'REASON', 'PAYLOAD'],
                    $data['tasks'],
                    fn (array $t) => [$t['id'], $t['state'], self::time($t['at']), $t['attempts'], $t['reason'] ?? '-', self::cut($t['payload'])],
                )) . ($data['more'] ? 'showing the earliest ' . count($data['tasks']) . " tasks with the tag; there are more (--limit=N shows more, up to 1000)\n" : '')
                    . "\nrecent attempts:\n" . self::recentText($data['recent']),
                'jobs' => ($data['tasks'] === [] ? "no tasks of the job among the first " . Report::JOBS_SCANNED . " queued, running and dead\n" : self::table(
                    ['ID', 'STATE', 'AT', 'ATTEMPTS', 'REASON', 'PAYLOAD'],
                    array_map(fn (array $t) => [$t['id'], $t['state'], self::time($t['at']), $t['attempts'], $t['reason'] ?? '-', self::cut($t['payload'])], $data['tasks']),
                )) . ($data['more'] ? 'showing the earliest ' . count($data['tasks']) . " tasks of the job; there are more (--limit=N shows more, up to 1000)\n" : ''),
                'running' => $data['list'] === [] ? "nothing running\n" : self::runningText(View::leased($data['list'], microtime(true)))
                    . self::showing(count($data['list']), $data['total'], 'running tasks'),
                'workers' => $data === [] ? "no workers seen in the last day\n" : self::table(
                    ['WORKER', 'SINCE', 'LAST SEEN', 'DONE', 'PROCESS'],
                    array_map(fn (array $w) => [
                        $w['host'] === null ? $w['id'] : "{$w['host']} pid {$w['pid']}",
                        $w['since'] === null ? '-' : self::time($w['since']),
                        Report::seen(max(0, microtime(true) - $w['seen']), 's') . ($w['gone'] ? ' (gone)' : ''), $w['done'], $w['process'] ?? '-',
                    ], $data),
                ) . ($more ? "showing the first $limit workers; there are more (--limit=N shows up to 999)\n" : ''),
                'locks' => $data === [] ? "no locks\n" : self::table(
                    ['LOCK', 'KIND', 'HELD', 'LEFT', 'TOKEN', 'WAITING', 'HOLDER'],
                    array_map(fn (array $l) => [
                        $l['name'], $l['kind'], Report::held($l),
                        $l['held'] ? ($l['remaining'] === null ? 'no expiry' : sprintf('%.1fs', $l['remaining'])) : '-',
                        $l['token'] ?? '-', $l['waiting'],
                        $l['holder'] ? "{$l['holder']['host']} pid {$l['holder']['pid']} ({$l['holder']['process']})" : '-',
                    ], $data),
                ) . ($more ? "showing the first $limit locks; there are more (--limit=N shows up to 10000)\n" : ''),
            };
        }
        if (!$options['json']) {
            $text = self::printable($text);
        }
        if ($options['watch'] !== null && !$options['json']) {
            // A terminal is redrawn; a pipe or file gets rounds it can tell apart.
            $text = (stream_isatty($this->out)
                ? "\033[H\033[2J" . date('H:i:s T') . "  every {$options['watch']}s, Ctrl-C to stop\n\n"
                : '--- ' . date('Y-m-d H:i:s T') . "\n") . $text;
        }
        return self::written($this->out, $text);
    }

    /**
     * Writes all of `$text`; false when the reader has gone (EPIPE: PHP
     * ignores SIGPIPE, so a write to a closed pipe fails instead), said
     * by no notice.
     *
     * @param resource $stream
     */
    private static function written($stream, string $text): bool
    {
        while ($text !== '') {
            $n = @fwrite($stream, $text);
            if ($n === false || $n === 0) {
                return false;
            }
            $text = substr($text, $n);
        }
        return true;
    }

    /** The line under a list cut by --limit. */
    private static function showing(int $shown, int $total, string $what): string
    {
        return $shown < $total ? "showing $shown of $total $what (--limit=N shows more, up to 1000)\n" : '';
    }

    /**
     * The one way text reaches the terminal: every name, id, payload and
     * reason the CLI prints goes through printable(), so nothing a queue or
     * task holds can move the cursor, retitle or clear the operator's
     * terminal (JSON escapes its own).
     *
     * @param resource $stream
     */
    private function say($stream, string $text): void
    {
        fwrite($stream, self::printable($text));
    }

    /**
     * `$text` with control characters (but the line ends) and bytes that
     * are not UTF-8 written as `\xNN`.
     */
    public static function printable(string $text): string
    {
        return (string) preg_replace_callback(
            '/([\x0a\x20-\x7e]+|(?:[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}'
            . '|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}))|(.)/s',
            function (array $m): string {
                if (($m[2] ?? '') !== '') {
                    return sprintf('\\x%02x', ord($m[2]));
                }
                // C1 controls (U+0080 to U+009F) act on terminals too.
                return preg_match('/^\xc2[\x80-\x9f]$/', $m[1]) ? sprintf('\\xc2\\x%02x', ord($m[1][1])) : $m[1];
            },
            $text,
        );
    }

    /** One command's usage line (the general one for another word), for a usage error. */
    private static function usageOf(array $words): string
    {
        foreach ($words as $word) {
            if (in_array($word, self::COMMANDS, true)) {
                foreach (explode("\n", self::USAGE) as $line) {
                    if (preg_match('/^\s+(' . preg_quote($word, '/') . '\b[^ ]*(?: [A-Z.\[\]-]+)*)/', $line, $m) && str_starts_with(trim($line), $word)) {
                        return 'usage: redislock [options] ' . rtrim($m[1]) . ' (redislock --help says more)';
                    }
                }
            }
        }
        return 'usage: redislock [options] <command> [arguments] (redislock --help lists the commands)';
    }

    /** A name as a message or table shows it: control bytes as '?', at most $max bytes. */
    public static function clean(string $name, int $max = 100): string
    {
        $name = preg_replace('/[\x00-\x1f\x7f]/', '?', $name);
        return strlen($name) > $max ? substr($name, 0, $max - 3) . '...' : $name;
    }

    /** Recent attempts (Report::recent()) as a table. */
    private static function recentText(array $recent): string
    {
        return $recent === [] ? "no recent attempts\n" : self::table(
            ['ENDED', 'ID', 'OUTCOME', 'ATTEMPTS', 'RUNTIME', 'WAIT', 'WORKER', 'REASON'],
            array_map(fn (array $a) => [
                self::time($a['at']), $a['id'], $a['outcome'], $a['attempts'] ?? '-', Report::span($a['runtime']), Report::span($a['wait']),
                $a['host'] === null ? ($a['worker'] ?? '-') : "{$a['host']} pid {$a['pid']}", $a['reason'] ?? '-',
            ], $recent),
        );
    }

    /** One task, every field on a line of its own, the payload whole (control bytes as \xNN). */
    private static function taskText(array $t): string
    {
        $at = ['queued' => 'due', 'leased' => 'lease ends', 'dead' => 'died', 'waiting' => 'waits for'][$t['state']] ?? 'at';
        $payload = $t['payload'] === null ? '-'
            : preg_replace_callback('/[\x00-\x08\x0b-\x1f\x7f]/', fn ($m) => sprintf('\\x%02x', ord($m[0])), $t['payload']);
        return self::table(['TASK', self::clean($t['id'], 200)], [
            ...(($job = Report::job($t['payload'])) === null ? [] : [['job', $job]]),
            ['state', $t['state']],
            // A parent of a workflow waits for its children, not for a time.
            [$at, $t['state'] === 'waiting' ? "{$t['children']} child(ren) not ended" : self::time($t['at'])],
            ['attempts', $t['attempts']],
            ['reason', $t['reason'] ?? '-'],
            ['tags', $t['tags'] === [] ? '-' : implode(' ', $t['tags'])],
        ]) . (isset($t['childStates']) ? "\n" . self::table(['CHILD', 'STATE'], array_map(
            fn ($child, string $state) => [self::clean((string) $child, 200), $state],
            array_keys($t['childStates']), $t['childStates'],
        )) . "\n" : '') . "payload:\n$payload\n";
    }

    private static function queueText(array $q): string
    {
        $rows = [];
        foreach (['ready', 'delayed', 'leased', 'dead'] as $state) {
            $rows[] = [$state, $q[$state], '', ''];
        }
        $rows[] = ['oldest due', self::age($q['oldestDueAge']), '', ''];
        $state = $q['paused'] === null ? 'running' : 'paused since ' . self::time($q['paused']);
        if ($q['throttled'] !== null) {
            $state .= ', throttled until ' . self::time($q['throttled']);
        }
        $text = "queue {$q['name']} ($state)\n\n" . self::table(['NOW', 'TASKS', '', ''], $rows) . "\n"
            . (isset($q['partitions']) ? self::partitions($q['partitions']) : '')
            . ($q['groups'] > 0 ? "{$q['groups']} group(s) take turns (redislock groups {$q['name']} lists them)\n\n" : '');
        $rows = [];
        foreach ($q['totals'] as $counter => $total) {
            $rows[] = [$counter, $total, $q['perMinute'][$counter]];
        }
        $text .= self::table(['EVENT', 'TOTAL', 'LAST MINUTE'], $rows) . "\n";
        $t = $q['timings'];
        $text .= self::table(['LAST ' . (Report::TIMINGS_OVER / 60) . ' MINUTES', 'P50', 'P95'], [
            ['runtime', Report::span($t['runtime']['p50'] ?? null), Report::span($t['runtime']['p95'] ?? null)],
            ['wait', Report::span($t['wait']['p50'] ?? null), Report::span($t['wait']['p95'] ?? null)],
        ]) . "over {$t['attempts']} recent attempt(s) (redislock recent {$q['name']} lists them)\n"
            . 'recent attempts kept: ' . Report::footprintText($q['recentFootprint'], '') . " (redislock keep-recent {$q['name']} COUNT SECONDS [BYTES] sets them)\n\n";
        if ($q['queued'] === []) {
            return $text . "nothing queued\n";
        }
        return $text . self::tasks(
            ['QUEUED', 'DUE', 'ATTEMPTS', 'PAYLOAD'],
            $q['queued'],
            fn (array $t) => [$t['id'], self::time($t['at']), $t['attempts'], self::cut($t['payload'])],
        ) . self::showing(count($q['queued']), $q['ready'] + $q['delayed'], 'queued tasks');
    }

    /** Running tasks, and apart those whose lease ran out (View::leased()). */
    private static function runningText(array $leased): string
    {
        $table = fn (array $tasks, string $left) => self::tasks(
            ['ID', 'WORKER', 'RUNNING FOR', $left, 'ATTEMPTS', 'PAYLOAD'],
            $tasks,
            fn (array $t) => [$t['id'], $t['who'] ?? '-', $t['for'] === null ? '-' : self::age($t['for']), $t['left'], $t['attempts'], self::cut($t['payload'])],
        );
        return ($leased['running'] === [] ? "nothing running\n" : $table($leased['running'], 'LEASE LEFT'))
            . ($leased['overdue'] === [] ? '' : "\nleases that ran out (no longer their worker's: the next reserve takes each back):\n"
                . $table($leased['overdue'], 'LEASE'));
    }

    /** A partitioned queue's counts by partition, a row each. */
    private static function partitions(array $parts): string
    {
        $rows = [];
        foreach ($parts as $i => $m) {
            $rows[] = [$i, $m['ready'], $m['delayed'], $m['leased'], $m['dead']];
        }
        return count($parts) . " partitions:\n" . self::table(['PARTITION', ...array_map('strtoupper', array_values(View::COUNTS))], $rows) . "\n";
    }

    /**
     * A table of $tasks (rows made by $row) with, when any of them is a
     * framework job (Report::job()), a JOB column after the first.
     */
    private static function tasks(array $headers, array $tasks, \Closure $row): string
    {
        $rows = array_map($row, $tasks);
        $jobs = array_map(fn (array $t) => Report::job($t['payload'] ?? null), $tasks);
        if (array_filter($jobs) !== []) {
            array_splice($headers, 1, 0, ['JOB']);
            foreach ($rows as $i => &$r) {
                array_splice($r, 1, 0, [$jobs[$i] ?? '-']);
            }
        }
        return self::table($headers, $rows);
    }

    /**
     * Rows under headers, columns padded to their widest cell; a cell but
     * the last is cut at 40 bytes, so one long name does not widen every row.
     */
    private static function table(array $headers, array $rows): string
    {
        $cells = array_map(
            fn (array $row) => array_map(
                // (A payload is cut as the dashboard cuts it: View::payload().)
                fn ($c, int $i) => self::clean((string) $c, $i === count($row) - 1 ? 200 : ($headers[$i] === 'PAYLOAD' ? View::PAYLOAD_BYTES + 3 : 40)),
                $row,
                array_keys($row),
            ),
            [$headers, ...$rows],
        );
        $widths = [];
        foreach ($cells as $row) {
            foreach ($row as $i => $cell) {
                $widths[$i] = max($widths[$i] ?? 0, strlen($cell));
            }
        }
        $text = '';
        foreach ($cells as $row) {
            $line = '';
            foreach ($row as $i => $cell) {
                $line .= str_pad($cell, $widths[$i] + 2);
            }
            $text .= rtrim($line) . "\n";
        }
        return $text;
    }

    private static function age(?float $seconds): string
    {
        return $seconds === null ? '-' : sprintf('%.1fs', $seconds);
    }

    private static function time(float $at): string
    {
        return date('Y-m-d H:i:s T', (int) $at);
    }

    private static function cut(?string $payload): string
    {
        return View::payload($payload) ?? '-';
    }
}
