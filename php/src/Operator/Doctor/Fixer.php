<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use RedisLock\Operator\Cli;

/**
 * `doctor --fix` and `--diff`: the files the reports' steps change, each
 * written once with all its classes, and the php.ini lines.
 */
final class Fixer
{
    /**
     * @param array<string, string> $files the new code of each file the
     *   reports change (every class and trait in it edited at once)
     */
    public function __construct(private array $files)
    {
    }

    /**
     * `doctor --fix`: takes the steps of `$reports` (examine()'s of
     * `$path`) that need no human. Each file is written once, all of them
     * or none: every new file must pass `php -l` first. A changed file is
     * kept beside it as `<file>.orig` (an older one is never overwritten),
     * and the php.ini lines go to `redislock-doctor.ini` in `$path` (merged
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
        $done = $left = $ini = $todo = $why = $writes = [];
        foreach ($reports as $r) {
            foreach ($r['steps'] as $step) {
                switch ($step['do']) {
                    case 'unload':
                    case 'replace':
                        $writes[$step['file']] = $this->files[$step['file']];
                        $done[] = ($step['do'] === 'unload' ? "took {$r['class']} out of" : "rewrote {$r['class']} in")
                            . " {$step['file']} (the copy is {$step['file']}.orig)";
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
        foreach ($writes as $file => $code) {
            $this->lint($file, $code);
        }
        $file = $this->base . '/redislock-doctor.ini';
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
            $writes[$file] = $text;
            $done[] = "wrote $file" . ($lines === [] ? '' : ': ' . implode(', ', array_keys($lines)));
        }
        $this->writeAll($writes, $file);
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

    /** Refuses (before anything is written) a new file that PHP would not compile. */
    private function lint(string $file, string $code): void
    {
        $tmp = tempnam(sys_get_temp_dir(), 'redislock-doctor');
        file_put_contents($tmp, $code);
        exec(escapeshellarg(PHP_BINARY) . ' -n -l ' . escapeshellarg($tmp) . ' 2>&1', $out, $status);
        unlink($tmp);
        if ($status !== 0) {
            throw new \RuntimeException("doctor --fix: the rewrite of $file does not pass php -l, so nothing was written: "
                . trim(str_replace($tmp, $file, implode(' ', $out))) . ' (a bug of the doctor: please report it with the file)');
        }
    }

    /**
     * Writes every file, keeping what was there as `<file>.orig` (unless
     * one is there: an older one is never overwritten; the INI file
     * `$ini` has none); with `--diff`, makes one patch per file instead
     * (diff -u). All or none: a failure puts back what was written.
     *
     * @param array<string, string> $writes file => its new code
     */
    private function writeAll(array $writes, string $ini): void
    {
        if ($this->patches !== null) {
            foreach ($writes as $file => $code) {
                $this->patches[] = $this->patch($file, $code);
            }
            return;
        }
        $written = [];
        try {
            foreach ($writes as $file => $code) {
                if ($file !== $ini && !is_file("$file.orig")) {
                    if (!@copy($file, "$file.orig")) {
                        throw new \RuntimeException("doctor --fix: cannot keep $file as $file.orig, so nothing was written");
                    }
                    $written[$file] = ['orig' => true, 'was' => null];
                } else {
                    $written[$file] = ['orig' => false, 'was' => is_file($file) ? (string) @file_get_contents($file) : null];
                }
                $new = "$file.redislock-doctor";
                if (@file_put_contents($new, $code) === false || !@chmod($new, is_file($file) ? fileperms($file) & 0777 : 0644) || !@rename($new, $file)) {
                    @unlink($new);
                    throw new \RuntimeException("doctor --fix: cannot write $file, so nothing was written");
                }
            }
        } catch (\RuntimeException $e) {
            foreach ($written as $file => $undo) {
                if ($undo['orig']) {
                    @rename("$file.orig", $file);
                } elseif ($undo['was'] !== null) {
                    @file_put_contents($file, $undo['was']);
                } else {
                    @unlink($file);
                }
            }
            throw $e;
        }
    }

    /** The patch that makes `$file` read `$code` (diff -u, named from PATH on: `patch -p1` in PATH applies it). */
    private function patch(string $file, string $code): string
    {
        $new = tempnam(sys_get_temp_dir(), 'redislock-doctor');
        file_put_contents($new, $code);
        $old = is_file($file) ? $file : '/dev/null';
        $name = str_starts_with($file, $this->base . '/') ? substr($file, strlen($this->base) + 1) : ltrim($file, '/');
        $p = proc_open(['diff', '-u', '--label', "a/$name", '--label', "b/$name", $old, $new], [1 => ['pipe', 'w']], $pipes);
        $patch = is_resource($p) ? (string) stream_get_contents($pipes[1]) : '';
        if (is_resource($p)) {
            proc_close($p);
        }
        unlink($new);
        return $patch;
    }
}
