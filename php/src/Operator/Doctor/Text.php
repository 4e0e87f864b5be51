<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use RedisLock\Operator\Cli;

/** The doctor's reports and what `--fix` did, as text. */
final class Text
{
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
