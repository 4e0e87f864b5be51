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
            'releaseLock() returns true only when it deleted the lock (the original said true even when its transaction aborted)',
            'addLock() takes an id from lock_unique_id only when it takes the lock, in one round trip',
            'locks are never released at request end, as before',
        ],
        'RedisLock' => [
            'a lock\'s value is a random owner token, not its expiry time: only the instance that took it can unlock, expire or see it',
            'isLocking() returns the expiry time from the server\'s clock (a string), "" when the lock was lost, false when never taken',
            'lock() takes the key with SET NX PX for $expire seconds (the original set an absolute timestamp as the TTL)',
            'waiters queue first come first served, and an unlock hands the lock to the next',
            'locks an instance still holds are released when it is destroyed or the request ends (redislock.release_at_request_end=0 keeps them)',
        ],
        'RedisQueue' => [
            'each call is one atomic script without a lock; "now" is the Redis server\'s clock',
            'dequeue() returns 1.0 or false, as before, without the lock the original took first',
        ],
    ];

    /** @var list<array> the classes and traits found, with the file and line */
    private array $found = [];
    /** @var list<array{string, int, string}> require/include statements: file, line, what they load */
    private array $loads = [];
    /** @var list<array{string, string}> what could not be read: the file or directory, and why */
    private array $skipped = [];

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
        for ($i = 0; $i < $count; $i++) {
            $t = $tokens[$i];
            if (!is_array($t)) {
                continue;
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
                           'name' => $name[1], 'namespace' => $namespace];
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
        $class = ['extends' => null, 'constants' => [], 'methods' => [], 'strings' => [], 'factory' => false];
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
            } elseif (!is_array($t)) {
                continue;
            } elseif ($t[0] === T_CONSTANT_ENCAPSED_STRING || $t[0] === T_ENCAPSED_AND_WHITESPACE) {
                $class['strings'][] = $t[0] === T_CONSTANT_ENCAPSED_STRING ? self::literal($t[1]) : $t[1];
            } elseif ($t[0] === T_STRING && strcasecmp($t[1], 'RedisFactory') === 0) {
                $class['factory'] = true;
            } elseif ($depth === 1 && $t[0] === T_CONST) {
                $const = $this->next($tokens, $i + 1, T_STRING);
                if ($const !== null) {
                    $class['constants'][$const[1]] = $this->valueAfter($tokens, $i, ';');
                }
            } elseif ($depth === 1 && $t[0] === T_FUNCTION) {
                $method = $this->next($tokens, $i + 1, T_STRING);
                if ($method !== null) {
                    $class['methods'][$method[1]] = $this->parameters($tokens, $i);
                }
            }
        }
        return [$class, $i];
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

    /** Which original a class derives from, by its methods and keys; null for none. */
    public static function original(array $class): ?string
    {
        $methods = array_map('strtolower', array_keys($class['methods']));
        $has = fn (string ...$names) => array_diff(array_map('strtolower', $names), $methods) === [];
        $writes = function (string $original) use ($class): bool {
            foreach ($class['strings'] as $s) {
                foreach (self::KEYS[$original] as $key) {
                    if (str_starts_with($s, $key)) {
                        return true;
                    }
                }
            }
            return isset($class['constants']['REDIS_LOCK_KEY_TEMPLATE']);
        };
        return match (true) {
            $has('addLock', 'releaseLock') || ($has('addLock') && $writes('Lock_Service')) => 'Lock_Service',
            $has('enqueue') && ($has('dequeue') || $has('pop') || $has('top')) => 'RedisQueue',
            $has('lock', 'unlock') && ($has('isLocking') || $has('unlockAll') || $has('expire') || $writes('RedisLock')) => 'RedisLock',
            default => null,
        };
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
        $original = self::original($class);
        $where = ['file' => $class['file'], 'line' => $class['line'], 'class' => $fqn, 'trait' => $class['trait']];
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
        foreach (self::ORIGINALS[$original] as $method => $params) {
            $mine = $methods[strtolower($method)] ?? null;
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
        $extra = array_diff(array_keys($class['methods']), array_keys(self::ORIGINALS[$original]));
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
        if ($class['trait']) {
            $steps[] = ['do' => 'edit', 'file' => $file, 'text' => "the extension cannot stand in for a trait: in each class that uses $fqn, drop the `use` and extend \\$original instead"
                . ($extra === [] ? '' : ' (keeping ' . implode(', ', $extra) . ' in that class)')];
        } elseif ($sameName && $extra === [] && $class['extends'] === null) {
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
        $host = $class['constants']['REDIS_CONFIG_HOST'] ?? '127.0.0.1';
        $port = $class['constants']['REDIS_CONFIG_PORT'] ?? 6379;
        if ($original === 'Lock_Service' && is_string($host) && !is_array($port) && ($host !== '127.0.0.1' || (int) $port !== 6379)) {
            $steps[] = ['do' => 'ini', 'entry' => 'redislock.connections', 'value' => "lock_service=redis://$host:$port",
                'text' => "php.ini: redislock.connections = \"lock_service=redis://$host:$port\" (or add it to the names listed there)"];
        }
        if ($class['factory']) {
            $steps[] = ['do' => 'configure', 'entry' => 'redislock.connections',
                'text' => 'php.ini: redislock.connections = "NAME=redis://HOST:PORT/DB ..." for each connection name the app passes to the constructor (as its RedisFactory config says)'];
        }
        return $steps;
    }

    /** The reports as text. */
    public static function text(array $reports): string
    {
        if ($reports === []) {
            return "no copy of Lock_Service, RedisLock or RedisQueue found, and no class of those names\n";
        }
        $out = '';
        foreach ($reports as $r) {
            $what = $r['kind'] === 'copy'
                ? ($r['trait'] ? 'trait ' : 'class ') . "{$r['class']}: a copy of the original {$r['original']}"
                : "class {$r['class']}: not a copy of the original (another API of the same name)";
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
