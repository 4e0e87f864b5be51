<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use RedisLock\Operator\Cli;

/**
 * Which original a class derives from, by what it does, which of its
 * methods do each of the original's, what it changed, and the steps that
 * swap it for the extension.
 */
final class Classifier
{
    /**
     * @param list<array{string, int, string}> $loads require/include statements: file, line, what they load
     * @param array<string, list<string>> $constructed the string literals given to `new <class>(...)`, by the class's short name, lowercase
     */
    public function __construct(private array $loads = [], private array $constructed = [])
    {
    }

    /** The originals' methods, their parameters and defaults (null: none). */
    public const ORIGINALS = [
        'Lock_Service' => [
            'addLock' => ['intOrderId' => null, 'intExpireTime' => 86400],
            'releaseLock' => ['intOrderId' => null, 'intLockId' => null],
            'generateUniqueLockId' => [],
            'getRedisConn' => ['strIp' => '127.0.0.1', 'intPort' => 6379],
        ],
        'RedisLock' => [
            '__construct' => ['param' => null],
            'lock' => ['name' => null, 'timeout' => 0, 'expire' => 15, 'waitIntervalUs' => 100000],
            'unlock' => ['name' => null],
            'unlockAll' => [],
            'expire' => ['name' => null, 'expire' => null],
            'isLocking' => ['name' => null],
        ],
        'RedisQueue' => [
            '__construct' => ['param' => null],
            'enqueue' => ['name' => null, 'id' => null, 'timeout' => 10, 'afterInterval' => 0],
            'dequeue' => ['name' => null, 'id' => null, 'score' => null, 'timeout' => 10],
            'pop' => ['name' => null, 'count' => 1, 'timeout' => 10],
            'top' => ['name' => null, 'count' => 1],
        ],
    ];

    /** The originals' constants. */
    private const CONSTANTS = [
        'Lock_Service' => ['REDIS_LOCK_KEY_TEMPLATE' => 'order_lock_%s', 'REDIS_LOCK_DEFAULT_EXPIRE_TIME' => 86400,
            'REDIS_LOCK_UNIQUE_ID_KEY' => 'lock_unique_id', 'REDIS_CONFIG_HOST' => '127.0.0.1', 'REDIS_CONFIG_PORT' => 6379],
    ];

    /** The keys each original writes: a string of the class must start so. */
    private const KEYS = ['Lock_Service' => ['order_lock_', 'lock_unique_id'], 'RedisLock' => ['Lock:'], 'RedisQueue' => ['Queue:']];

    /** The defaults php.ini keeps: original, method, parameter => INI entry. */
    private const INI_DEFAULTS = [
        ['Lock_Service', 'addLock', 'intExpireTime', 'redislock.lock_service_expire'],
        ['RedisLock', 'lock', 'timeout', 'redislock.redis_lock_timeout'],
        ['RedisLock', 'lock', 'expire', 'redislock.redis_lock_expire'],
    ];

    /**
     * What changes for any copy when the extension stands in: what the
     * extension does on purpose otherwise (docs/drop-in.md's table).
     */
    public const SWAP_CHANGES = [
        'Lock_Service' => [
            'releaseLock() returns true only when it deleted the lock (the original said true even when its transaction aborted) (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'addLock() takes an id from lock_unique_id only when it takes the lock, in one round trip (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'locks are never released at request end, as before (docs/drop-in.md#lock_service-order-locks-whose-id-outlives-the-request)',
        ],
        'RedisLock' => [
            'a lock\'s value is a random owner token, not its expiry time: only the instance that took it can unlock, expire or see it (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'isLocking() returns the expiry time from the server\'s clock (a string), "" when the lock was lost, false when never taken (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'lock() takes the key with SET NX PX for $expire seconds (the original set an absolute timestamp as the TTL) (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'waiters queue first come first served, and an unlock hands the lock to the next (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'locks an instance still holds are released when it is destroyed or the request ends (redislock.release_at_request_end=0 keeps them) (docs/drop-in.md#redislock-named-locks-held-by-an-instance)',
            'beside Lock:<name>, a process that holds locks is described in redislock:holder:<id> (host, pid, SAPI, script; 24 h TTL) for operators (docs/keys.md)',
        ],
        'RedisQueue' => [
            'each call is one atomic script without a lock; "now" is the Redis server\'s clock (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'dequeue() returns 1.0 or false, as before, without the lock the original took first (docs/drop-in.md#what-differs-from-the-original-code-and-why)',
            'beside Queue:<name>, the extension keeps the queues\' registry (redislock:queues, a set) and each queue\'s counters ({Queue:<name>}:stats, a hash) (docs/keys.md)',
        ],
    ];


    /**
     * The largest file read: a class file is rarely past a few hundred KB,
     * and PHP's tokenizer takes up to some 130 times a file's size (a

    /**
     * Which original a class derives from, by what it does: the keys it
     * writes decide (`order_lock_%s` and `lock_unique_id` are
     * Lock_Service's whatever the class and its methods are called), then
     * its methods. `?` when its keys are those of two originals (the
     * doctor cannot tell); null for none.
     */
    public static function original(array $class): ?string
    {
        $methods = array_map('strtolower', array_keys($class['methods']));
        $has = fn (string ...$names) => array_diff(array_map('strtolower', $names), $methods) === [];
        $keyed = [];
        foreach (self::KEYS as $original => $prefixes) {
            foreach ($class['strings'] as $s) {
                foreach ($prefixes as $prefix) {
                    if (str_starts_with($s, $prefix)) {
                        $keyed[$original] = true;
                    }
                }
            }
        }
        if (isset($class['constants']['REDIS_LOCK_KEY_TEMPLATE']) || isset($class['constants']['REDIS_LOCK_UNIQUE_ID_KEY'])) {
            $keyed['Lock_Service'] = true;
        }
        // A class with the original's methods but none of the keys of its
        // own kind may still hold a key template of another in a string
        // (a message, a log line): the methods tell those apart.
        $byMethods = match (true) {
            $has('addLock', 'releaseLock') || ($has('addLock') && isset($keyed['Lock_Service'])) => 'Lock_Service',
            $has('enqueue') && ($has('dequeue') || $has('pop') || $has('top')) => 'RedisQueue',
            $has('lock', 'unlock') && ($has('isLocking') || $has('unlockAll') || $has('expire') || isset($keyed['RedisLock'])) => 'RedisLock',
            default => null,
        };
        if (count($keyed) === 1) {
            $original = array_key_first($keyed);
            // (Keys alone are no copy: a copy also takes and gives back.)
            return $byMethods === $original || self::roles($class, $original) !== null ? $original : $byMethods;
        }
        if (count($keyed) > 1) {
            return $byMethods ?? '?';
        }
        return $byMethods;
    }

    /**
     * Which of the class's methods does the work of each of the original's
     * (original method => the class's), by name, else (a copy whose
     * methods were renamed) by what each does: Lock_Service's take is the
     * method that SETs its key, its release the one that deletes it (DEL,
     * or a script), its id the one that INCRs. Null when a method the
     * original needs has no counterpart, or two could be it.
     *
     * @return array<string, string>|null
     */
    public static function roles(array $class, string $original): ?array
    {
        $mine = [];
        foreach (array_keys($class['methods']) as $m) {
            $mine[strtolower($m)] = $m;
        }
        $roles = [];
        foreach (array_keys(self::ORIGINALS[$original]) as $m) {
            // (A constructor and the connection helper are the copy's own.)
            if (isset($mine[strtolower($m)]) && $m !== '__construct' && $m !== 'getRedisConn') {
                $roles[$m] = $mine[strtolower($m)];
            }
        }
        $does = fn (string $m, string ...$calls) => array_intersect($calls, $class['does'][$m]['calls'] ?? []) !== [];
        if ($original === 'RedisLock') {
            $keyed = fn (string $m) => preg_grep('/^Lock:/', $class['does'][$m]['strings'] ?? []) !== [];
            // Renamed: the take SETs a Lock:<name> key NX, the release DELs
            // one, the extend EXPIREs one, the check reads one.
            $found = ['lock' => [], 'unlock' => [], 'expire' => [], 'isLocking' => []];
            foreach ($class['methods'] as $m => $params) {
                if (in_array($m, $roles, true) || !$keyed($m) || count($params) < 1) {
                    continue;
                }
                if ($does($m, 'set', 'setnx')) {
                    $found['lock'][] = $m;
                } elseif ($does($m, 'del', 'unlink') && count($params) === 1) {
                    $found['unlock'][] = $m;
                } elseif ($does($m, 'expire', 'pexpire') && count($params) === 2) {
                    $found['expire'][] = $m;
                } elseif ($does($m, 'exists', 'get') && count($params) === 1) {
                    $found['isLocking'][] = $m;
                }
            }
            foreach ($found as $role => $candidates) {
                if (!isset($roles[$role]) && count($candidates) === 1) {
                    $roles[$role] = $candidates[0];
                }
            }
        }
        if ($original !== 'Lock_Service') {
            // (A take and a give-back at least: a class with a lock() of
            // its own and a log line that says 'Lock:' is no copy.)
            return match ($original) {
                'RedisLock' => isset($roles['lock'], $roles['unlock']) ? $roles : null,
                default => isset($roles['enqueue']) && (isset($roles['dequeue']) || isset($roles['pop']) || isset($roles['top'])) ? $roles : null,
            };
        }
        $found = ['addLock' => [], 'releaseLock' => [], 'generateUniqueLockId' => []];
        foreach ($class['methods'] as $m => $params) {
            if (in_array($m, $roles, true) || strtolower($m) === '__construct' || strcasecmp($m, 'getRedisConn') === 0) {
                continue;
            }
            if ($does($m, 'set', 'setnx') && !$does($m, 'del', 'eval', 'evalsha') && count($params) >= 1) {
                $found['addLock'][] = $m;
            } elseif ($does($m, 'del', 'eval', 'evalsha') && count($params) >= 2) {
                $found['releaseLock'][] = $m;
            } elseif ($does($m, 'incr') && $params === []) {
                $found['generateUniqueLockId'][] = $m;
            }
        }
        foreach ($found as $role => $candidates) {
            if (!isset($roles[$role]) && count($candidates) === 1) {
                $roles[$role] = $candidates[0];
            } elseif (!isset($roles[$role]) && count($candidates) > 1) {
                return null;
            }
        }
        return isset($roles['addLock'], $roles['releaseLock']) ? $roles : null;
    }

    /**
     * The report on one class, or null when it is none of the doctor's
     * business. A copy to rewrite is rewritten in its file's tree (`node`);
     * a step that leaves its file as it is says so with `refused`.
     */
    public function judge(array $class): ?array
    {
        $fqn = ltrim($class['namespace'] . '\\' . $class['name'], '\\');
        $seedName = null;
        foreach (array_keys(self::ORIGINALS) as $seed) {
            if ($class['namespace'] === '' && strcasecmp($class['name'], $seed) === 0) {
                $seedName = $seed;
            }
        }
        if (str_contains($class['code'], Rewrite::MARK)) {
            return null; // (Rewritten by the doctor: it calls the extension.)
        }
        $original = self::original($class);
        $where = ['file' => $class['file'], 'line' => $class['line'], 'class' => $fqn, 'trait' => $class['trait']];
        if ($original === '?') {
            $keys = implode(', ', array_map(fn ($k) => "'$k'", array_unique(array_filter($class['strings'], fn ($s) => self::looksLikeAKey($s)))));
            return $where + ['kind' => 'unsure', 'original' => null,
                'changes' => ["it writes the keys of more than one original ($keys), and its methods are none of theirs: the doctor cannot tell which it derives from"],
                'swap' => [], 'steps' => [['do' => 'edit', 'file' => $class['file'],
                    'text' => "ask a human: read $fqn and swap each of its methods for the extension's Lock_Service, RedisLock or RedisQueue by hand (docs/drop-in.md), or leave it as it is"]]];
        }
        if ($original === null || ($seedName !== null && $seedName !== $original)) {
            if ($seedName === null) {
                return null;
            }
            return $where + ['kind' => 'same-name', 'original' => null, 'changes' => [], 'swap' => [],
                'steps' => [['do' => 'nothing', 'text' => "nothing: the app declares or autoloads its own $seedName, so it keeps using it with the extension loaded (the extension's $seedName is only for apps that have none)"]]];
        }
        $changes = $this->changes($class, $original, $fqn);
        $steps = $this->steps($class, $original, $fqn, $seedName !== null);
        return $where + ['kind' => 'copy', 'original' => $original, 'changes' => $changes,
            'swap' => self::SWAP_CHANGES[$original], 'steps' => $steps];
    }

    /** What the copy changed from its original. */
    private function changes(array $class, string $original, string $fqn): array
    {
        $changes = [];
        if ($class['trait']) {
            $changes[] = "a trait, not a class: the classes that use it have the methods";
        }
        if ($fqn !== $original) {
            $changes[] = "named $fqn, not $original";
        }
        if ($class['extends'] !== null) {
            $changes[] = "extends {$class['extends']}";
        }
        $methods = array_change_key_case($class['methods']);
        $roles = self::roles($class, $original) ?? [];
        foreach ($roles as $theirs => $m) {
            if (strcasecmp($theirs, $m) !== 0) {
                $changes[] = "$m() does the work of the original's $theirs()";
            }
            $static = $class['does'][$m]['static'] ?? false;
            if ($static !== ($original === 'Lock_Service')) {
                $changes[] = "$m() is " . ($static ? 'static' : 'an instance method') . ", the original's $theirs() " . ($static ? 'is not' : 'is static');
            }
        }
        $returns = fn (string $theirs) => isset($roles[$theirs]) ? ($class['does'][$roles[$theirs]]['returns'] ?? []) : [];
        if ($original === 'RedisLock' && $returns('isLocking') !== [] && array_filter($returns('isLocking'), fn ($r) => !self::boolish($r)) === []) {
            $changes[] = ($roles['isLocking'] ?? 'isLocking') . '() returns true or false; the extension\'s isLocking() returns the lock\'s expiry time as a string ("" when lost, false when never taken): `if (...)` reads it alike, `=== true` does not';
        }
        if ($original === 'Lock_Service' && self::nullWhenRefused($class, $returns('addLock'))) {
            $changes[] = 'addLock() returns NULL when it does not take the lock; the extension\'s returns false: `if (!$id)` reads it alike, `=== null` does not';
        }
        if ($original === 'RedisLock' && isset($roles['lock']) && array_intersect(['expire', 'pexpire', 'del', 'getset'], $class['does'][$roles['lock']]['calls'] ?? []) !== []) {
            $changes[] = 'lock() may expire or take over a lock another holds while it waits (it calls ' . implode(', ', array_intersect(['expire', 'pexpire', 'del', 'getset'], $class['does'][$roles['lock']]['calls'])) . '); the extension\'s never does: a waiter waits for the release or the end of the lease';
        }
        foreach ($class['does'] as $m => $d) {
            if (strcasecmp($m, '__construct') === 0 && in_array('connection', $d['calls'], true)) {
                $changes[] = 'its constructor takes the framework\'s Redis connection (Redis::connection()): the extension connects by its own settings (redislock.default_dsn, or a name in redislock.connections), and the framework\'s key prefix is not applied unless redislock.prefix says it';
            }
        }
        foreach (self::ORIGINALS[$original] as $method => $params) {
            $mine = $methods[strtolower($roles[$method] ?? $method)] ?? null;
            if ($mine === null || ($original === 'RedisLock' && strcasecmp($roles[$method] ?? $method, $method) !== 0)) {
                // (A renamed RedisLock method's parameters are its own: acquire($key, $ttl).)
                continue;
            }
            $names = array_keys($mine);
            $i = 0;
            foreach ($params as $param => $default) {
                $name = $names[$i] ?? null;
                $value = $name === null ? null : $mine[$name];
                if ($default !== null && $name !== null && !is_array($value) && $value !== null && $value != $default) {
                    $changes[] = "$method(): \$$name defaults to " . var_export($value, true) . " (the original's " . var_export($default, true) . ')';
                } elseif ($default !== null && is_array($value) && str_contains($value['code'], 'REDIS_LOCK_DEFAULT_EXPIRE_TIME')) {
                    $constant = $class['constants']['REDIS_LOCK_DEFAULT_EXPIRE_TIME'] ?? $default;
                    if ($constant != $default) {
                        $changes[] = "$method(): \$$name defaults to " . var_export($constant, true) . " (the original's " . var_export($default, true) . ')';
                    }
                }
                $i++;
            }
        }
        foreach (self::CONSTANTS[$original] ?? [] as $name => $value) {
            $mine = $class['constants'][$name] ?? $value;
            if (!is_array($mine) && $mine != $value && $name !== 'REDIS_LOCK_DEFAULT_EXPIRE_TIME') {
                $changes[] = "$name = " . var_export($mine, true) . " (the original's " . var_export($value, true) . ')';
            }
        }
        $missing = array_diff(array_keys(self::ORIGINALS[$original]), array_keys($roles), ['__construct', 'getRedisConn']);
        $missing = array_filter($missing, fn ($m) => !isset($methods[strtolower($m)]));
        if ($missing !== []) {
            $changes[] = 'without the original\'s ' . implode(', ', array_map(fn ($m) => "$m()", $missing))
                . ': the extension\'s class has them, and code that never called them is not changed by that';
        }
        $extra = array_diff(array_keys($class['methods']), array_keys(self::ORIGINALS[$original]), $roles);
        $extra = array_filter($extra, fn ($m) => !isset(array_change_key_case(self::ORIGINALS[$original])[strtolower($m)]));
        if ($extra !== []) {
            $changes[] = 'methods of its own, which the extension\'s class does not have: ' . implode(', ', $extra);
        }
        $keys = array_unique(array_filter($class['strings'], fn ($s) => self::looksLikeAKey($s)));
        $theirs = array_filter($keys, function ($s) use ($original) {
            foreach (self::KEYS[$original] as $key) {
                if (str_starts_with($s, $key)) {
                    return false;
                }
            }
            return true;
        });
        if ($theirs !== [] && array_diff($keys, $theirs) === []) {
            $changes[] = 'its keys are its own (' . implode(', ', array_map(fn ($k) => "'$k'", array_slice(array_values($theirs), 0, 3)))
                . '), not the original\'s (' . implode(', ', array_map(fn ($k) => "'$k'", self::KEYS[$original]))
                . "): during a rolling deploy, old and new code do not see each other's locks or tasks";
        }
        if ($class['factory']) {
            $changes[] = 'its constructor takes a connection name (RedisFactory::get($param))';
        }
        return $changes;
    }

    /** A string that starts like a key template (`lock:`, `order_lock_%s`). */
    private static function looksLikeAKey(string $s): bool
    {
        return strlen($s) < 40 && preg_match('/^[A-Za-z_]+(:|_lock|_%s)/', $s) === 1;
    }

    /**
     * The steps that swap the copy for the extension, each with its text
     * and what to do: `unload` (the class is taken out of `file`),
     * `replace` (`file` has the class replaced by a subclass, or
     * rewritten: the edits are in the file's tree), `edit` (by hand; with
     * `refused`, `--fix` leaves `file` as it is), `ini` (`entry` =
     * `value`), `configure` (an INI entry whose value only the app's
     * config knows), `nothing`.
     */
    private function steps(array $class, string $original, string $fqn, bool $sameName): array
    {
        $steps = [];
        $file = $class['file'];
        $loaders = array_filter($this->loads, fn ($load) => str_contains($load[2], basename($file)));
        $loaded = $loaders === [] ? '' : ' (loaded at ' . implode(', ', array_map(fn ($l) => "$l[0]:$l[1]", $loaders)) . ')';
        $extra = array_filter(array_keys($class['methods']), fn ($m) => !isset(array_change_key_case(self::ORIGINALS[$original])[strtolower($m)]));
        $roles = self::roles($class, $original);
        if ($roles === null) {
            $steps[] = ['do' => 'edit', 'file' => $file, 'text' => "ask a human: the doctor cannot tell which of the methods of $fqn do the work of \\$original's ("
                . implode(', ', array_keys(self::ORIGINALS[$original])) . '): port them by hand (docs/drop-in.md)'];
            return $steps;
        }
        // (Return shapes of its own, statements beside the protocol and public
        // properties are kept by a rewrite, not by a subclass.)
        $rewrite = new Rewrite($class, $original, $roles);
        $returns = fn (string $theirs) => isset($roles[$theirs]) ? ($class['does'][$roles[$theirs]]['returns'] ?? []) : [];
        // (A connection from a factory is handed over by a rewrite, not named in php.ini.)
        $delegate = $class['trait'] || $extra !== [] || $class['extends'] !== null || array_filter($class['properties']) !== []
            || ($class['factory'] && $original !== 'Lock_Service')
            || ($returns('isLocking') !== [] && array_filter($returns('isLocking'), fn ($r) => !self::boolish($r)) === [])
            || self::nullWhenRefused($class, $returns('addLock')) || $rewrite->beyondProtocol() !== [] || $rewrite->keepsOwn()
            || $rewrite->ownConnection();
        foreach ($roles as $theirs => $mine) {
            $delegate = $delegate || strcasecmp($theirs, $mine) !== 0
                || ($class['does'][$mine]['static'] ?? false) !== ($original === 'Lock_Service');
        }
        $what = $class['trait'] ? 'trait' : 'class';
        $why = $delegate ? $rewrite->apply() : $rewrite->keyProblems();
        if ($why !== []) {
            $steps[] = ['do' => 'edit', 'file' => $file, 'refused' => true,
                'text' => "ask a human: `--fix` leaves $file as it is, because it cannot show that a swap of the $what $fqn keeps what it does: "
                    . implode('; ', $why) . ' (docs/drop-in.md#what---fix-keeps-and-what-it-refuses)'];
            return $steps;
        }
        if ($delegate) {
            $steps[] = ['do' => 'replace', 'file' => $file,
                'text' => "rewrite the $what $fqn in $file so that its methods " . implode(', ', array_map(fn ($m) => "$m()", $roles))
                    . " send their Redis work to the extension's \\" . $rewrite->target() . ', every other statement as it is'
                    . ' (`redislock doctor --fix` writes it, `--diff` shows it)'];
            if ($original === 'Lock_Service' && !$rewrite->handedOver) {
                $this->connectionSteps($class, $steps);
            } elseif (!$rewrite->handedOver && $class['factory']) {
                $steps[] = $this->configureStep($class);
            }
            if (!$rewrite->handedOver) {
                $this->frameworkStep($class, $steps);
            }
            return $steps;
        }
        if ($sameName && $class['extends'] === null) {
            $class['node']->setAttribute('redislock', 'remove');
            $steps[] = ['do' => 'unload', 'file' => $file, 'text' => "stop loading the class $fqn$loaded: `--fix` takes it out of $file"
                . " (or delete it, or take it out of the autoloader's map); the extension's $original then answers every call"];
        } else {
            $code = "class {$class['name']} extends \\$original {}";
            $subclass = Php::statements($code)[0];
            $subclass->setAttribute('comments', $class['node']->getComments());
            $class['node']->setAttribute('redislock', $subclass);
            $steps[] = ['do' => 'replace', 'file' => $file,
                'text' => "replace the class $fqn in $file with a subclass of the extension's: `$code` (class_alias() cannot alias PHP's internal classes)"];
        }
        foreach (self::INI_DEFAULTS as [$seed, $method, $param, $ini]) {
            if ($seed !== $original) {
                continue;
            }
            $mine = array_change_key_case($class['methods'])[strtolower($method)] ?? null;
            if ($mine === null) {
                continue;
            }
            $position = array_search($param, array_keys(self::ORIGINALS[$seed][$method]), true);
            $value = array_values($mine)[$position] ?? null;
            if (is_array($value) && str_contains($value['code'], 'REDIS_LOCK_DEFAULT_EXPIRE_TIME')) {
                $value = $class['constants']['REDIS_LOCK_DEFAULT_EXPIRE_TIME'] ?? null;
            }
            if (is_int($value) || is_float($value)) {
                if ($value != self::ORIGINALS[$seed][$method][$param]) {
                    $steps[] = ['do' => 'ini', 'entry' => $ini, 'value' => (string) $value, 'text' => "php.ini: $ini = $value"];
                }
            }
        }
        if ($original === 'Lock_Service') {
            $this->connectionSteps($class, $steps);
        }
        if ($class['factory']) {
            $steps[] = $this->configureStep($class);
        }
        $this->frameworkStep($class, $steps);
        return $steps;
    }

    /** A copy whose constructor took the framework's connection: where that is, only the app's config says. */
    private function frameworkStep(array $class, array &$steps): void
    {
        foreach ($class['does'] as $m => $d) {
            if (strcasecmp($m, '__construct') === 0 && in_array('connection', $d['calls'], true)) {
                $steps[] = ['do' => 'configure', 'entry' => 'redislock.default_dsn',
                    'text' => 'php.ini: redislock.default_dsn = "redis://HOST:PORT/DB" (and redislock.prefix = "PREFIX"), the server and key prefix of the framework\'s Redis connection the constructor took (config/database.php\'s redis section)'];
                return;
            }
        }
    }

    /**
     * Whether the copy's take (addLock()'s work) answers NULL when refused:
     * it says so (`return null;`, `return;`), or it runs on Predis (whose
     * refused SET NX is NULL) and never says false.
     */
    private static function nullWhenRefused(array $class, array $returns): bool
    {
        if (!in_array('false', $returns, true)) {
            return array_intersect(['null', ''], $returns) !== [] || ($class['predis'] && $returns !== []);
        }
        // Beside a `return false` (of a guard): the seed's `$ok ? $id : $ok`
        // hands back Predis' reply to a refused SET NX, which is NULL.
        return $class['predis'] && preg_grep('/^\$(\w+)\s*\?.+:\s*\$\1$/s', $returns) !== [];
    }

    /** Whether a return statement's expression (lowercase) is a bool. */
    public static function boolish(string $r): bool
    {
        // (Not an arrow: `->`, `=>`.)
        $r = str_replace(['->', '=>'], ' ', $r);
        return preg_match('/^(true|false|\(bool\).*|!.*)$/s', $r) === 1
            || preg_match('/(===|!==|==|!=|&&|\|\||[<>]|\bisset\(|\bempty\(|\bin_array\(|\b(array_)?key_exists\(|\bis_\w+\()/', $r) === 1;
    }

    /** The php.ini line of Lock_Service's server, when the copy's constants name another than the default. */
    private function connectionSteps(array $class, array &$steps): void
    {
        $at = (new Protocol($class, [], 'Lock_Service'))->connectsTo();
        if ($at !== null && !isset($class['constants']['REDIS_CONFIG_HOST'])) {
            [$host, $port] = $at;
            if (($host !== '127.0.0.1' && $host !== 'localhost') || $port !== 6379) {
                $steps[] = ['do' => 'ini', 'entry' => 'redislock.connections', 'value' => "lock_service=redis://$host:$port",
                    'text' => "php.ini: redislock.connections = \"lock_service=redis://$host:$port\": the copy connects there in its own code (or add it to the names listed there)"];
            }
            return;
        }
        if (!isset($class['constants']['REDIS_CONFIG_HOST'])) {
            // A server its own code names as a client's options ('host' => ..., 'port' => ...) or a URL: the doctor writes it.
            $code = $class['code'];
            if (preg_match("/['\"]host['\"]\s*=>\s*['\"]([\w.-]+)['\"]\s*,\s*['\"]port['\"]\s*=>\s*(\d{1,5})\b/", $code, $m)
                || preg_match('#[\'"](?:tcp|redis)://([\w.-]+):(\d{1,5})/?[\'"]#', $code, $m)) {
                if ($m[1] !== '127.0.0.1' && $m[1] !== 'localhost' || (int) $m[2] !== 6379) {
                    $steps[] = ['do' => 'ini', 'entry' => 'redislock.connections', 'value' => "lock_service=redis://{$m[1]}:{$m[2]}",
                        'text' => "php.ini: redislock.connections = \"lock_service=redis://{$m[1]}:{$m[2]}\": the copy connects there in its own code (or add it to the names listed there)"];
                }
                return;
            }
            // (A server named in its own code without its port: the doctor cannot tell it.)
            $hosts = array_filter($class['strings'], fn ($s) => preg_match('/^\d{1,3}(\.\d{1,3}){3}$/', $s) === 1 && $s !== '127.0.0.1');
            if ($hosts !== []) {
                $host = reset($hosts);
                $steps[] = ['do' => 'configure', 'entry' => 'redislock.connections',
                    'text' => "php.ini: redislock.connections = \"lock_service=redis://$host:PORT\": the copy connects to $host in its own code"];
            }
            return;
        }
        $host = $class['constants']['REDIS_CONFIG_HOST'] ?? '127.0.0.1';
        $port = $class['constants']['REDIS_CONFIG_PORT'] ?? 6379;
        if (is_string($host) && !is_array($port) && ($host !== '127.0.0.1' || (int) $port !== 6379)) {
            $steps[] = ['do' => 'ini', 'entry' => 'redislock.connections', 'value' => "lock_service=redis://$host:$port",
                'text' => "php.ini: redislock.connections = \"lock_service=redis://$host:$port\" (or add it to the names listed there)"];
        }
    }

    /** The connection names the app gives the copy's constructor, as its RedisFactory config says where they are. */
    private function configureStep(array $class): array
    {
        $names = array_values(array_unique($this->constructed[strtolower($class['name'])] ?? []));
        $listed = $names === [] ? 'NAME=redis://HOST:PORT/DB ...' : implode(' ', array_map(fn ($n) => "$n=redis://HOST:PORT/DB", $names));
        $said = $names === [] ? 'for each connection name the app passes to the constructor' : 'the names the app passes to the constructor (' . implode(', ', array_map(fn ($n) => "'$n'", $names)) . ')';
        return ['do' => 'configure', 'entry' => 'redislock.connections', 'names' => $names,
            'text' => "php.ini: redislock.connections = \"$listed\": $said, each with the server its RedisFactory config names"];
    }
}
