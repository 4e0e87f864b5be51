<?php

declare(strict_types=1);

namespace RedisLock\Operator;

use RedisLock\Operator\Doctor\Classifier;
use RedisLock\Operator\Doctor\Files;
use RedisLock\Operator\Doctor\Fixer;
use RedisLock\Operator\Doctor\Php;
use RedisLock\Operator\Doctor\Rewrite;
use RedisLock\Operator\Doctor\Text;
use PhpParser\Node;
use PhpParser\NodeTraverser;
use PhpParser\NodeVisitorAbstract;

foreach (['Files', 'Php', 'Protocol', 'Classifier', 'TreeEdits', 'OrderLockCalls', 'LockCalls', 'Rewrite', 'Fixer', 'Text'] as $part) {
    require_once __DIR__ . "/Doctor/$part.php";
}

/**
 * `redislock doctor PATH`: finds the copies of the original `Lock_Service`,
 * `RedisLock` and `RedisQueue` in an app's PHP files (by name and by what
 * they do), says what each changed from the original, what a swap to the
 * extension changes, and the exact steps; and the unrelated classes of
 * those names, which keep working. `fix()` takes the steps. Its parts:
 * finding files (Files), reading PHP (Php), classifying (Classifier, over
 * Protocol), rewriting (Rewrite), fixing (Fixer) and reporting (Text).
 */
final class Doctor
{
    public const ORIGINALS = Classifier::ORIGINALS;
    public const SWAP_CHANGES = Classifier::SWAP_CHANGES;
    public const MAX_BYTES = Files::MAX_BYTES;
    public const HEADER = Fixer::HEADER;

    private Files $files;
    /** @var array<string, string> the new code of each file a step changes */
    private array $rewritten = [];
    private ?Fixer $fixer = null;

    public function __construct()
    {
        $this->files = new Files();
    }

    /** @return list<array> a report per copy or same-name class found under $path */
    public function examine(string $path): array
    {
        Php::load();
        if (!file_exists($path)) {
            throw new \InvalidArgumentException("doctor: no file or directory '" . Cli::clean($path) . "'");
        }
        if (!is_dir($path) && !is_file($path)) {
            throw new \InvalidArgumentException("doctor: '" . Cli::clean($path) . "' is neither a directory nor a file (a device, a FIFO or a socket)");
        }
        if (!is_readable($path)) {
            throw new \InvalidArgumentException("doctor: cannot read '" . Cli::clean($path) . "' (permission denied)");
        }
        $parsed = $classes = $loads = $constructed = [];
        foreach ($this->files->under($path) as $file) {
            $code = $this->files->read($file);
            // (Only a file that declares a class or trait can hold a copy: the rest is not parsed.)
            if ($code === null || preg_match('/\b(?:class|trait)\s+[A-Za-z_\x80-\xff]/i', $code) !== 1 || !$this->files->fits($file, $code)) {
                continue;
            }
            $tree = Php::parse($code);
            if (is_string($tree)) {
                $this->files->skip($file, "not valid PHP ($tree)");
                continue;
            }
            $parsed[$file] = $tree;
            array_push($classes, ...Php::classes($file, $tree));
            foreach (Php::loads($tree) as [$line, $what]) {
                $loads[] = [$file, $line, $what];
            }
            $constructed = array_merge_recursive($constructed, Php::constructed($tree));
        }
        $classifier = new Classifier($loads, $constructed);
        $reports = [];
        foreach ($classes as $class) {
            $report = $classifier->judge($class);
            if ($report !== null) {
                $reports[] = $report;
            }
        }
        return $this->settle($reports, $parsed);
    }

    /**
     * Each file a step changes, printed once with every edit of its
     * classes; a file where one class cannot be rewritten is left as it
     * is, its other steps said to be left too.
     */
    private function settle(array $reports, array $parsed): array
    {
        $refused = [];
        foreach ($reports as $r) {
            foreach ($r['steps'] as $step) {
                if ($step['refused'] ?? false) {
                    $refused[$step['file']][] = $r['class'];
                }
            }
        }
        foreach ($reports as &$r) {
            $left = isset($refused[$r['file']]);
            $steps = [];
            foreach ($r['steps'] as $step) {
                if ($left && in_array($step['do'], ['unload', 'replace'], true)) {
                    $steps[] = ['do' => 'edit', 'file' => $step['file'], 'text' => "ask a human: `--fix` leaves {$step['file']} as it is, because "
                        . implode(', ', array_unique($refused[$step['file']])) . ' in it cannot be rewritten (see there); once that is done: ' . $step['text']];
                    continue;
                }
                if ($left && !($step['refused'] ?? false) && in_array($step['do'], ['ini', 'configure'], true)) {
                    // (A copy left as it is needs no php.ini line yet: it is said with its swap's step.)
                    continue;
                }
                if (in_array($step['do'], ['unload', 'replace'], true) && !isset($this->rewritten[$step['file']])) {
                    $this->rewritten[$step['file']] = self::printed($parsed[$step['file']], basename($step['file']));
                }
                $steps[] = $step;
            }
            $r['steps'] = $steps;
        }
        unset($r);
        return $reports;
    }

    /** A file's tree printed with its edits: classes taken out or replaced, a header that says who wrote it. */
    private static function printed(array $tree, string $name): string
    {
        $traverser = new NodeTraverser();
        $left = 0;
        $traverser->addVisitor(new class ($left) extends NodeVisitorAbstract {
            public function __construct(private int &$left)
            {
            }

            public function leaveNode(Node $node)
            {
                $edit = $node->getAttribute('redislock');
                if ($edit === 'remove') {
                    return NodeTraverser::REMOVE_NODE;
                }
                $parent = $node->getAttribute('parent');
                if ($node instanceof Node\Stmt && ($parent === null || $parent instanceof Node\Stmt\Namespace_)
                    && !$node instanceof Node\Stmt\Namespace_ && !$node instanceof Node\Stmt\Use_ && !$node instanceof Node\Stmt\GroupUse
                    && !$node instanceof Node\Stmt\Declare_ && !$node instanceof Node\Stmt\Nop) {
                    $this->left++;
                }
                return $edit instanceof Node ? $edit : null;
            }
        });
        $tree['stmts'] = $traverser->traverse($tree['stmts']);
        if ($left === 0) {
            return "<?php\n// " . Fixer::HEADER . ": the copy this file held was taken out, so that the extension's class answers;"
                . " $name.orig is the file as it was: put it back to undo.\n";
        }
        // (A marking comment prints as a statement of its own: no empty line after it.)
        $code = preg_replace('/(\/\/ ' . preg_quote(Rewrite::MARK, '/') . '[^\n]*\n)[ \t]*\n/', '$1', Php::print($tree));
        $header = '// ' . Fixer::HEADER . ": its copies of the originals now use the extension's classes (see the methods marked); $name.orig is the file as it was: put it back to undo.";
        return preg_match('/^<\?php[ \t]*\r?\n/', $code, $m) === 1 ? $m[0] . $header . "\n" . substr($code, strlen($m[0])) : $code;
    }

    /**
     * The files and directories that could not be read, each with why: the
     * report says nothing of what they hold.
     *
     * @return list<array{string, string}>
     */
    public function skipped(): array
    {
        return $this->files->skipped();
    }

    /**
     * `doctor --fix` (or, with `$diff`, the patches instead): takes the
     * steps of `$reports` (examine()'s of `$path`) that need no human.
     *
     * @return array{list<string>, list<string>} what was done, and what is left for a human
     */
    public function fix(array $reports, string $path, bool $diff = false): array
    {
        $this->fixer = new Fixer($this->rewritten);
        return $this->fixer->fix($reports, $path, $diff);
    }

    /** The patches `fix()` made instead of writing (`--diff`): one per file, each a unified diff. */
    public function patches(): array
    {
        return $this->fixer?->patches() ?? [];
    }

    /** What `--fix` did and left, as text. */
    public static function fixText(array $done, array $left): string
    {
        return Text::fixText($done, $left);
    }

    /** The reports as text. */
    public static function text(array $reports): string
    {
        return Text::text($reports);
    }
}
