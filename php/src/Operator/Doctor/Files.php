<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use RedisLock\Operator\Cli;

/**
 * The PHP files under an app's path that the doctor reads, and what it
 * could not read (a directory or file its user may not read, a file past
 * its size or past what memory_limit leaves), each with why.
 */
final class Files
{
    /**
     * The largest file read: a class file is rarely past a few hundred KB,
     * and parsing takes some 330 times a file's size (a generated file of
     * 50 MB would take gigabytes).
     */
    public const MAX_BYTES = 1024 * 1024;
    /** What parsing a file takes at most, per byte of it: its tree, and the copy that is edited. */
    private const PARSE_BYTES = 700;

    /** @var list<array{string, string}> what could not be read: the file or directory, and why */
    private array $skipped = [];

    /**
     * The files and directories that could not be read, each with why: the
     * report says nothing of what they hold.
     *
     * @return list<array{string, string}>
     */
    public function skipped(): array
    {
        sort($this->skipped);
        return $this->skipped;
    }

    /** Notes what could not be read, and why. */
    public function skip(string $what, string $why): void
    {
        $this->skipped[] = [$what, $why];
    }

    /** @return list<string> the PHP files under $path (or $path, a file), but vendor/ and .git/ */
    public function under(string $path): array
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
    public function read(string $file): ?string
    {
        $size = @filesize($file);
        if ($size !== false && $size > self::MAX_BYTES) {
            $this->skipped[] = [$file, sprintf('%.1f MB, larger than the %d MB the doctor reads (a generated file?)', $size / 1048576, self::MAX_BYTES / 1048576)];
            return null;
        }
        $code = is_readable($file) ? @file_get_contents($file, false, null, 0, self::MAX_BYTES + 1) : false;
        if ($code === false) {
            $this->skipped[] = [$file, 'cannot read the file (permission denied)'];
            return null;
        }
        return $code;
    }

    /** Whether memory_limit leaves room to parse `$code` (else noted in skipped()). */
    public function fits(string $file, string $code): bool
    {
        $room = self::memoryLeft();
        $need = strlen($code) * self::PARSE_BYTES;
        if ($room !== null && $need > $room) {
            $this->skipped[] = [$file, sprintf('reading it takes up to %d MB, more than memory_limit leaves (php -d memory_limit=%dM)',
                intdiv($need, 1048576) + 1, intdiv(memory_get_usage() + $need, 1048576) + 16)];
            return false;
        }
        return true;
    }

}
