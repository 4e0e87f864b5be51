<?php

require_once dirname(__DIR__) . '/src/Operator/Cli.php';
require_once dirname(__DIR__) . '/src/Operator/Doctor.php';

use RedisLock\Operator\Doctor;

/**
 * `redislock doctor` over a corpus of apps written in the styles public
 * code carries copies of the originals in (doctor/): it finds and explains
 * each, and an app whose doctor's steps are applied prints what it printed
 * before the swap, on the extension instead of its copy.
 */
final class DoctorTest extends RedisLockTestCase
{
    private const CORPUS = __DIR__ . '/doctor';

    /** @var list<string> the copies of corpus apps, removed after the class */
    private static array $copies = [];

    public static function tearDownAfterClass(): void
    {
        foreach (self::$copies as $dir) {
            exec('rm -rf ' . escapeshellarg($dir));
        }
        self::$copies = [];
    }

    /** A copy of a corpus app, its `{{PORT}}` the test server's. */
    private static function app(string $name): string
    {
        $dir = sys_get_temp_dir() . "/redislock-doctor-$name-" . getmypid() . '-' . bin2hex(random_bytes(3));
        self::$copies[] = $dir;
        $walk = new RecursiveIteratorIterator(new RecursiveDirectoryIterator(self::CORPUS . "/$name", FilesystemIterator::SKIP_DOTS));
        foreach ($walk as $file) {
            $to = $dir . substr($file->getPathname(), strlen(self::CORPUS . "/$name"));
            @mkdir(dirname($to), 0777, true);
            file_put_contents($to, str_replace('{{PORT}}', (string) RedisServer::$main->port, file_get_contents($file->getPathname())));
        }
        return $dir;
    }

    /** The report of each class the doctor found in a corpus app, by class. */
    private static function reports(string $name): array
    {
        $out = [];
        foreach ((new Doctor())->examine(self::app($name)) as $r) {
            $out[$r['class']] = $r;
        }
        return $out;
    }

    private static function texts(array $report, string $key): string
    {
        return implode("\n", array_map(fn ($l) => is_array($l) ? $l['text'] : $l, $report[$key]));
    }

    /**
     * Each change a swap makes names the docs that explain it, and each
     * link reaches a heading that is there (GitHub's anchors: lowercase,
     * punctuation dropped, spaces as hyphens).
     */
    public function testEverySwapChangeLinksToTheDocsThatExplainIt(): void
    {
        foreach (RedisLock\Operator\Doctor::SWAP_CHANGES as $original => $changes) {
            foreach ($changes as $change) {
                $this->assertSame(1, preg_match('/\((docs\/[\w-]+\.md)(?:#([\w-]+))?\)$/', $change, $m), "$original: $change");
                $doc = file_get_contents(dirname(__DIR__, 2) . '/' . $m[1]);
                if (isset($m[2])) {
                    preg_match_all('/^#+ (.+)$/m', $doc, $headings);
                    $anchors = array_map(fn ($h) => str_replace(' ', '-', preg_replace('/[^\w\- ]/u', '', strtolower($h))), $headings[1]);
                    $this->assertContains($m[2], $anchors, "$original: $change");
                }
            }
        }
    }

    public function testTheDoctorFindsAndExplainsEveryVariant(): void
    {
        $expected = [
            // app => [class, original, what its changes say, what its steps say]
            'service-article' => ['Lock_Service', 'Lock_Service', [], ['stop loading', 'lock_service=redis://127.0.0.1:' . RedisServer::$main->port]],
            'service-30s' => ['Lock_Service', 'Lock_Service', ['$intExpireTime defaults to 30'], ['redislock.lock_service_expire = 30']],
            // (The connection its factory makes goes to the extension: no INI line.)
            'redislock-factory' => ['RedisLock', 'RedisLock', ['$timeout defaults to 10', 'RedisFactory::get'], ['rewrite the class RedisLock', 'every other statement as it is']],
            // (Its constructor connects where it does: the connection is handed over, not left to php.ini.)
            'redislock-namespaced' => ['app\common\service\RedisLock', 'RedisLock', ['named app\common\service\RedisLock'], ['rewrite the class app\common\service\RedisLock']],
            'redislock-extras' => ['RedisLock', 'RedisLock', ['$expire defaults to 8', 'onLock, delLock', "its keys are its own ('lock:')", 'isLocking() returns true or false'],
                ['leaves', "its keys are its own ('lock:...'), not the original's Lock:<name>"]],
            'trait' => ['App\Support\RedisLockTrait', 'RedisLock', ['a trait'], ['rewrite the trait App\Support\RedisLockTrait']],
            'service-predis' => ['App\Services\Lock_Service', 'Lock_Service', ['addLock() returns NULL when it does not take the lock', 'without the original\'s generateUniqueLockId()'],
                // (Its own Predis client, handed over: the server it names, no INI line.)
                ['rewrite the class App\Services\Lock_Service', 'RedisLock\OrderLocks on its own keys and connection']],
            'service-predis-run' => ['App\Services\Lock_Service', 'Lock_Service', ['addLock() returns NULL when it does not take the lock'],
                ['rewrite the class App\Services\Lock_Service', 'RedisLock\OrderLocks on its own keys and connection']],
            'redislock-laravel' => ['App\Support\RedisLock', 'RedisLock', ['isLocking() returns true or false', 'lock() may expire or take over a lock another holds', 'Redis::connection()'],
                ['rewrite the class App\Support\RedisLock']],
            'laravel-run' => ['App\Support\RedisLock', 'RedisLock', ['isLocking() returns true or false', 'Redis::connection()'],
                ['rewrite the class App\Support\RedisLock']],
            // Return wrappers and log lines kept; the id helper found by what it does (INCR).
            'service-wrapped' => ['App\Lib\OrderLock', 'Lock_Service', ["getUniqueLockId() does the work of the original's generateUniqueLockId()"],
                ['rewrite the class App\Lib\OrderLock', 'addLock(), releaseLock(), getUniqueLockId()']],
            // Keys of its own: kept, on the extension's OrderLocks made from the copy's connection.
            'service-own-keys' => ['Lock_Service', 'Lock_Service', [], ['rewrite the class Lock_Service', 'RedisLock\\OrderLocks on its own keys']],
            // Statements beside the protocol the doctor cannot keep yet: left as they are.
            'redislock-deadline' => ['RedisLock', 'RedisLock', [], ['leaves', 'isLocking(), line 33: $this->redis->ttl("Lock:{$name}") is Redis work the doctor cannot map']],
            // Renamed methods, found by what they do (SET NX and DEL of Lock:<name>).
            'redislock-renamed' => ['App\Locks\KeyLock', 'RedisLock', ["acquire() does the work of the original's lock()", "release() does the work of the original's unlock()"],
                ['rewrite the class App\Locks\KeyLock', 'acquire(), release(), prolong(), held()']],
            // The article's own RedisLock with a log line: its wait loop run once, the takeover and the TTL read gone.
            'redislock-seed-logged' => ['App\Lib\RedisLock', 'RedisLock', ['isLocking() returns true or false'], ['rewrite the class App\Lib\RedisLock', 'lock(), unlock(), isLocking()']],
            // A log line and a record the app reads, kept beside the extension's calls.
            'redislock-logged' => ['App\Support\RedisLock', 'RedisLock', [], ['rewrite the class App\Support\RedisLock', 'every other statement as it is']],
            'service-host' => ['Lock_Service', 'Lock_Service', [], ['stop loading', 'lock_service=redis://10.20.30.40:PORT']],
            // A connection its factory makes (another database): handed over, no INI line.
            'service-factory' => ['App\\Service\\OrderService', 'Lock_Service', [], ['RedisLock\\OrderLocks on its own keys and connection']],
            'trait-parent' => ['App\Cache\TRedisLock', 'RedisLock', ['a trait'], ['rewrite the trait App\Cache\TRedisLock']],
            'service-renamed' => ['app\common\service\RedisLock', 'Lock_Service', ['named app\common\service\RedisLock', 'lock() does the work of the original\'s addLock()',
                'unlock() does the work of the original\'s releaseLock()', '$expire defaults to 8'], ['rewrite the class', 'lock_service=redis://127.0.0.1:' . RedisServer::$main->port]],
            'queue' => ['RedisQueue', 'RedisQueue', [], ['rewrite the class RedisQueue', 'enqueue(), dequeue(), pop(), top()']],
            // Hyperf's pooled connection, a proxy the extension cannot take: left as it is.
            'redislock-hyperf' => ['App\Utils\RedisLock', 'RedisLock', [], ['leaves', 'comes from a container']],
            'unrelated' => ['redisLock', null, [], ['keeps using it']],
        ];
        $this->assertEqualsCanonicalizing([...array_keys($expected), 'lookalike', 'seed-together', 'mixed-file'], array_map('basename', glob(self::CORPUS . '/*', GLOB_ONLYDIR)), 'every app of the corpus is checked');
        // Three copies in one file: each found, the file rewritten once with all of them.
        $together = self::reports('seed-together');
        $this->assertSame(['Shop\Infra\Lock_Service', 'Shop\Infra\RedisLock', 'Shop\Infra\RedisQueue'], array_keys($together));
        $this->assertSame(['Lock_Service', 'RedisLock', 'RedisQueue'], array_column($together, 'original'));
        $this->assertSame(['replace', 'replace', 'replace'], array_map(fn ($r) => $r['steps'][0]['do'], array_values($together)));
        $this->assertSame([], self::reports('lookalike'), 'a lock() of its own and a log line are no copy');
        foreach ($expected as $app => [$class, $original, $changes, $steps]) {
            $reports = self::reports($app);
            $this->assertSame([$class], array_keys($reports), "$app: what the doctor found");
            $r = $reports[$class];
            $this->assertSame($original, $r['original'], $app);
            $this->assertSame($original === null ? 'same-name' : 'copy', $r['kind'], $app);
            foreach ($changes as $change) {
                $this->assertStringContainsString($change, self::texts($r, 'changes'), $app);
            }
            foreach ($steps as $step) {
                $this->assertStringContainsString($step, self::texts($r, 'steps'), $app);
            }
            $this->assertSame($original === null ? [] : Doctor::SWAP_CHANGES[$original], $r['swap'], "$app: what a swap changes");
        }
        // The service's constructor and the queue's key template are the
        // originals': nothing said of them.
        $this->assertSame([], self::reports('queue')['RedisQueue']['changes']);
    }

    /**
     * Each app that can swap by the doctor's steps alone runs before (its
     * copy on phpredis, no extension) and after (the steps applied, the
     * extension loaded): the same transcript. The connection names of an
     * app's own factory config are the one step the doctor leaves to the
     * reader (`configure`): given here as that config says.
     */
    public function testEachAppPrintsTheSameAfterTheDoctorsSteps(): void
    {
        $apps = ['service-article', 'service-30s', 'redislock-factory', 'redislock-namespaced', 'queue', 'unrelated', 'service-renamed',
            'trait-parent', 'seed-together', 'service-wrapped', 'service-own-keys', 'service-factory', 'redislock-logged', 'redislock-renamed', 'redislock-seed-logged'];
        // Predis where the release packages it (Debian 12: php-nrk-predis; 13: none).
        if (stream_resolve_include_path('Predis/Autoloader.php') !== false) {
            $apps[] = 'service-predis-run';
        }
        // Laravel's Redis facade, as Debian installs the framework.
        if (is_file('/usr/share/php/Illuminate/autoload.php')) {
            $apps[] = 'laravel-run';
        }
        foreach ($apps as $name) {
            $dir = self::app($name);
            $this->redis->flushAll();
            $before = $this->runApp($dir, false, []);
            $doctor = new Doctor();
            [, $left] = $doctor->fix($doctor->examine($dir), $dir);
            $this->assertSame([], $left, "$name: nothing is left for a human");
            $ini = is_file("$dir/redislock-doctor.ini") ? parse_ini_file("$dir/redislock-doctor.ini") : [];
            $this->redis->flushAll();
            $after = $this->runApp($dir, true, $ini);
            $this->assertNotSame('', $before, $name);
            $this->assertStringNotContainsString('Error', $before, "$name ran before the swap");
            $this->assertSame($before, $after, "$name: the transcript after --fix");
            $again = new Doctor();
            $this->assertSame([[], []], $again->fix($again->examine($dir), $dir), "$name: a second --fix changes nothing");
        }
    }

    /**
     * A copy whose keys are its own, or whose methods do more than Redis
     * work the doctor can keep: `--fix` writes nothing, says why, exits 4.
     */
    public function testWhatFixCannotKeepItLeavesAsItWas(): void
    {
        $bin = dirname(__DIR__) . '/bin/redislock';
        foreach (['mixed-file' => 'App\\Infra\\RedisLock in it cannot be rewritten (see there)', 'redislock-deadline' => 'is Redis work the doctor cannot map',
            'redislock-extras' => "its keys are its own ('lock:...')"] as $app => $said) {
            $dir = self::app($app);
            $sums = array_map('md5_file', self::filesIn($dir));
            exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', ...self::tokenizer(), $bin, 'doctor', '--fix', $dir])) . ' 2>&1', $out, $exit);
            $this->assertSame(4, $exit, "$app: " . implode("\n", $out));
            $this->assertStringContainsString($said, implode("\n", $out), $app);
            $this->assertStringContainsString('nothing to change', implode("\n", $out), $app);
            $this->assertSame($sums, array_map('md5_file', self::filesIn($dir)), "$app: every file as it was, no .orig");
            $out = [];
        }
    }

    /** @return array<string, string> every file under $dir, by path */
    private static function filesIn(string $dir): array
    {
        $files = [];
        foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS)) as $file) {
            $files[$file->getPathname()] = $file->getPathname();
        }
        ksort($files);
        return $files;
    }

    /** Runs an app's app.php with phpredis, and the extension when `$extension`. */
    private function runApp(string $dir, bool $extension, array $ini): string
    {
        $cmd = [PHP_BINARY, '-n'];
        foreach (self::phpredisExtensions() as $ext) {
            array_push($cmd, '-d', "extension=$ext");
        }
        if ($extension) {
            $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
            array_push($cmd, '-d', "extension=$so", '-d', 'redislock.default_dsn=' . RedisServer::$main->dsn());
        }
        foreach ($ini as $k => $v) {
            array_push($cmd, '-d', "$k=\"$v\"");
        }
        $cmd[] = "$dir/app.php";
        $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        proc_close($p);
        // When a log line was written is not what the app did: the runs
        // before and after may be a second apart.
        return preg_replace('/^\[\d\d-\w{3}-\d{4} \d\d:\d\d:\d\d [A-Z]+\] /m', '[time] ', $out);
    }

    /** The -d that load the tokenizer and ctype (PHP-Parser's), where PHP has them as shared extensions. */
    private static function tokenizer(): array
    {
        return array_merge(...array_map(fn ($ext) => ['-d', "extension=$ext"], [...self::shared('tokenizer'), ...self::shared('ctype')]));
    }

    public function testTheCommandLine(): void
    {
        $bin = dirname(__DIR__) . '/bin/redislock';
        // Without the extension: an app is examined before it is installed.
        exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', ...self::tokenizer(), $bin, 'doctor', self::app('service-30s')])) . ' 2>&1', $out, $exit);
        $this->assertSame(0, $exit, implode("\n", $out));
        $this->assertStringContainsString('class Lock_Service: a copy of the original Lock_Service', implode("\n", $out));
        $this->assertStringContainsString('2. php.ini: redislock.lock_service_expire = 30', implode("\n", $out));
        $out = [];
        exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', ...self::tokenizer(), $bin, 'doctor', '--json', self::CORPUS . '/unrelated'])), $out, $exit);
        $this->assertSame('same-name', json_decode($out[0], true)[0]['kind']);
        $out = [];
        exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', ...self::tokenizer(), $bin, 'doctor', '/no/such/app'])) . ' 2>&1', $out, $exit);
        $this->assertSame(1, $exit);
        $this->assertSame("redislock: doctor: no file or directory '/no/such/app'", $out[0]);
        // Help and usage need no extension either; the commands that read Redis say it is missing.
        foreach ([[['--help'], 0, '/^Usage: redislock /'], [['-h'], 0, '/^Usage: redislock /'], [['help'], 0, '/^Usage: redislock /'],
            [['bogus'], 2, "/^redislock: unknown command 'bogus'\\nusage: /"],
            [['status'], 1, '/^redislock: status reads Redis through the redislock extension, which this PHP has not loaded/'],
            [['dead', 'mail'], 1, '/^redislock: dead reads Redis through the redislock extension/']] as [$args, $code, $pattern]) {
            $out = [];
            exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', $bin, ...$args])) . ' 2>&1', $out, $exit);
            $this->assertSame($code, $exit, implode(' ', $args) . ': ' . implode("\n", $out));
            $this->assertMatchesRegularExpression($pattern, implode("\n", $out), implode(' ', $args));
        }
    }

    public function testWhatCannotBeReadIsSaidAndTheRestReported(): void
    {
        if (posix_getuid() !== 0) {
            $this->markTestSkipped('reads as another user (nobody): needs root');
        }
        // The CLI runs from a copy that nobody can read: a clone may sit in a
        // directory only its owner enters (mktemp -d).
        $cli = sys_get_temp_dir() . '/redislock-doctor-cli-' . getmypid() . '-' . bin2hex(random_bytes(3));
        self::$copies[] = $cli;
        mkdir("$cli/bin", 0755, true);
        mkdir("$cli/src/Operator/Doctor", 0755, true);
        chmod($cli, 0755);
        copy(dirname(__DIR__) . '/bin/redislock', $bin = "$cli/bin/redislock");
        foreach (glob(dirname(__DIR__) . '/src/Operator/{,Doctor/}*.php', GLOB_BRACE) as $file) {
            copy($file, "$cli/src/Operator/" . substr($file, strlen(dirname(__DIR__) . '/src/Operator/')));
        }
        $app = self::app('service-30s');
        chmod($app, 0755);
        // A directory its user cannot read, a file it cannot read (whose name has
        // terminal escapes), a generated file past the doctor's size.
        mkdir("$app/storage", 0700);
        file_put_contents("$app/storage/cache.php", '<?php class Lock_Service {}');
        file_put_contents("$app/evil\e]0;owned\x07.php", '<?php class RedisQueue {}');
        chmod("$app/evil\e]0;owned\x07.php", 0600);
        $big = fopen("$app/generated.php", 'w');
        fwrite($big, "<?php\n\$routes = [\n");
        for ($i = 0; ftell($big) <= Doctor::MAX_BYTES; $i++) {
            fwrite($big, str_repeat("  'route$i' => ['GET', '/path/$i', 'Controller@action'],\n", 100));
        }
        fwrite($big, "];\n");
        fclose($big);
        $run = function (string $path, string $memory = '128M') use ($bin): array {
            $p = proc_open(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', PHP_BINARY, '-n', '-d', "memory_limit=$memory",
                ...self::tokenizer(), $bin, 'doctor', $path], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            return [$out, $err, proc_close($p)];
        };
        [$out, $err, $exit] = $run($app);
        $this->assertSame(3, $exit, $out . $err);
        $this->assertStringContainsString('class Lock_Service: a copy of the original Lock_Service', $out, 'the rest is reported');
        $lines = explode("\n", rtrim($err));
        $this->assertCount(3, $lines, $err);
        $this->assertStringStartsWith("redislock: doctor skipped $app/evil?]0;owned?.php: cannot read the file", $lines[0]);
        $this->assertStringStartsWith("redislock: doctor skipped $app/generated.php: ", $lines[1]);
        $this->assertStringContainsString('a generated file?', $lines[1]);
        $this->assertSame("redislock: doctor skipped $app/storage: cannot read the directory (permission denied)", $lines[2]);
        $this->assertDoesNotMatchRegularExpression('/[\x00-\x09\x0b-\x1f\x7f]/', $out . $err);

        // A file the memory_limit leaves no room to read is said too.
        file_put_contents("$app/routes.php", "<?php\nclass Routes\n{\n    const ALL = [\n" . str_repeat("        ['x' => 1, 'y' => 2],\n", 20000) . "    ];\n}\n");
        [$out, $err, $exit] = $run("$app/routes.php", '128M');
        $this->assertSame(3, $exit, $err);
        $this->assertStringContainsString('more than memory_limit leaves (php -d memory_limit=', $err);
        [, $err, $exit] = $run("$app/routes.php", '1G');
        $this->assertSame([0, ''], [$exit, $err]);

        // A path that is no directory or file, and one that cannot be read: one line, exit 1.
        posix_mkfifo("$app/fifo", 0644);
        foreach (['/dev/null' => "is neither a directory nor a file", "$app/fifo" => 'is neither a directory nor a file',
            "$app/storage" => 'cannot read'] as $path => $said) {
            [$out, $err, $exit] = $run($path);
            $this->assertSame(1, $exit, $path);
            $this->assertSame('', $out);
            $this->assertStringStartsWith('redislock: doctor: ', $err);
            $this->assertStringContainsString($said, $err);
            $this->assertSame(1, substr_count($err, "\n"), $err);
        }
    }

    public function testFixWritesTheSwapAndSaysWhatIsLeft(): void
    {
        $bin = dirname(__DIR__) . '/bin/redislock';
        $dir = sys_get_temp_dir() . '/redislock-doctor-fix-' . getmypid();
        self::$copies[] = $dir;
        foreach (['service-renamed', 'trait-parent', 'service-host', 'seed-together'] as $app) {
            exec('mkdir -p ' . escapeshellarg($dir) . ' && cp -r ' . escapeshellarg(self::app($app)) . ' ' . escapeshellarg("$dir/$app"));
        }
        $fix = function () use ($bin, $dir): array {
            exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', ...self::tokenizer(), $bin, 'doctor', '--fix', $dir])) . ' 2>&1', $out, $exit);
            return [implode("\n", $out), $exit];
        };
        $renamed = "$dir/service-renamed/src/common/service/RedisLock.php";
        $original = file_get_contents($renamed);
        $this->redis->flushAll();
        $before = $this->runApp("$dir/service-renamed", false, []);
        [$out, $exit] = $fix();
        $this->assertSame(4, $exit, $out);
        $this->assertStringContainsString("rewrote app\\common\\service\\RedisLock in $renamed", $out);
        $this->assertStringContainsString("rewrote App\\Cache\\TRedisLock", $out);
        $this->assertStringContainsString("took Lock_Service out of $dir/service-host/Lock_Service.php", $out);
        foreach (['Lock_Service', 'RedisLock', 'RedisQueue'] as $class) {
            $this->assertStringContainsString("Shop\\Infra\\$class in $dir/seed-together/lib/Locking.php", $out);
        }
        $together = file_get_contents("$dir/seed-together/lib/Locking.php");
        $this->assertSame(3, preg_match_all('/^class (Lock_Service|RedisLock|RedisQueue)\b/m', $together), 'the three classes are still there');
        $this->assertSame($original, file_get_contents("$renamed.orig"), 'the copy kept beside');
        $this->assertStringContainsString(Doctor::HEADER, file_get_contents($renamed));
        $this->assertStringContainsString('$id = \\RedisLock\\DropIn\\Lock_Service::addLock($orderId, $expire);', file_get_contents($renamed));
        $this->assertStringContainsString('if (empty($orderId)) {', file_get_contents($renamed), 'what is not Redis work stays');
        $ini = file_get_contents("$dir/redislock-doctor.ini");
        $this->assertStringContainsString('redislock.connections = "lock_service=redis://127.0.0.1:' . RedisServer::$main->port . '"', $ini);
        $this->assertStringContainsString("; TODO: php.ini: redislock.connections = \"lock_service=redis://10.20.30.40:PORT\"", $ini);
        $this->assertStringContainsString('left for a human', $out);
        foreach (glob("$dir/*/{,*/,*/*/*/}*.php", GLOB_BRACE) as $php) {
            exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', '-l', $php])), $lint, $ok);
            $this->assertSame(0, $ok, "$php: " . implode("\n", $lint));
        }
        // The app runs on the extension with the INI file as written: the same transcript.
        $this->redis->flushAll();
        $this->assertSame($before, $this->runApp("$dir/service-renamed", true, parse_ini_file("$dir/redislock-doctor.ini")));
        // Again: nothing changes, and the TODO is still left.
        $files = array_map("md5_file", array_filter(glob("$dir/*/{,*/,*/*/*/}*", GLOB_BRACE), "is_file"));
        [$out, $exit] = $fix();
        $this->assertSame([4, $files], [$exit, array_map("md5_file", array_filter(glob("$dir/*/{,*/,*/*/*/}*", GLOB_BRACE), "is_file"))], $out);
        $this->assertStringContainsString('nothing to change', $out);
        // Done by hand: nothing is left.
        file_put_contents("$dir/redislock-doctor.ini", preg_replace('/^; TODO: .*\n/m', '', $ini));
        [$out, $exit] = $fix();
        $this->assertSame(0, $exit, $out);
    }

    public function testDiffShowsTheFixAsAPatchAndChangesNothing(): void
    {
        $bin = dirname(__DIR__) . '/bin/redislock';
        $dir = self::app('service-renamed');
        $file = "$dir/src/common/service/RedisLock.php";
        $copy = file_get_contents($file);
        // And a file of three copies beside it: one patch per file.
        exec('cp -r ' . escapeshellarg(self::app('seed-together') . '/lib') . ' ' . escapeshellarg("$dir/lib"));
        $run = function (string ...$args) use ($bin, $dir): array {
            $p = proc_open([PHP_BINARY, '-n', ...self::tokenizer(), $bin, 'doctor', ...$args, $dir], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            return [$out, $err, proc_close($p)];
        };
        [$patch, $err, $exit] = $run('--diff');
        $this->assertSame([0, ''], [$exit, $err]);
        $this->assertStringContainsString("+++ b/src/common/service/RedisLock.php\n", $patch);
        $this->assertStringContainsString('+        $id = \\RedisLock\\DropIn\\Lock_Service::addLock($orderId, $expire);', $patch);
        $this->assertStringContainsString("+++ b/redislock-doctor.ini\n", $patch);
        $this->assertSame(1, substr_count($patch, "+++ b/lib/Locking.php\n"), 'the three copies of one file in one patch');
        $this->assertSame(3, substr_count($patch, "\n+++ "), 'a patch per file');
        $this->assertSame($copy, file_get_contents($file), 'nothing changed');
        $this->assertFileDoesNotExist("$file.orig");
        $this->assertFileDoesNotExist("$dir/redislock-doctor.ini");
        if (trim((string) shell_exec('command -v patch')) === '') {
            $this->markTestIncomplete('patch(1) is not installed: the patch was not applied');
        }
        $p = proc_open(['patch', '-p1', '-s'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $dir);
        fwrite($pipes[0], $patch);
        fclose($pipes[0]);
        $said = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        $this->assertSame(0, proc_close($p), $said);
        [$out, , $exit] = $run('--fix');
        $this->assertSame([0, "nothing to change\n"], [$exit, $out], 'applied, the patch is the fix');
    }
}
