<?php

/**
 * Every ```php block of README.md and docs/ runs, and prints what its
 * comments say (the rules: docs/development.md, "Examples in the docs");
 * every relative link in them names a file, and a heading where it has an
 * anchor.
 */
final class DocsExamplesTest extends RedisLockTestCase
{
    private const PRINTS = '/\b(echo|print|printf|var_dump|print_r|var_export)\b/';

    /** The Markdown files of the docs. */
    private static function documents(): array
    {
        $root = dirname(__DIR__, 2);
        return [$root . '/README.md', ...glob($root . '/docs/*.md')];
    }

    /**
     * Each ```php block: "file:line" => [code, annotation] (the text of an
     * `<!-- example: ... -->` comment right before the block, or "").
     */
    public static function examples(): array
    {
        $root = dirname(__DIR__, 2);
        $out = [];
        foreach (self::documents() as $file) {
            $lines = file($file, FILE_IGNORE_NEW_LINES);
            $fence = null;
            foreach ($lines as $i => $line) {
                if ($fence === null && preg_match('/^```(\w*)/', $line, $m)) {
                    $fence = ['lang' => $m[1], 'start' => $i, 'code' => []];
                } elseif ($fence !== null && str_starts_with($line, '```')) {
                    if ($fence['lang'] === 'php') {
                        $before = $lines[$fence['start'] - 1] ?? '';
                        $note = preg_match('/^<!-- example: (.*) -->$/', $before, $m) ? $m[1] : '';
                        $name = substr($file, strlen($root) + 1) . ':' . ($fence['start'] + 1);
                        $out[$name] = [implode("\n", $fence['code']), $note];
                    }
                    $fence = null;
                } elseif ($fence !== null) {
                    $fence['code'][] = $line;
                }
            }
        }
        return $out;
    }

    /**
     * Each block of the docs under a `<!-- check: COMMAND {FILE} -->`
     * comment (a Prometheus scrape config, a systemd unit): written to FILE
     * in a directory of its own, COMMAND run on it passes and says nothing
     * on stderr (systemd-analyze warns there and still exits 0).
     */
    public function testEveryCheckedSetupPassesItsTool(): void
    {
        $checked = 0;
        foreach (self::documents() as $file) {
            $lines = file($file, FILE_IGNORE_NEW_LINES);
            foreach ($lines as $i => $line) {
                if (!preg_match('/^<!-- check: (\S+)(.*) \{([\w.@-]+)\} -->$/', $line, $m)) {
                    continue;
                }
                [, $tool, $args, $name] = $m;
                $this->assertMatchesRegularExpression('/^```\w+$/', $lines[$i + 1] ?? '', "$file:" . ($i + 1) . ': a block follows');
                $end = $i + 2;
                while (!str_starts_with($lines[$end], '```')) {
                    $end++;
                }
                $dir = sys_get_temp_dir() . '/redislock-check-' . getmypid() . "-$i";
                @mkdir($dir);
                file_put_contents("$dir/$name", implode("\n", array_slice($lines, $i + 2, $end - $i - 2)) . "\n");
                $this->assertNotSame('', trim((string) shell_exec('command -v ' . escapeshellarg($tool))), "$tool is not installed (tools/deps.sh installs it)");
                $proc = proc_open([$tool, ...preg_split('/\s+/', trim($args)), "./$name"], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $dir);
                $out = stream_get_contents($pipes[1]);
                $err = stream_get_contents($pipes[2]);
                $status = proc_close($proc);
                exec('rm -rf ' . escapeshellarg($dir));
                $this->assertSame([0, ''], [$status, trim($err)], "$file:" . ($i + 1) . ": $tool$args $name\n$out");
                $checked++;
            }
        }
        $this->assertGreaterThanOrEqual(2, $checked, 'the scrape config and the unit');
    }

    /**
     * What a block says it prints: the comment after each line that
     * prints, up to ": " (an explanation follows), or the comment lines
     * right under it when it has none; white space removed.
     */
    private static function promised(string $code): string
    {
        $lines = explode("\n", $code);
        $promised = '';
        foreach ($lines as $i => $line) {
            [$stmt, $comment] = array_pad(explode('//', $line, 2), 2, null);
            if (preg_match('/^\s*$/', $stmt) || !preg_match(self::PRINTS, $stmt)) {
                continue;
            }
            if ($comment === null) {
                $comment = '';
                for ($j = $i + 1; isset($lines[$j]) && preg_match('#^\s*//(.*)$#', $lines[$j], $m); $j++) {
                    $comment .= $m[1];
                }
            }
            $promised .= explode(': ', $comment, 2)[0];
        }
        return preg_replace('/\s+/', '', $promised);
    }

    public function testEveryBlockIsFound(): void
    {
        // The count moves with the docs; a parser that finds none (or
        // loses the README's tour) must not pass quietly.
        $names = array_keys(self::examples());
        $this->assertGreaterThanOrEqual(15, count($names));
        $this->assertNotEmpty(preg_grep('/^README\.md:/', $names));
        $this->assertSame('', self::promised("\$x = 1; // a comment on a line that prints nothing"));
        $this->assertSame('bool(true)int(0)', self::promised("var_dump(true); // bool(true): because\nvar_dump(0);\n// int(0)"));
        // The README says how many are not run.
        $notRun = count(array_filter(self::examples(), fn ($e) => str_starts_with($e[1], 'not run: ')));
        $words = [1 => 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];
        $this->assertStringContainsString("but for {$words[$notRun]} in docs/ marked `not run`", preg_replace('/\s+/', ' ', file_get_contents(dirname(__DIR__, 2) . '/README.md')));
    }

    /** @dataProvider examples */

    #[PHPUnit\Framework\Attributes\DataProvider('examples')]
    public function testTheExamplePrintsWhatItsCommentsSay(string $code, string $note): void
    {
        if (preg_match('/^not run: (.+)$/', $note, $m)) {
            $this->markTestSkipped($m[1]);
        }
        $servers = [];
        if (preg_match('/^redis at (.+)$/', $note, $m)) {
            foreach (preg_split('/\s+/', trim($m[1])) as $address) {
                $servers[$address] = RedisServer::start();
                $code = str_replace($address, '127.0.0.1:' . $servers[$address]->port, $code);
            }
        } else {
            $this->assertSame('', $note, 'an annotation this test does not know');
        }
        $file = tempnam(sys_get_temp_dir(), 'example');
        file_put_contents($file, "<?php\nrequire " . var_export(__DIR__ . '/examples_autoload.php', true) . ";\n" . $code . "\n");
        try {
            $p = proc_open(
                // phpredis too: examples show other clients beside redislock.
                self::command('require ' . var_export($file, true) . ';', ['error_reporting' => (string) E_ALL,
                    'display_errors' => 'stderr', 'extension' => self::phpredisExtensions()]),
                [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
                $pipes,
            );
            $stdout = stream_get_contents($pipes[1]);
            $stderr = stream_get_contents($pipes[2]);
            $exit = proc_close($p);
        } finally {
            unlink($file);
            foreach ($servers as $server) {
                $server->stop();
            }
        }
        $this->assertSame('', $stderr, "the example wrote to stderr:\n$code");
        $this->assertSame(0, $exit, "the example failed:\n$code\n$stdout");
        $this->assertSame(self::promised($code), preg_replace('/\s+/', '', $stdout), "what it printed:\n$stdout");
    }

    public function testEveryRelativeLinkNamesAFileAndAHeading(): void
    {
        $checked = 0;
        foreach (self::documents() as $file) {
            $text = preg_replace('/^```.*?^```/ms', '', file_get_contents($file));
            preg_match_all('/\]\(([^)\s]+)\)/', $text, $m);
            foreach ($m[1] as $target) {
                if (preg_match('#^[a-z]+:#', $target)) {
                    continue;
                }
                [$path, $anchor] = array_pad(explode('#', $target, 2), 2, null);
                $resolved = $path === '' ? $file : dirname($file) . '/' . $path;
                $this->assertFileExists($resolved, basename($file) . " links to $target");
                if ($anchor !== null) {
                    $this->assertContains($anchor, self::anchors($resolved), basename($file) . " links to $target");
                }
                $checked++;
            }
        }
        $this->assertGreaterThan(20, $checked);
    }

    /** The anchors GitHub makes of a Markdown file's headings. */
    private static function anchors(string $file): array
    {
        $text = preg_replace('/^```.*?^```/ms', '', file_get_contents($file));
        preg_match_all('/^#+ (.*)$/m', $text, $m);
        return array_map(
            fn (string $h) => str_replace(' ', '-', preg_replace('/[^a-z0-9 _-]/', '', strtolower($h))),
            $m[1],
        );
    }
}
