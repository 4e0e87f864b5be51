<?php

declare(strict_types=1);

namespace RedisLock\Operator;

/**
 * `redislock doctor PATH`: finds the copies of the original `Lock_Service`,
 * `RedisLock` and `RedisQueue` in an app's PHP files (by name and by shape:
 * their methods and key templates), says what each changed from the
 * original, what a swap to the extension changes, and the exact steps; and
 * the unrelated classes of those names, which keep working. It reads files
 * and changes nothing.
 */
final class Doctor
{
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

    /** @var list<array> the classes and traits found, with the file and line */
    private array $found = [];
    /** @var list<array{string, int, string}> require/include statements: file, line, what they load */
    private array $loads = [];
    /** @var list<array{string, string}> what could not be read: the file or directory, and why */
    private array $skipped = [];
    /** @var array<string, list<string>> the string literals given to `new <class>(...)`, by the class's short name, lowercase */
    private array $constructed = [];
    /** @var list<int> the byte offset of each token of the file being read */
    private array $offsets = [];

    /**
     * The largest file read: a class file is rarely past a few hundred KB,
     * and PHP's tokenizer takes up to some 130 times a file's size (a
     * generated file of 50 MB would take gigabytes).
     */
    public const MAX_BYTES = 1024 * 1024;
    /** What tokenizing a file takes at most, per byte of it. */
    private const TOKEN_BYTES = 160;

    /** @return list<array> a report per copy or same-name class found under $path */
    public function examine(string $path): array
    {
        if (!function_exists('token_get_all')) {
            throw new \InvalidArgumentException("doctor reads PHP with PHP's tokenizer extension, which this PHP has not loaded");
        }
        if (!file_exists($path)) {
            throw new \InvalidArgumentException("doctor: no file or directory '" . Cli::clean($path) . "'");
        }
        if (!is_dir($path) && !is_file($path)) {
            throw new \InvalidArgumentException("doctor: '" . Cli::clean($path) . "' is neither a directory nor a file (a device, a FIFO or a socket)");
        }
        if (!is_readable($path)) {
            throw new \InvalidArgumentException("doctor: cannot read '" . Cli::clean($path) . "' (permission denied)");
        }
        foreach ($this->phpFiles($path) as $file) {
            $code = $this->read($file);
            if ($code !== null) {
                $this->scan($file, $code);
            }
        }
        sort($this->skipped);
        $reports = [];
        foreach ($this->found as $class) {
            $report = $this->judge($class);
            if ($report !== null) {
                $reports[] = $report;
            }
        }
        return $reports;
    }

    /**
     * The files and directories that could not be read, each with why: the
     * report says nothing of what they hold.
     *
     * @return list<array{string, string}>
     */
    public function skipped(): array
    {
        return $this->skipped;
    }

    /** @return list<string> the PHP files under $path (or $path, a file), but vendor/ and .git/ */
    private function phpFiles(string $path): array
    {
        if (is_file($path)) {
            return [$path];
        }
        $files = [];
        $dirs = [rtrim($path, '/') ?: '/'];
        while ($dirs !== []) {
            $dir = array_pop($dirs);
            $names = is_readable($dir) ? @scandir($dir) : false;
            if ($names === false) {
                $this->skipped[] = [$dir, 'cannot read the directory (permission denied)'];
                continue;
            }
            foreach ($names as $name) {
                $at = ($dir === '/' ? '' : $dir) . '/' . $name;
                if ($name === '.' || $name === '..' || (is_link($at) && is_dir($at))) {
                    continue;
                }
                if (is_dir($at)) {
                    if ($name !== 'vendor' && $name !== '.git') {
                        $dirs[] = $at;
                    }
                } elseif (str_ends_with($name, '.php') && is_file($at)) {
                    $files[] = $at;
                }
            }
        }
        sort($files);
        return $files;
    }

    /** The bytes memory_limit leaves this process, or null when it sets none. */
    private static function memoryLeft(): ?int
    {
        $limit = trim((string) ini_get('memory_limit'));
        if ($limit === '' || (int) $limit <= 0) {
            return null;
        }
        $bytes = (int) $limit * match (strtolower(substr($limit, -1))) {
            'g' => 1 << 30, 'm' => 1 << 20, 'k' => 1 << 10, default => 1,
        };
        return $bytes - memory_get_usage();
    }

    /** The code of $file, or null (noted in skipped()) when it cannot or should not be read. */
    private function read(string $file): ?string
    {
        $size = @filesize($file);
        if ($size !== false && $size > self::MAX_BYTES) {
            $this->skipped[] = [$file, sprintf('%.1f MB, larger than the %d MB the doctor reads (a generated file?)', $size / 1048576, self::MAX_BYTES / 1048576)];
            return null;
        }
        $room = self::memoryLeft();
        if ($size !== false && $room !== null && $size * self::TOKEN_BYTES > $room) {
            $this->skipped[] = [$file, sprintf('reading it takes up to %d MB, more than memory_limit leaves (php -d memory_limit=%dM)',
                intdiv($size * self::TOKEN_BYTES, 1048576) + 1, intdiv(memory_get_usage() + $size * self::TOKEN_BYTES, 1048576) + 16)];
            return null;
        }
        $code = is_readable($file) ? @file_get_contents($file, false, null, 0, self::MAX_BYTES + 1) : false;
        if ($code === false) {
            $this->skipped[] = [$file, 'cannot read the file (permission denied)'];
            return null;
        }
        return $code;
    }

    /** Reads the classes, traits and require/include statements of one file. */
    private function scan(string $file, string $code): void
    {
        $tokens = token_get_all($code);
        $namespace = '';
        $count = count($tokens);
        $this->offsets = [];
        $at = 0;
        foreach ($tokens as $t) {
            $this->offsets[] = $at;
            $at += strlen(is_array($t) ? $t[1] : $t);
        }
        $this->offsets[] = $at;
        for ($i = 0; $i < $count; $i++) {
            $t = $tokens[$i];
            if (!is_array($t)) {
                continue;
            }
            if ($t[0] === T_NEW) {
                // `new X('lock')`: the connection name an app gives a copy.
                $j = $i + 1;
                while ($j < $count && is_array($tokens[$j]) && $tokens[$j][0] === T_WHITESPACE) {
                    $j++;
                }
                if (is_array($tokens[$j] ?? null) && in_array($tokens[$j][0], [T_STRING, T_NAME_QUALIFIED, T_NAME_FULLY_QUALIFIED], true)
                    && ($tokens[$j + 1] ?? null) === '(' && is_array($tokens[$j + 2] ?? null) && $tokens[$j + 2][0] === T_CONSTANT_ENCAPSED_STRING) {
                    $short = strtolower(substr(strrchr('\\' . $tokens[$j][1], '\\'), 1));
                    $this->constructed[$short][] = self::literal($tokens[$j + 2][1]);
                }
            }
            if ($t[0] === T_NAMESPACE) {
                $namespace = '';
                for ($j = $i + 1; $j < $count && $tokens[$j] !== ';' && $tokens[$j] !== '{'; $j++) {
                    if (is_array($tokens[$j]) && in_array($tokens[$j][0], [T_STRING, T_NAME_QUALIFIED], true)) {
                        $namespace .= $tokens[$j][1];
                    }
                }
            } elseif (in_array($t[0], [T_REQUIRE, T_REQUIRE_ONCE, T_INCLUDE, T_INCLUDE_ONCE], true)) {
                $what = '';
                for ($j = $i + 1; $j < $count && $tokens[$j] !== ';'; $j++) {
                    $what .= is_array($tokens[$j]) ? $tokens[$j][1] : $tokens[$j];
                }
                $this->loads[] = [$file, $t[2], $what];
            } elseif (in_array($t[0], [T_CLASS, T_TRAIT], true) && !$this->isClassConstant($tokens, $i)) {
                $name = $this->next($tokens, $i + 1, T_STRING);
                if ($name === null) {
                    continue; // an anonymous class
                }
                [$class, $end] = $this->body($tokens, $i, $name[1]);
                $class += ['file' => $file, 'line' => $t[2], 'trait' => $t[0] === T_TRAIT,
                           'name' => $name[1], 'namespace' => $namespace,
                           'source' => $code, 'from' => $this->offsets[$i], 'to' => $this->offsets[$end + 1]];
                $this->found[] = $class;
                $i = $end;
            }
        }
    }

    private function isClassConstant(array $tokens, int $i): bool
    {
        for ($j = $i - 1; $j >= 0; $j--) {
            if (is_array($tokens[$j]) && in_array($tokens[$j][0], [T_WHITESPACE, T_COMMENT, T_DOC_COMMENT], true)) {
                continue;
            }
            return is_array($tokens[$j]) && in_array($tokens[$j][0], [T_DOUBLE_COLON, T_NEW], true);
        }
        return false;
    }

    private function next(array $tokens, int $from, int $kind): ?array
    {
        for ($j = $from; $j < count($tokens); $j++) {
            if (is_array($tokens[$j]) && $tokens[$j][0] === $kind) {
                return $tokens[$j];
            }
            if (!is_array($tokens[$j]) || !in_array($tokens[$j][0], [T_WHITESPACE, T_COMMENT, T_DOC_COMMENT], true)) {
                return null;
            }
        }
        return null;
    }

    /**
     * A class body: its parent, constants, methods (parameters and their
     * default values as written), the strings it holds, and whether it
     * calls `RedisFactory::get()`.
     *
     * @return array{array, int} what was read, and the index of the closing brace
     */
    private function body(array $tokens, int $at, string $name): array
    {
        // (Per method, what its body does: `what()`.)
        $class = ['extends' => null, 'constants' => [], 'methods' => [], 'strings' => [], 'factory' => false, 'predis' => false, 'does' => []];
        $method = null;
        $count = count($tokens);
        $i = $at;
        while ($i < $count && $tokens[$i] !== '{') {
            if (is_array($tokens[$i]) && $tokens[$i][0] === T_EXTENDS) {
                for ($j = $i + 1; $j < $count && $tokens[$j] !== '{' && !(is_array($tokens[$j]) && $tokens[$j][0] === T_IMPLEMENTS); $j++) {
                    if (is_array($tokens[$j]) && in_array($tokens[$j][0], [T_STRING, T_NAME_QUALIFIED, T_NAME_FULLY_QUALIFIED], true)) {
                        $class['extends'] = ltrim($tokens[$j][1], '\\');
                    }
                }
            }
            $i++;
        }
        $depth = 0;
        for (; $i < $count; $i++) {
            $t = $tokens[$i];
            if ($t === '{' || (is_array($t) && in_array($t[0], [T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES], true))) {
                $depth++;
            } elseif ($t === '}') {
                if (--$depth === 0) {
                    break;
                }
                if ($depth === 1 && $method !== null) {
                    $class['does'][$method]['to'] = $this->offsets[$i + 1];
                    $method = null;
                }
            } elseif (!is_array($t)) {
                continue;
            } elseif ($method !== null && $depth >= 2 && $t[0] === T_RETURN) {
                $class['does'][$method]['returns'][] = strtolower(trim($this->until($tokens, $i + 1, ';')));
            } elseif ($method !== null && $depth >= 2 && $t[0] === T_STRING && $this->calledAt($tokens, $i)) {
                $class['does'][$method]['calls'][] = strtolower($t[1]);
            } elseif ($t[0] === T_CONSTANT_ENCAPSED_STRING || $t[0] === T_ENCAPSED_AND_WHITESPACE) {
                $class['strings'][] = $t[0] === T_CONSTANT_ENCAPSED_STRING ? self::literal($t[1]) : $t[1];
                if ($method !== null) {
                    $class['does'][$method]['strings'][] = end($class['strings']);
                }
            } elseif (in_array($t[0], [T_STRING, T_NAME_QUALIFIED, T_NAME_FULLY_QUALIFIED], true) && stripos($t[1], 'Predis') !== false) {
                // (Predis answers a refused SET NX with NULL, where phpredis says false.)
                $class['predis'] = true;
            } elseif ($t[0] === T_STRING && strcasecmp($t[1], 'RedisFactory') === 0) {
                $class['factory'] = true;
            } elseif ($depth === 1 && $t[0] === T_CONST) {
                $const = $this->next($tokens, $i + 1, T_STRING);
                if ($const !== null) {
                    $class['constants'][$const[1]] = $this->valueAfter($tokens, $i, ';');
                }
            } elseif ($depth === 1 && $t[0] === T_FUNCTION) {
                $named = $this->next($tokens, $i + 1, T_STRING);
                if ($named !== null) {
                    $method = $named[1];
                    $class['methods'][$method] = $this->parameters($tokens, $i);
                    $class['does'][$method] = ['static' => $this->isStatic($tokens, $i), 'calls' => [], 'returns' => [], 'strings' => []]
                        + $this->ranges($tokens, $i);
                }
            }
        }
        return [$class, $i];
    }

    /**
     * Where the method whose `function` is at $at is in the file: `from`
     * (its first modifier), `open` (after the `{` of its body; null for an
     * abstract method), and `head`, its code up to that brace.
     */
    private function ranges(array $tokens, int $at): array
    {
        $from = $at;
        for ($j = $at - 1; $j >= 0 && is_array($tokens[$j]); $j--) {
            if (in_array($tokens[$j][0], [T_STATIC, T_PUBLIC, T_PROTECTED, T_PRIVATE, T_FINAL, T_ABSTRACT], true)) {
                $from = $j;
            } elseif ($tokens[$j][0] !== T_WHITESPACE) {
                break;
            }
        }
        $depth = 0;
        for ($j = $at; $j < count($tokens); $j++) {
            $depth += $tokens[$j] === '(' ? 1 : ($tokens[$j] === ')' ? -1 : 0);
            if ($depth === 0 && ($tokens[$j] === '{' || $tokens[$j] === ';')) {
                break;
            }
        }
        $head = '';
        for ($k = $from; $k < $j; $k++) {
            $head .= is_array($tokens[$k]) ? $tokens[$k][1] : $tokens[$k];
        }
        return ['from' => $this->offsets[$from], 'open' => ($tokens[$j] ?? null) === '{' ? $this->offsets[$j + 1] : null,
            'to' => $this->offsets[$j + 1], 'head' => rtrim($head)];
    }

    /** Whether the method whose `function` is at $at is static. */
    private function isStatic(array $tokens, int $at): bool
    {
        for ($j = $at - 1; $j >= 0 && is_array($tokens[$j]); $j--) {
            if ($tokens[$j][0] === T_STATIC) {
                return true;
            }
            if (!in_array($tokens[$j][0], [T_WHITESPACE, T_COMMENT, T_DOC_COMMENT, T_PUBLIC, T_PROTECTED, T_PRIVATE, T_FINAL, T_ABSTRACT], true)) {
                break;
            }
        }
        return false;
    }

    /** Whether the name at $at is called: a function or method name before `(`. */
    private function calledAt(array $tokens, int $at): bool
    {
        for ($j = $at + 1; $j < count($tokens) && is_array($tokens[$j]) && $tokens[$j][0] === T_WHITESPACE; $j++) {
        }
        return ($tokens[$j] ?? null) === '(';
    }

    /** The code from $at to the first $end at the same depth (the end of a return statement). */
    private function until(array $tokens, int $at, string $end): string
    {
        $code = '';
        $depth = 0;
        for ($i = $at; $i < count($tokens); $i++) {
            $t = $tokens[$i];
            if ($depth === 0 && $t === $end) {
                break;
            }
            $depth += in_array($t, ['(', '[', '{'], true) ? 1 : (in_array($t, [')', ']', '}'], true) ? -1 : 0);
            $code .= is_array($t) ? $t[1] : $t;
        }
        return $code;
    }

    /** A method's parameters: name => default as PHP would read it (or the code, or null). */
    private function parameters(array $tokens, int $at): array
    {
        $i = $at;
        while ($tokens[$i] !== '(') {
            $i++;
        }
        $params = [];
        $depth = 0;
        $current = null;
        $default = null;
        for ($i++; $i < count($tokens); $i++) {
            $t = $tokens[$i];
            if ($t === '(' || $t === '[') {
                $depth++;
            } elseif (($t === ')' || $t === ']') && $depth > 0) {
                $depth--;
            } elseif ($depth === 0 && ($t === ',' || $t === ')')) {
                if ($current !== null) {
                    $params[$current] = $default === null ? null : self::value(trim($default));
                }
                $current = $default = null;
                if ($t === ')') {
                    break;
                }
                continue;
            }
            if ($depth === 0 && is_array($t) && $t[0] === T_VARIABLE && $default === null) {
                $current = substr($t[1], 1);
            } elseif ($depth === 0 && $t === '=') {
                $default = '';
            } elseif ($default !== null) {
                $default .= is_array($t) ? $t[1] : $t;
            }
        }
        return $params;
    }

    private function valueAfter(array $tokens, int $at, string $end): mixed
    {
        $code = null;
        for ($i = $at; $i < count($tokens) && $tokens[$i] !== $end; $i++) {
            if ($tokens[$i] === '=') {
                $code = '';
            } elseif ($code !== null) {
                $code .= is_array($tokens[$i]) ? $tokens[$i][1] : $tokens[$i];
            }
        }
        return $code === null ? null : self::value(trim($code));
    }

    /** A default as written: a number or a plain string literal as its value, anything else as code. */
    private static function value(string $code): mixed
    {
        if (preg_match('/^-?\d+$/', $code)) {
            return (int) $code;
        }
        if (is_numeric($code)) {
            return (float) $code;
        }
        if (preg_match('/^(\'[^\'\\\\]*\'|"[^"\\\\$]*")$/', $code)) {
            return substr($code, 1, -1);
        }
        return ['code' => $code];
    }

    private static function literal(string $quoted): string
    {
        return substr($quoted, 1, -1);
    }

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
        if ($original !== 'Lock_Service' || (isset($roles['addLock']) && isset($roles['releaseLock']))) {
            // (A take and a give-back at least: a class with a lock() of
            // its own and a log line that says 'Lock:' is no copy.)
            return match ($original) {
                'Lock_Service' => $roles,
                'RedisLock' => isset($roles['lock'], $roles['unlock']) ? $roles : null,
                default => isset($roles['enqueue']) && (isset($roles['dequeue']) || isset($roles['pop']) || isset($roles['top'])) ? $roles : null,
            };
        }
        $does = fn (string $m, string ...$calls) => array_intersect($calls, $class['does'][$m]['calls'] ?? []) !== [];
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

    /** The report on one class, or null when it is none of the doctor's business. */
    private function judge(array $class): ?array
    {
        $fqn = ltrim($class['namespace'] . '\\' . $class['name'], '\\');
        $seedName = null;
        foreach (array_keys(self::ORIGINALS) as $seed) {
            if ($class['namespace'] === '' && strcasecmp($class['name'], $seed) === 0) {
                $seedName = $seed;
            }
        }
        if (str_contains(substr($class['source'], $class['from'], $class['to'] - $class['from']), "// redislock doctor: the extension's")) {
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
            $changes[] = 'isLocking() returns true or false; the extension\'s returns the lock\'s expiry time as a string ("" when lost, false when never taken): `if (...)` reads it alike, `=== true` does not';
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
            if ($mine === null) {
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
     * and what to do: `unload` (stop loading `file`), `replace` (`file`
     * becomes `code`), `edit` (by hand: `file` has methods to port, or is a
     * trait), `ini` (`entry` = `value`), `configure` (an INI entry whose
     * value only the app's config knows), `nothing`.
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
        // (Return shapes of its own are kept by a rewrite, not by a subclass.)
        $returns = fn (string $theirs) => isset($roles[$theirs]) ? ($class['does'][$roles[$theirs]]['returns'] ?? []) : [];
        $delegate = $class['trait'] || $extra !== [] || $class['extends'] !== null
            || ($returns('isLocking') !== [] && array_filter($returns('isLocking'), fn ($r) => !self::boolish($r)) === [])
            || self::nullWhenRefused($class, $returns('addLock'));
        foreach ($roles as $theirs => $mine) {
            $delegate = $delegate || strcasecmp($theirs, $mine) !== 0
                || ($class['does'][$mine]['static'] ?? false) !== ($original === 'Lock_Service');
        }
        if ($delegate) {
            [$code, $review] = $this->delegated($class, $original, $roles);
            $what = $class['trait'] ? 'trait' : 'class';
            $steps[] = ['do' => $review === [] ? 'replace' : 'edit', 'file' => $file, 'code' => $code,
                'text' => "rewrite the $what $fqn in $file so that its methods " . implode(', ', array_map(fn ($m) => "$m()", $roles))
                    . " call the extension's \\$original (the rest of the file as it is: `redislock doctor --fix` writes it, `--diff` shows it)"
                    . ($review === [] ? '' : '; then check by hand: ' . implode('; ', $review))];
            if ($original === 'Lock_Service') {
                $this->connectionSteps($class, $steps);
            } elseif ($class['factory']) {
                $steps[] = $this->configureStep($class);
            }
            $this->frameworkStep($class, $steps);
            return $steps;
        }
        if ($sameName && $extra === [] && $class['extends'] === null) {
            $steps[] = ['do' => 'unload', 'file' => $file, 'text' => "stop loading $file$loaded: delete it, or take it out of the autoloader's map; the extension's $original then answers every call"];
        } else {
            $body = $extra === [] ? '{}' : '{ /* ' . implode(', ', $extra) . ': port them onto the methods of \\' . $original . ' */ }';
            $ns = $class['namespace'] === '' ? '' : "namespace {$class['namespace']}; ";
            $code = "<?php {$ns}class {$class['name']} extends \\$original $body";
            $steps[] = ['do' => $extra === [] ? 'replace' : 'edit', 'file' => $file, 'code' => $code,
                'text' => "replace the class in $file with a subclass of the extension's: `$code` (class_alias() cannot alias PHP's internal classes)"];
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
    private static function boolish(string $r): bool
    {
        // (Not an arrow: `->`, `=>`.)
        $r = str_replace(['->', '=>'], ' ', $r);
        return preg_match('/^(true|false|\(bool\).*|!.*)$/s', $r) === 1
            || preg_match('/(===|!==|==|!=|&&|\|\||[<>]|\bisset\(|\bempty\(|\bin_array\(|\bis_\w+\()/', $r) === 1;
    }

    /** The php.ini line of Lock_Service's server, when the copy's constants name another than the default. */
    private function connectionSteps(array $class, array &$steps): void
    {
        if (!isset($class['constants']['REDIS_CONFIG_HOST'])) {
            // A server its own code names as a client's options ('host' => ..., 'port' => ...) or a URL: the doctor writes it.
            $code = substr($class['source'], $class['from'], $class['to'] - $class['from']);
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

    /**
     * The copy's file with the methods that do the work of the original's
     * (`$roles`) calling the extension's class instead: everything else in
     * the file (its other methods, properties, constructor, namespace, the
     * parent class) stays as it is. A method keeps its name, signature,
     * static-ness and defaults, and the copy's return shapes where they
     * were another (a bool for isLocking(), NULL for a refused addLock()).
     * Also returns what a human should check (empty: nothing).
     *
     * @return array{string, list<string>}
     */
    private function delegated(array $class, string $original, array $roles): array
    {
        $source = $class['source'];
        $does = $class['does'];
        $review = [];
        // (Its name whatever the app declares: a copy may hold the global one.)
        $ext = '\\RedisLock\\DropIn\\' . $original;
        $static = false;
        $edits = [];
        foreach ($roles as $theirs => $mine) {
            $d = $does[$mine];
            if ($d['open'] === null) {
                $review[] = "$mine() has no body";
                continue;
            }
            $static = $static || ($original !== 'Lock_Service' && $d['static']);
            $params = array_keys($class['methods'][$mine]);
            $wanted = count(self::ORIGINALS[$original][$theirs]);
            if (count($params) > $wanted) {
                $review[] = "$mine() takes " . implode(', ', array_map(fn ($p) => "\$$p", array_slice($params, $wanted)))
                    . " beside what \\$original::$theirs() takes, which the rewrite passes on to nothing";
            }
            $args = implode(', ', array_map(fn ($p) => "\$$p", array_slice($params, 0, $wanted)));
            $target = match (true) {
                $original === 'Lock_Service' => "$ext::$theirs($args)",
                $d['static'] => "self::redislockDelegate()->$theirs($args)",
                default => "\$this->redislockDelegate()->$theirs($args)",
            };
            $returns = $d['returns'];
            $boolish = $returns !== [] && array_filter($returns, fn ($r) => !self::boolish($r)) === [];
            $body = match (true) {
                $theirs === 'isLocking' && $boolish => "return (bool) $target;",
                // (Where the copy returns false too, it is for an empty order id.)
                $theirs === 'addLock' && self::nullWhenRefused($class, $returns) && in_array('false', $returns, true) && $params !== []
                    => "\$id = $target;\n        return \$id === false && !empty(\${$params[0]}) ? null : \$id;",
                $theirs === 'addLock' && self::nullWhenRefused($class, $returns)
                    => "\$id = $target;\n        return \$id === false ? null : \$id;",
                default => "return $target;",
            };
            $edits[] = [$d['from'], $d['to'], $d['head'] . "\n    {\n        // redislock doctor: the extension's $ext::$theirs() does this.\n        $body\n    }"];
        }
        if ($original !== 'Lock_Service') {
            // The extension's object the methods call: one per object, made
            // with what the copy's constructor was given.
            $ctorName = array_values(array_filter(array_keys($does), fn ($m) => strcasecmp($m, '__construct') === 0))[0] ?? null;
            $ctor = $ctorName === null ? null : $does[$ctorName];
            $param = $ctorName === null ? null : array_key_first($class['methods'][$ctorName]);
            $property = ($static ? 'private static ' : 'private ') . "?$ext \$redislockDelegate = null;";
            $accessor = $static
                ? "private static function redislockDelegate(): $ext\n    {\n        return self::\$redislockDelegate ??= new $ext();\n    }"
                : "private function redislockDelegate(): $ext\n    {\n        return \$this->redislockDelegate ??= new $ext();\n    }";
            if (!$static && $ctor !== null && $ctor['open'] !== null && $param !== null) {
                $edits[] = [$ctor['open'], $ctor['open'], "\n        \$this->redislockDelegate = new $ext(\$$param); /* redislock doctor */\n       "];
            } elseif ($ctor !== null && $param !== null) {
                $review[] = "the constructor's \$$param no longer picks the server: the extension's connects by redislock.default_dsn";
            }
            $close = $class['to'] - 1;
            $edits[] = [$close, $close, "\n    // redislock doctor: the extension's $original these methods call.\n    $property\n\n    $accessor\n"];
        }
        if (str_starts_with($source, '<?php')) {
            $edits[] = [5, 5, "\n// " . self::HEADER . ': the methods marked below call the extension; '
                . basename($class['file']) . '.orig is the file as it was: put it back to undo.'];
        }
        usort($edits, fn ($a, $b) => $b[0] <=> $a[0]);
        foreach ($edits as [$from, $to, $text]) {
            $source = substr($source, 0, $from) . $text . substr($source, $to);
        }
        return [$source, $review];
    }

    /**
     * `doctor --fix`: takes the steps of `$reports` (examine()'s of
     * `$path`) that need no human. A rewritten or emptied file is kept
     * beside it as `<file>.orig` (an older one is never overwritten), and
     * the php.ini lines go to `redislock-doctor.ini` in `$path` (merged
     * with the lines already there). A file the reports do not name is
     * never touched. Returns what was done and what is left for a human
     * (each a line of text).
     *
     * @return array{list<string>, list<string>}
     */
    public function fix(array $reports, string $path, bool $diff = false): array
    {
        $this->patches = $diff ? [] : null;
        $this->base = is_dir($path) ? rtrim($path, '/') : dirname($path);
        $done = $left = $ini = $todo = $why = [];
        foreach ($reports as $r) {
            foreach ($r['steps'] as $step) {
                switch ($step['do']) {
                    case 'unload':
                        $this->write($step['file'], "<?php\n// " . self::HEADER . ": this copy of {$r['original']} was taken out, so that the extension's answers;"
                            . ' ' . basename($step['file']) . ".orig is the file as it was: put it back to undo.\n");
                        $done[] = "emptied {$step['file']} (the extension's {$r['original']} answers now; the copy is {$step['file']}.orig)";
                        break;
                    case 'replace':
                        $this->write($step['file'], $step['code']);
                        $done[] = "rewrote {$r['class']} in {$step['file']} (the copy is {$step['file']}.orig)";
                        break;
                    case 'ini':
                        $entry = $step['entry'];
                        if ($entry !== 'redislock.connections' && isset($ini[$entry]) && $ini[$entry] !== $step['value']) {
                            // (One setting, two copies that want it otherwise.)
                            $left[] = "{$r['class']} ({$r['file']}:{$r['line']}): $entry = {$step['value']}, where another copy wants {$ini[$entry]}: pick one, or give one copy its value in its calls";
                            break;
                        }
                        $ini[$entry] = isset($ini[$entry]) && $entry === 'redislock.connections' ? $ini[$entry] . ' ' . $step['value'] : $step['value'];
                        $why[$entry][] = "{$r['class']} ({$r['file']}:{$r['line']})";
                        break;
                    case 'nothing':
                        break;
                    case 'configure':
                        // (Its copy goes: the step stays in the INI file, as a TODO, until done.)
                        $todo[] = $step['text'];
                        break;
                    default:
                        $left[] = "{$r['class']} ({$r['file']}:{$r['line']}): {$step['text']}";
                }
            }
        }
        $file = (is_dir($path) ? rtrim($path, '/') : dirname($path)) . '/redislock-doctor.ini';
        $old = is_file($file) ? (string) @file_get_contents($file) : '';
        preg_match_all('/^; TODO: (.*)$/m', $old, $m);
        $todo = array_values(array_unique([...$m[1], ...$todo]));
        if ($ini !== [] || count($todo) > count($m[1])) {
            $lines = is_file($file) ? (array) @parse_ini_file($file, false, INI_SCANNER_RAW) : [];
            foreach ($ini as $entry => $value) {
                $lines[$entry] = $entry === 'redislock.connections'
                    ? implode(' ', array_unique(array_filter([...explode(' ', $lines[$entry] ?? ''), ...explode(' ', $value)]))) : $value;
            }
            $text = "; " . self::HEADER . ": the php.ini lines the swap to the extension needs.\n"
                . "; Load them where PHP reads its configuration (conf.d, for every SAPI the app runs under).\n"
                . "; A TODO is a step for a human: do it, then delete its line.\n";
            foreach ($todo as $line) {
                $text .= "; TODO: $line\n";
            }
            foreach ($lines as $entry => $value) {
                $text .= '; ' . (isset($why[$entry]) ? 'for ' . implode(', ', array_unique($why[$entry])) : 'from an earlier run')
                    . ': ' . (self::INI_WHY[$entry] ?? 'see docs/configuration.md') . "\n";
                $text .= "$entry = \"$value\"\n";
            }
            $this->write($file, $text, false);
            $done[] = "wrote $file" . ($lines === [] ? '' : ': ' . implode(', ', array_keys($lines)));
        }
        foreach ($todo as $line) {
            $left[] = "$file: $line";
        }
        return [$done, $left];
    }

    /** What each INI entry the doctor writes keeps of a copy's behaviour (docs/configuration.md). */
    private const INI_WHY = [
        'redislock.lock_service_expire' => "Lock_Service::addLock()'s lease when a call gives none, as the copy's default",
        'redislock.redis_lock_timeout' => "RedisLock::lock()'s wait when a call gives none, as the copy's default",
        'redislock.redis_lock_expire' => "RedisLock::lock()'s lease when a call gives none, as the copy's default",
        'redislock.connections' => "the servers of the connection names the app's code uses (lock_service: Lock_Service's server, as the copy's constants said)",
    ];

    /** Who wrote a file: the header of what `--fix` writes. */
    public const HEADER = 'written by redislock doctor --fix';

    /** @var list<string>|null with `--diff`: the patches, instead of writes */
    private ?array $patches = null;
    /** The directory `fix()` works in (patches name files from it). */
    private string $base = '.';

    /** The patches `fix()` made instead of writing (`--diff`), each a unified diff. */
    public function patches(): array
    {
        return $this->patches ?? [];
    }

    /**
     * Writes `$code` to `$file`, keeping what was there as `$file.orig`
     * (unless one is there, or `$keep` is false); with `--diff`, makes the
     * patch instead (diff -u).
     */
    private function write(string $file, string $code, bool $keep = true): void
    {
        if ($this->patches !== null) {
            $new = tempnam(sys_get_temp_dir(), 'redislock-doctor');
            file_put_contents($new, $code);
            $old = is_file($file) ? $file : '/dev/null';
            // (Named from PATH on: `patch -p1` in PATH applies it.)
            $name = str_starts_with($file, $this->base . '/') ? substr($file, strlen($this->base) + 1) : ltrim($file, '/');
            $p = proc_open(['diff', '-u', '--label', "a/$name", '--label', "b/$name", $old, $new], [1 => ['pipe', 'w']], $pipes);
            $this->patches[] = is_resource($p) ? (string) stream_get_contents($pipes[1]) : '';
            if (is_resource($p)) {
                proc_close($p);
            }
            unlink($new);
            return;
        }
        if ($keep && !is_file("$file.orig") && !@copy($file, "$file.orig")) {
            throw new \RuntimeException("doctor --fix: cannot keep $file as $file.orig");
        }
        if (@file_put_contents($file, $code) === false) {
            throw new \RuntimeException("doctor --fix: cannot write $file");
        }
    }

    /** What `--fix` did and left, as text. */
    public static function fixText(array $done, array $left): string
    {
        $out = $done === [] ? "nothing to change\n" : implode('', array_map(fn ($l) => Cli::clean($l, 4096) . "\n", $done));
        if ($left !== []) {
            $out .= "left for a human:\n" . implode('', array_map(fn ($l) => '  - ' . Cli::clean($l, 4096) . "\n", $left));
        }
        return $out;
    }

    /** The reports as text. */
    public static function text(array $reports): string
    {
        if ($reports === []) {
            return "no copy of Lock_Service, RedisLock or RedisQueue found, and no class of those names\n";
        }
        $out = '';
        foreach ($reports as $r) {
            $what = match ($r['kind']) {
                'copy' => ($r['trait'] ? 'trait ' : 'class ') . "{$r['class']}: a copy of the original {$r['original']}",
                'unsure' => ($r['trait'] ? 'trait ' : 'class ') . "{$r['class']}: a copy of an original, but which one the doctor cannot tell",
                default => "class {$r['class']}: not a copy of the original (another API of the same name)",
            };
            $out .= Cli::clean($r['file'], 4096) . ":{$r['line']}  " . Cli::clean($what, 4096) . "\n";
            foreach (['changes' => 'changed from the original', 'swap' => 'what changes when the extension stands in', 'steps' => 'steps'] as $key => $title) {
                if ($r[$key] === []) {
                    continue;
                }
                $out .= "  $title:\n";
                foreach ($r[$key] as $i => $line) {
                    $line = is_array($line) ? $line['text'] : $line;
                    $out .= '    ' . ($key === 'steps' ? ($i + 1) . '. ' : '- ') . Cli::clean($line, 4096) . "\n";
                }
            }
            $out .= "\n";
        }
        return $out;
    }
}
