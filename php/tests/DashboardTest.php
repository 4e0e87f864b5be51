<?php

use RedisLock\Client;

/**
 * The dashboard page in a real browser (headless Debian Chromium over
 * WebDriver), served by `php -S` with the extension: it renders a seeded
 * state, its retry and purge buttons work, a forged or signed-out POST
 * changes nothing, and its screenshot shows the page with its charts.
 */
final class DashboardTest extends RedisLockTestCase
{
    private const PASSWORD = 'correct horse';
    private const SCREENSHOTS = __DIR__ . '/../../target/screenshots';

    private static ?array $server = null;
    private static string $url;
    private static string $sessions;
    private array $children = [];

    /** Starts `php -S` on php/web; returns its base URL. */
    private static function serve(string $password, bool $extension = true, ?string $redis = null, array $env = []): string
    {
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        self::$sessions = sys_get_temp_dir() . '/redislock-sessions-' . getmypid();
        @mkdir(self::$sessions);
        $port = RedisServer::freePort();
        $proc = proc_open(
            [PHP_BINARY, '-n', ...($extension ? ['-d', "extension=$so"] : []), '-d', 'session.save_path=' . self::$sessions,
                '-S', "127.0.0.1:$port", '-t', dirname(__DIR__) . '/web'],
            [1 => ['file', '/dev/null', 'w'], 2 => ['file', self::$sessions . '/log', 'w']],
            $pipes,
            null,
            ['REDISLOCK_URL' => $redis ?? RedisServer::$main->dsn(), 'REDISLOCK_DASHBOARD_PASSWORD' => $password] + $env,
        );
        $url = "http://127.0.0.1:$port/";
        $deadline = microtime(true) + 10;
        while (@file_get_contents($url, false, stream_context_create(['http' => ['ignore_errors' => true]])) === false) {
            self::assertLessThan($deadline, microtime(true), 'php -S did not start');
            usleep(50000);
        }
        self::$server = [$proc, $url];
        return $url;
    }

    private static function stop(): void
    {
        if (self::$server !== null) {
            proc_terminate(self::$server[0]);
            proc_close(self::$server[0]);
            self::$server = null;
            exec('rm -rf ' . escapeshellarg(self::$sessions));
        }
    }

    protected function tearDown(): void
    {
        self::stop();
        foreach ($this->children as $child) {
            proc_terminate($child[0], SIGKILL);
            self::finish($child);
        }
    }

    /** A POST outside the browser: [status line, body]. */
    /**
     * docs/operating.md's nginx block, as written (its path and socket put
     * in), inside a site with Debian's usual `location ~ \.php$`: the
     * dashboard answers at /redislock/ and /redislock/index.php, and the
     * metrics at /redislock/metrics.php, through php-fpm. The block of the
     * earlier docs lost to the site's PHP location ("File not found.").
     */
    public function testTheDocsNginxBlockServesTheDashboardInASiteWithAPhpLocation(): void
    {
        $nginx = '/usr/sbin/nginx';
        if (!is_executable($nginx)) {
            $this->markTestSkipped('nginx (nginx-light) is installed by make test');
        }
        $docs = file_get_contents(dirname(__DIR__, 2) . '/docs/operating.md');
        $this->assertSame(1, preg_match('/```nginx\n(.*?)```/s', $docs, $m), 'the block');
        $fpm = new FpmPool([], ['env[REDISLOCK_DASHBOARD_PASSWORD]' => 'a long random password',
            'env[REDISLOCK_URL]' => RedisServer::$main->dsn()], ['session.save_path' => sys_get_temp_dir()]);
        $dir = $fpm->dir;
        try {
            $this->assertTrue($fpm->started(), 'php-fpm started');
            $block = strtr($m[1], [
                '/path/to/redislock/php/web/' => dirname(__DIR__) . '/web/',
                'unix:/run/php/php8.2-fpm.sock' => "unix:$dir/fpm.sock",
            ]);
            $port = RedisServer::freePort();
            // The site's includes resolve as under /etc/nginx.
            foreach (['snippets', 'fastcgi_params', 'fastcgi.conf', 'mime.types'] as $file) {
                symlink("/etc/nginx/$file", "$dir/$file");
            }
            mkdir("$dir/www");
            file_put_contents("$dir/www/index.html", 'the site');
            $user = posix_getuid() === 0 ? 'user root;' : '';
            file_put_contents("$dir/nginx.conf", <<<CONF
                $user
                daemon off;
                pid $dir/nginx.pid;
                error_log $dir/nginx-error.log;
                events {}
                http {
                    include mime.types;
                    access_log off;
                    client_body_temp_path $dir/client;
                    fastcgi_temp_path $dir/fastcgi;
                    proxy_temp_path $dir/proxy;
                    server {
                        listen 127.0.0.1:$port;
                        root $dir/www;
                        index index.php index.html;
                        # A site's usual PHP location (Debian's default site).
                        location ~ \.php$ {
                            include snippets/fastcgi-php.conf;
                            fastcgi_pass unix:$dir/fpm.sock;
                        }
                        $block
                    }
                }
                CONF);
            $proc = proc_open([$nginx, '-p', $dir, '-c', "$dir/nginx.conf"], [1 => ['file', '/dev/null', 'w'], 2 => ['file', "$dir/nginx.out", 'w']], $pipes);
            try {
                $get = function (string $path) use ($port): array {
                    $deadline = microtime(true) + 10;
                    do {
                        $body = @file_get_contents("http://127.0.0.1:$port$path", false, stream_context_create(['http' => ['ignore_errors' => true]]));
                    } while ($body === false && microtime(true) < $deadline && usleep(50000) === null);
                    return [(int) substr($http_response_header[0] ?? 'HTTP/1.1 0', 9, 3), (string) $body];
                };
                $this->assertSame([200, 'the site'], $get('/'), @file_get_contents("$dir/nginx.out") . @file_get_contents("$dir/nginx-error.log") . file_get_contents("$dir/nginx.conf"));
                foreach (['/redislock/', '/redislock/index.php'] as $path) {
                    [$status, $body] = $get($path);
                    $this->assertSame(200, $status, "$path: $body");
                    $this->assertStringContainsString('id="password"', $body, $path);
                }
                [$status, $body] = $get('/redislock/metrics.php');
                $this->assertSame(200, $status, $body);
                $this->assertStringContainsString('# TYPE redislock_queue_tasks gauge', $body);
            } finally {
                proc_terminate($proc);
                proc_close($proc);
            }
        } finally {
            $fpm->stop();
        }
    }

    private static function post(string $url, array $fields, string $cookie = ''): array
    {
        $body = @file_get_contents($url, false, stream_context_create(['http' => [
            'method' => 'POST',
            'header' => "Content-Type: application/x-www-form-urlencoded\r\n" . ($cookie === '' ? '' : "Cookie: $cookie\r\n"),
            'content' => http_build_query($fields),
            'ignore_errors' => true,
            'follow_location' => 0,
        ]]));
        return [$http_response_header[0] ?? '', (string) $body, $http_response_header ?? []];
    }

    private function seed(): Client
    {
        $c = new Client();
        // Reserved by a process of its own: this one notes itself as a
        // queue's worker at most every 5 s, and an earlier test's note on
        // `mail` would hide this one.
        $this->assertSame('ok', self::php('$mail = (new RedisLock\Client())->queue("mail", ["maxAttempts" => 1]);
            for ($i = 0; $i < 30; $i++) { $mail->enqueue("m$i", "payload $i"); }
            foreach ($mail->reserve(20) as $t) { $mail->ack($t); }
            foreach ($mail->reserve(3) as $i => $t) { $mail->nack($t, 0, $i === 0 ? "RuntimeException: smtp down <b>" : null); }
            echo "ok";'));
        $mail = $c->queue('mail', ['maxAttempts' => 1]);
        $mail->enqueue('later', null, 600);
        $c->queue('reports')->enqueueMany(['a' => null, 'b' => null]);
        $c->queue('reports')->pause();
        $this->children[] = $holder = self::start('$l = (new RedisLock\Client())->lock("nightly", ["ttl" => 300]); $l->acquire(); echo getmypid(), "\n"; sleep(60);');
        $this->assertSame((string) $holder[2], trim(fgets($holder[1][1])));
        $this->children[] = self::start('$l = (new RedisLock\Client())->lock("nightly"); $l->acquire(60); sleep(60);');
        $this->lineReaches('lock:{nightly}:line', 1);
        // A worker running one task of mail.
        $this->children[] = $worker = self::start('[$t] = (new RedisLock\Client())->queue("mail")->reserve(1, 300); echo $t->id(), "\n"; sleep(60);');
        $this->assertSame("m23\n", fgets($worker[1][1]));
        return $c;
    }

    public function testTheDashboardShowsTheSeededStateAndItsActionsWork(): void
    {
        if (getenv('REDISLOCK_BROWSER') === '0') {
            $this->markTestSkipped('REDISLOCK_BROWSER=0: no browser here (tools/chroot.sh sets it: chromedriver cannot reach Chromium\'s renderer in the chroot)');
        }
        $c = $this->seed();
        $url = self::serve(self::PASSWORD);
        $browser = new Browser();

        $browser->visit($url);
        $this->assertSame('Sign in · redislock', $browser->title());
        $this->assertSame([], $browser->all('#queues'), 'nothing shown before signing in');
        $browser->type('#password', 'wrong');
        $browser->click('#sign-in');
        $this->assertSame('Wrong password.', $browser->text('#flash'));
        $browser->type('#password', self::PASSWORD);
        $browser->click('#sign-in');
        $this->assertSame('redislock · redislock', $browser->title());
        $this->assertSame('127.0.0.1:' . RedisServer::$main->port, $browser->text('header span'), 'which Redis: host and port');

        // The queues: counts as seeded, and a chart with bars.
        $row = fn (string $queue, string $cell) => $browser->text("#queues tr[data-queue=\"$queue\"] td.$cell");
        $this->assertSame(['6', '1', '1', '3'], [$row('mail', 'ready'), $row('mail', 'delayed'), $row('mail', 'leased'), $row('mail', 'dead')]);
        $this->assertSame(['2', '0', '0', '0'], [$row('reports', 'ready'), $row('reports', 'delayed'), $row('reports', 'leased'), $row('reports', 'dead')]);
        // Failed per minute: the dead letters of the last minute's whole
        // periods of 10 s, as the CLI's FAILED/MIN (40 written two periods
        // ago; the seed's 3 count too once their period is whole).
        $this->assertSame('0', $row('reports', 'failed'));
        $period = intdiv((int) $this->redis->rawCommand('TIME')[0], 10) - 2;
        $this->redis->hIncrBy('{Queue:mail}:stats', "dead:$period", 40);
        $browser->visit($url);
        $this->assertContains($row('mail', 'failed'), ['40', '43']);
        $this->assertCount(1, $browser->all('#queues tr[data-queue="mail"] td.failed.alert'), 'shown as an alert');
        $this->assertSame([], $browser->all('#queues tr[data-queue="reports"] td.failed.alert'));
        $this->assertNotEmpty($browser->all('#queues tr[data-queue="mail"] svg rect.in'), 'enqueued bars');
        $this->assertNotEmpty($browser->all('#queues tr[data-queue="mail"] svg rect.done'), 'acked bars');
        $this->assertSame(3, count($browser->all('#queues tr[data-queue="mail"] svg text')), 'a time axis');
        $this->assertMatchesRegularExpression('/^\d\d:\d\d$/', $browser->texts('#queues tr[data-queue="mail"] svg text')[2]);

        // The task running, and its worker.
        $worker = $this->children[2][2];
        $this->assertStringContainsString("pid $worker", $browser->text('#running tr[data-task="m23"] td.worker'));
        // A lease that ran out is not shown as running: apart, until the next reserve takes it back.
        $short = $c->queue('short');
        $short->enqueue('s1');
        $this->assertCount(1, $short->reserve(1, 0.2));
        usleep(400000);
        $browser->visit($url);
        $this->assertSame([], $browser->all('#running tr[data-task="s1"]'));
        $this->assertMatchesRegularExpression('/^expired \d+\.\ds ago$/', $browser->text('#overdue tr[data-task="s1"] td.expired'));
        $this->assertNotEmpty($browser->all('#running tr[data-task="m23"]'), 'what runs is still listed');
        $short->clear();
        // (The seed's own process reserved and acked its tasks: mail's other worker.)
        $workers = array_combine($browser->texts('#workers tr[data-queue="mail"] td.worker'), $browser->texts('#workers tr[data-queue="mail"] td.done'));
        $this->assertSame(['0'], array_values(array_filter($workers, fn ($w) => str_ends_with($w, "pid $worker"), ARRAY_FILTER_USE_KEY)));
        // Workers unseen for 20 minutes: said plainly; gone unless running a task (the child runs m23).
        [$now] = $this->redis->time();
        foreach ($this->redis->zRange('{Queue:mail}:workers', 0, -1) as $id) {
            $this->redis->zAdd('{Queue:mail}:workers', $now - 1200, $id);
        }
        $browser->visit($url);
        foreach ($browser->texts('#workers tr[data-queue="mail"] td.seen') as $seen) {
            $this->assertMatchesRegularExpression('/^not seen for 120\d s( gone)?$/', $seen);
        }
        $this->assertGreaterThan(1, count($browser->all('#workers tr[data-queue="mail"]')));
        $this->assertSame(count($browser->all('#workers tr[data-queue="mail"]')) - 1, count($browser->all('#workers tr.gone[data-queue="mail"]')), 'all but the one running m23');

        // The lock, its holder and its waiter.
        $this->assertSame('1', $browser->text('#locks tr[data-lock="nightly"] td.waiting'));
        $this->assertStringContainsString('pid ' . $this->children[0][2], $browser->text('#locks tr[data-lock="nightly"] td.holder'));

        // Dead letters, newest state after each action.
        $this->assertCount(3, $browser->all('section.dead[data-queue="mail"] tr[data-task]'));
        $this->assertSame('RuntimeException: smtp down <b>', $browser->text('section.dead tr[data-task="m20"] td.reason'), 'why it died, escaped');
        $this->assertSame('–', $browser->text('section.dead tr[data-task="m21"] td.reason'));
        $shot = $browser->screenshot(self::SCREENSHOTS . '/dashboard.png');
        $this->assertScreenshotShowsThePage($shot);

        $browser->click('section.dead tr[data-task="m20"] button.retry');
        $this->assertSame("1 dead letter 'm20' of queue 'mail' retried.", $browser->text('#flash'));
        $this->assertSame('queued', $c->queue('mail')->find('m20')['state']);
        $this->assertSame('2', $row('mail', 'dead'));
        // Purging all asks first, as the CLI does; Cancel changes nothing.
        $browser->click('section.dead[data-queue="mail"] button.purge-all');
        $this->assertSame("Purge all 2 dead letter(s) of queue 'mail', with their payloads, for good?", $browser->text('#question'));
        $this->assertSame(2, $c->queue('mail')->metrics()['dead']);
        $browser->click('#cancel');
        $this->assertSame('2', $row('mail', 'dead'));
        $browser->click('section.dead[data-queue="mail"] button.purge-all');
        $browser->click('button.confirm');
        $this->assertSame("2 dead letter(s) of queue 'mail' purged.", $browser->text('#flash'));
        $this->assertSame(0, $c->queue('mail')->metrics()['dead']);
        $this->assertSame('No dead letters.', $browser->text('#no-dead'));
        $browser->screenshot(self::SCREENSHOTS . '/dashboard-after-purge.png');

        // Force unlock asks first, then hands the lock to its waiter.
        $holder = $c->lockState('nightly')['holder']['pid'];
        $browser->click('#locks tr[data-lock="nightly"] button.unlock');
        $this->assertSame("Force unlock lock lock 'nightly', whoever holds it? The next waiter in line gets it.", $browser->text('#question'));
        $browser->click('#cancel');
        $this->assertSame($holder, $c->lockState('nightly')['holder']['pid'], 'cancelled');
        $browser->click('#locks tr[data-lock="nightly"] button.unlock');
        $browser->click('button.confirm');
        $this->assertSame("Lock 'nightly' freed.", $browser->text('#flash'));
        $deadline = microtime(true) + 5;
        while (($c->lockState('nightly')['holder']['pid'] ?? $holder) === $holder && microtime(true) < $deadline) {
            usleep(20000);
        }
        $this->assertSame($this->children[1][2], $c->lockState('nightly')['holder']['pid'], 'the waiter has it');

        // A queue's page lists its waiting tasks; a task's page shows it whole; Remove asks first.
        $c->queue('mail')->enqueue('big', '<script>' . str_repeat('y', 200) . '</script>');
        $browser->visit($url . '?queue=mail');
        $this->assertSame('Queue mail · redislock', $browser->title());
        $this->assertMatchesRegularExpression('/^\d+ ready, 1 delayed, 1 running, 0 dead\.$/', $browser->text('#counts'));
        $this->assertContains('big', $browser->texts('#tasks td:first-child'));
        $browser->click('#tasks tr[data-task="big"] a');
        $this->assertSame('<script>' . str_repeat('y', 200) . '</script>', $browser->text('#payload'), 'whole, escaped');
        $this->assertSame('queued', $browser->text('#task td.state'));
        $browser->click('button.remove');
        $this->assertSame("Remove task 'big' waiting in queue 'mail', for good?", $browser->text('#question'));
        $browser->click('#cancel');
        $this->assertSame('Queue mail · redislock', $browser->title(), 'back to the queue');
        $this->assertSame('queued', $c->queue('mail')->find('big')['state']);
        $browser->click('#tasks tr[data-task="big"] button.remove');
        $browser->click('button.confirm');
        $this->assertSame("Task 'big' removed from queue 'mail'.", $browser->text('#flash'));
        $this->assertSame('Queue mail · redislock', $browser->title());
        $this->assertNull($c->queue('mail')->find('big'));
        $browser->visit($url . '?queue=nope');
        $this->assertSame("No queue 'nope'.", substr($browser->text('#flash'), 0, 16));
        $browser->visit($url);

        // Pause, resume and clear ask first too, and the state shows.
        $this->assertSame('paused', $browser->text('#queues tr[data-queue="reports"] span.state'));
        $this->assertSame([], $browser->all('#queues tr[data-queue="mail"] span.state'));
        $browser->click('#queues tr[data-queue="reports"] button.resume');
        $this->assertSame("Resume queue 'reports'? Its workers take tasks again.", $browser->text('#question'));
        $browser->click('#cancel');
        $this->assertNotNull($c->queue('reports')->metrics()['paused'], 'cancelled');
        $browser->click('#queues tr[data-queue="reports"] button.resume');
        $browser->click('button.confirm');
        $this->assertSame("Queue 'reports' resumed.", $browser->text('#flash'));
        $this->assertNull($c->queue('reports')->metrics()['paused']);
        $this->assertSame([], $browser->all('#queues tr[data-queue="reports"] span.state'));
        $browser->click('#queues tr[data-queue="mail"] button.pause');
        $this->assertSame("Pause queue 'mail'? Its workers take no new tasks until it is resumed; running tasks finish.", $browser->text('#question'));
        $browser->click('button.confirm');
        $this->assertSame("Queue 'mail' paused.", $browser->text('#flash'));
        $this->assertSame([], $c->queue('mail')->reserve());
        $this->assertSame('paused', $browser->text('#queues tr[data-queue="mail"] span.state'));
        $browser->click('#queues tr[data-queue="reports"] button.clear');
        $this->assertSame("Clear queue 'reports': remove all 2 waiting task(s), for good? Running tasks finish; dead letters stay.", $browser->text('#question'));
        $browser->click('#cancel');
        $this->assertSame('2', $row('reports', 'ready'));
        $browser->click('#queues tr[data-queue="reports"] button.clear');
        $browser->click('button.confirm');
        $this->assertSame("2 task(s) removed from queue 'reports'.", $browser->text('#flash'));
        $this->assertSame('0', $row('reports', 'ready'));
        $this->assertTrue($c->queue('mail')->resume());

        // A POST without the session's CSRF token changes nothing, even
        // with the signed-in session's cookie.
        $mail = $c->queue('mail', ['maxAttempts' => 1]);
        $mail->enqueue('x');
        foreach ($mail->reserve(10) as $t) {
            $mail->nack($t);
        }
        $dead = $c->queue('mail')->metrics()['dead'];
        $this->assertGreaterThan(0, $dead);
        $cookie = 'redislock_dashboard=' . $browser->cookie('redislock_dashboard');
        foreach (['', 'forged', str_repeat('0', 64)] as $token) {
            [$status, $body] = self::post($url, ['csrf' => $token, 'action' => 'purge', 'queue' => 'mail'], $cookie);
            $this->assertStringContainsString('403', $status);
            $this->assertStringContainsString('CSRF token mismatch', $body);
        }
        $this->assertSame($dead, $c->queue('mail')->metrics()['dead']);

        // Signed out, a POST with a valid token of its own session changes
        // nothing either.
        $browser->click('button.logout');
        $this->assertSame('Sign in · redislock', $browser->title());
        $page = file_get_contents($url);
        $fresh = implode('; ', array_map(fn ($h) => explode(';', substr($h, 12))[0], preg_grep('/^Set-Cookie: /i', $http_response_header)));
        $this->assertSame(1, preg_match('/name="csrf" value="([0-9a-f]{64})"/', $page, $m));
        [$status] = self::post($url, ['csrf' => $m[1], 'action' => 'purge', 'queue' => 'mail'], $fresh);
        $this->assertStringContainsString('200', $status, 'the sign-in page again');
        $this->assertSame($dead, $c->queue('mail')->metrics()['dead']);
    }

    public function testWithoutAPasswordTheDashboardStaysShut(): void
    {
        $this->seed();
        $url = self::serve('');
        $body = @file_get_contents($url, false, stream_context_create(['http' => ['ignore_errors' => true]]));
        $this->assertStringContainsString('503', $http_response_header[0]);
        $this->assertStringContainsString('REDISLOCK_DASHBOARD_PASSWORD', $body);
        $this->assertStringNotContainsString('mail', $body);
        [$status] = self::post($url, ['action' => 'purge', 'queue' => 'mail']);
        $this->assertStringContainsString('503', $status);
        $this->assertSame(3, (new Client())->queue('mail')->metrics()['dead']);
    }

    public function testTheHeaderSaysWhichRedisNeverItsPassword(): void
    {
        $port = RedisServer::$main->port;
        $url = self::serve(self::PASSWORD, true, "redis://app:s3cret@127.0.0.1:$port/3?prefix=app:&timeout=1");
        $page = file_get_contents($url);
        $this->assertStringContainsString("<span>127.0.0.1:$port db 3 prefix app:</span>", $page);
        $this->assertStringNotContainsString('s3cret', $page);
    }

    /** A signed-out session's cookie and CSRF token, read from the sign-in page. */
    private static function session(string $url, array $headers = []): array
    {
        $page = file_get_contents($url, false, stream_context_create(['http' => ['header' => implode("\r\n", $headers), 'ignore_errors' => true]]));
        $cookies = preg_grep('/^Set-Cookie: /i', $http_response_header);
        preg_match('/name="csrf" value="([0-9a-f]{64})"/', $page, $m);
        return [explode(';', substr(reset($cookies), 12))[0], $m[1], reset($cookies)];
    }

    public function testWrongPasswordsAreThrottledAndLogged(): void
    {
        $url = self::serve(self::PASSWORD);
        [$cookie, $csrf] = self::session($url);
        $answers = [];
        for ($i = 0; $i < 7; $i++) {
            [$status, $body] = self::post($url, ['csrf' => $csrf, 'action' => 'login', 'password' => "guess $i"], $cookie);
            $answers[] = (int) explode(' ', $status)[1];
        }
        $this->assertSame([303, 303, 303, 303, 303, 429, 429], $answers);
        $this->assertStringContainsString('Too many wrong passwords from this address: try again in', $body);
        // Refused while throttled, even with the right password.
        [$status] = self::post($url, ['csrf' => $csrf, 'action' => 'login', 'password' => self::PASSWORD], $cookie);
        $this->assertStringContainsString('429', $status);
        $log = file_get_contents(self::$sessions . '/log');
        $this->assertSame(5, substr_count($log, 'redislock dashboard: wrong password from 127.0.0.1'));
        $this->assertSame(3, substr_count($log, 'redislock dashboard: sign-in from 127.0.0.1 refused'));
        $this->assertStringNotContainsString('guess', $log, 'no password in the log');
    }

    public function testArrayParametersAreBadRequestsAndAnArrayTokenIsRefused(): void
    {
        $url = self::serve(self::PASSWORD);
        [$cookie, $csrf] = self::session($url);
        [$status, $body] = self::post($url, ['csrf' => [$csrf], 'action' => 'login', 'password' => self::PASSWORD], $cookie);
        $this->assertStringContainsString('403', $status);
        $this->assertStringContainsString('CSRF token mismatch', $body);
        [$status, $body] = self::post($url, ['csrf' => $csrf, 'action' => ['login'], 'password' => self::PASSWORD], $cookie);
        $this->assertStringContainsString('400', $status);
        $this->assertStringContainsString('The parameter &#039;action&#039; is a list', $body);
        $body = file_get_contents($url . '?queue[]=mail&task=x', false, stream_context_create(['http' => ['header' => "Cookie: $cookie", 'ignore_errors' => true]]));
        $this->assertStringContainsString('400', $http_response_header[0]);
        foreach ([$body, file_get_contents(self::$sessions . '/log')] as $said) {
            $this->assertStringNotContainsString('Warning', $said);
            $this->assertStringNotContainsString(dirname(__DIR__), $said, 'no path of the server');
        }
        // Still signed out: the array password signed nobody in.
        $this->assertStringContainsString('Sign in', (string) file_get_contents($url, false, stream_context_create(['http' => ['header' => "Cookie: $cookie"]])));
    }

    /** A parent of a workflow waits for its children: its page says how many, and each one's state. */
    public function testAWaitingParentsPageSaysHowManyChildrenItWaitsFor(): void
    {
        (new Client())->queue('reports')->enqueue('r1', null, children: [['queue' => 'pages', 'id' => 'p1'], ['queue' => 'pages', 'id' => '<p2>']]);
        $pages = (new Client())->queue('pages');
        foreach ($pages->reserve(2) as $task) {
            if ($task->id() === 'p1') {
                $pages->ack($task);
            }
        }
        $url = self::serve(self::PASSWORD);
        [$cookie, $csrf] = self::session($url);
        [, , $headers] = self::post($url, ['csrf' => $csrf, 'action' => 'login', 'password' => self::PASSWORD], $cookie);
        $cookie = explode(';', substr(array_values(preg_grep('/^Set-Cookie: /i', $headers))[0], 12))[0];
        $page = (string) file_get_contents($url . '?queue=reports&task=r1', false, stream_context_create(['http' => ['header' => "Cookie: $cookie", 'ignore_errors' => true]]));
        $this->assertStringContainsString('200', $http_response_header[0], $page);
        $this->assertStringContainsString('<td class="state">waiting</td>', $page);
        $this->assertStringContainsString('<th>Waits for</th><td><span id="children">1</span> child(ren) not ended</td>', $page);
        $this->assertStringContainsString('<tr><td class="child">pages/p1</td><td class="state">acked</td></tr>'
            . '<tr><td class="child">pages/&lt;p2&gt;</td><td class="state">waiting</td></tr>', $page, 'each child, its name escaped');
    }

    public function testTheSessionCookieIsSecureBehindHttps(): void
    {
        $url = self::serve(self::PASSWORD);
        [, , $plain] = self::session($url);
        [, , $proxied] = self::session($url, ['X-Forwarded-Proto: https']);
        $this->assertStringNotContainsStringIgnoringCase('; secure', $plain);
        $this->assertStringContainsStringIgnoringCase('; secure', $proxied);
        $this->assertStringContainsStringIgnoringCase('; httponly', $proxied);
    }

    public function testWithoutTheExtensionTheSignedInPageSaysSo(): void
    {
        $url = self::serve(self::PASSWORD, false);
        [$cookie, $csrf] = self::session($url);
        [$status, , $headers] = self::post($url, ['csrf' => $csrf, 'action' => 'login', 'password' => self::PASSWORD], $cookie);
        $this->assertStringContainsString('303', $status);
        // The sign-in gave the session a new id.
        $signedIn = explode(';', substr(array_values(preg_grep('/^Set-Cookie: /i', $headers))[0], 12))[0];
        $page = @file_get_contents($url, false, stream_context_create(['http' => ['ignore_errors' => true, 'header' => "Cookie: $signedIn"]]));
        $this->assertStringContainsString('503', $http_response_header[0]);
        $this->assertStringContainsString('The redislock extension is not loaded in the PHP that serves this page', $page);
    }

    /**
     * A framework job is named (Laravel's displayName) under its id in the
     * queue's, the tag search's, the dead letters' and the running lists,
     * and on its own page; a plain payload has no name.
     */
    public function testFrameworkJobsAreShownByTheirNames(): void
    {
        $job = fn (string $name) => json_encode(['uuid' => 'u', 'displayName' => $name, 'job' => 'Illuminate\\Queue\\CallQueuedHandler@call', 'data' => []]);
        $q = (new Client())->queue('jobs', ['maxAttempts' => 1]);
        $q->enqueue('dead-1', $job('App\\Jobs\\Refund'));
        $q->enqueue('run-1', $job('App\\Jobs\\Report'), 0.5);
        // Reserved by a process of its own: this one's worker notes are
        // rate-limited, and other tests count them.
        $this->assertSame('ok', self::php('$q = (new RedisLock\Client())->queue("jobs", ["maxAttempts" => 1]);
            [$t] = $q->reserve(1); $q->nack($t, 0, "boom"); usleep(600000); $q->reserve(1); echo "ok";'));
        $q->enqueue('j1', $job('App\\Jobs\\SendMail'), 0, null, ['t1']);
        $q->enqueue('p1', 'plain', 0, null, ['t1']);
        $url = self::serve(self::PASSWORD);
        [$cookie, $csrf] = self::session($url);
        [, , $headers] = self::post($url, ['csrf' => $csrf, 'action' => 'login', 'password' => self::PASSWORD], $cookie);
        $cookie = explode(';', substr(array_values(preg_grep('/^Set-Cookie: /i', $headers))[0], 12))[0];
        $get = fn (array $query) => file_get_contents($url . '?' . http_build_query($query), false, stream_context_create(['http' => ['header' => "Cookie: $cookie"]]));
        $overview = $get([]);
        $this->assertStringNotContainsString('other-prefixes', $overview);
        (new Client(['prefix' => 'laravel_database_']))->queue('queues:default')->enqueue('l1');
        $overview = $get([]);
        $this->assertStringContainsString('<tr data-prefix="laravel_database_"><td><code>laravel_database_</code></td><td>queues:default</td><td class="n ready">1</td>', $overview, 'another prefix\'s queue');
        $this->assertStringContainsString('<small class="job">App\\Jobs\\Refund</small>', $overview, 'a dead letter');
        $this->assertStringContainsString('<small class="job">App\\Jobs\\Report</small>', $overview, 'a running task');
        $queue = $get(['queue' => 'jobs']);
        $this->assertMatchesRegularExpression('~<p id="recent-footprint">Kept: 1 of the last 100 for 3600 s, [\d.]+ kB \(<code>redislock keep-recent jobs COUNT SECONDS \[BYTES\]</code> sets them\).</p>~', $queue, 'the dead letter\'s attempt');
        $this->assertStringContainsString('<small class="job">App\\Jobs\\SendMail</small>', $queue);
        $this->assertSame(1, substr_count($queue, '<small class="job">'), 'the plain payload has no name');
        $this->assertStringContainsString('<small class="job">App\\Jobs\\SendMail</small>', $get(['queue' => 'jobs', 'tag' => 't1']));
        $this->assertStringContainsString('<tr><th>Job</th><td class="job">App\\Jobs\\SendMail</td></tr>', $get(['queue' => 'jobs', 'task' => 'j1']));
        $this->assertStringNotContainsString('<th>Job</th>', $get(['queue' => 'jobs', 'task' => 'p1']));
        // A search by job name, by the class or its short name, over the
        // queued, running and dead tasks.
        $this->assertStringContainsString('id="find-job"', $queue);
        foreach (['App\\Jobs\\Refund', 'Refund'] as $name) {
            $found = $get(['queue' => 'jobs', 'job' => $name]);
            $this->assertStringContainsString('<tr data-task="dead-1">', $found, $name);
            $this->assertSame(1, substr_count($found, '<tr data-task='), $name);
        }
        $this->assertStringContainsString('<tr data-task="run-1">', $get(['queue' => 'jobs', 'job' => 'Report']));
        $this->assertStringContainsString('id="no-tasks"', $get(['queue' => 'jobs', 'job' => 'Jobs\\Refund']), 'a class or its short name, not a part of it');
    }

    /**
     * The chart's scale is logarithmic: 10 acked beside a bulk enqueue of
     * 3,000 in the same period still draw a bar one can read (linear: 0.1
     * px), and a bigger count always stands higher.
     */
    public function testTheChartShowsSmallCountsBesideABulkEnqueue(): void
    {
        foreach (['Report', 'View', 'Dashboard'] as $class) {
            require_once dirname(__DIR__) . "/src/Operator/$class.php";
        }
        $chart = new ReflectionMethod(RedisLock\Operator\Dashboard::class, 'chart');
        $periods = [['at' => 1000, 'enqueued' => 3000, 'acked' => 10], ['at' => 1010, 'enqueued' => 0, 'acked' => 100]];
        $svg = $chart->invoke(null, $periods);
        preg_match_all('/<rect class="(\w+)" x="\d+" y="[\d.]+" width="2" height="([\d.]+)"><title>[^<]+: (\d+)<\/title>/', $svg, $m, PREG_SET_ORDER);
        $heights = [];
        foreach ($m as [, $class, $h, $n]) {
            $heights[$n] = (float) $h;
        }
        $this->assertSame(40.0, $heights[3000], 'the peak fills the chart');
        $this->assertGreaterThanOrEqual(10.0, $heights[10], 'readable');
        $this->assertGreaterThan($heights[10], $heights[100]);
        $this->assertStringContainsString('log scale', $svg);
    }

    /** A gone threshold set to no number of seconds is refused, not ignored. */
    public function testABadGoneThresholdIsSaidNotIgnored(): void
    {
        foreach (['soon', '0', '-5', 'INF'] as $bad) {
            $url = self::serve(self::PASSWORD, true, null, ['REDISLOCK_GONE_AFTER' => $bad]);
            $page = @file_get_contents($url, false, stream_context_create(['http' => ['ignore_errors' => true]]));
            $this->assertStringContainsString('500', $http_response_header[0], $bad);
            $this->assertSame("redislock dashboard: REDISLOCK_GONE_AFTER must be a number of seconds > 0, '$bad' given\n", $page);
            self::stop();
        }
        $url = self::serve(self::PASSWORD, true, null, ['REDISLOCK_GONE_AFTER' => '90']);
        @file_get_contents($url, false, stream_context_create(['http' => ['ignore_errors' => true]]));
        $this->assertStringContainsString('200', $http_response_header[0]);
    }

    /** metrics.php: the exposition, or a 503 that says why (a failed scrape). */
    public function testTheMetricsPageAnswersOrSaysWhyNot(): void
    {
        (new Client())->queue('mail')->enqueue('t');
        $get = function (string $url): array {
            $body = @file_get_contents($url . 'metrics.php', false, stream_context_create(['http' => ['ignore_errors' => true]]));
            return [$http_response_header[0], $body, implode("\n", $http_response_header)];
        };
        [$status, $body, $headers] = $get(self::serve(self::PASSWORD));
        $this->assertStringContainsString('200', $status);
        $this->assertStringContainsString('text/plain; version=0.0.4', $headers);
        $this->assertStringContainsString('redislock_queue_tasks{queue="mail",state="ready"} 1', $body);
        self::stop();
        $port = RedisServer::freePort();
        [$status, $body] = $get(self::serve(self::PASSWORD, true, "redis://127.0.0.1:$port"));
        $this->assertStringContainsString('503', $status);
        $this->assertStringStartsWith("redislock: Redis at 127.0.0.1:$port is unavailable", $body);
        self::stop();
        [$status, $body] = $get(self::serve(self::PASSWORD, false));
        $this->assertStringContainsString('503', $status);
        $this->assertSame("redislock: the redislock extension is not loaded in the PHP that serves this page\n", $body);
    }

    public function testNarrowScreensAndLongNamesKeepThePageInItsWidth(): void
    {
        if (getenv('REDISLOCK_BROWSER') === '0') {
            $this->markTestSkipped('REDISLOCK_BROWSER=0: no browser here');
        }
        $c = new Client();
        $long = 'orders-' . str_repeat('x', 200);
        $q = $c->queue($long, ['maxAttempts' => 1]);
        $q->enqueue(str_repeat('task-', 40), str_repeat('{"payload":1}', 20));
        foreach ($q->reserve(1) as $t) {
            $q->nack($t);
        }
        $this->children[] = $holder = self::start('$l = (new RedisLock\Client())->lock("' . str_repeat('lock-', 50) . '", ["ttl" => 300]); $l->acquire(); echo "held\n"; sleep(60);');
        $this->assertSame("held\n", fgets($holder[1][1]));
        $url = self::serve(self::PASSWORD);
        $browser = new Browser();
        $browser->resize(420, 900);
        $browser->visit($url);
        $browser->type('#password', self::PASSWORD);
        $browser->click('#sign-in');
        $this->assertSame(1, count($browser->all("#queues tr[data-queue=\"$long\"]")));
        [$scroll, $inner] = $browser->run('return [document.documentElement.scrollWidth, window.innerWidth]');
        $this->assertLessThanOrEqual($inner, $scroll, 'no sideways scrolling at 420 px');
        $this->assertLessThanOrEqual(420, $inner);
        $browser->screenshot(self::SCREENSHOTS . '/dashboard-420px.png');
        // The queue's page and a task's page keep the width too.
        $browser->click("#queues tr[data-queue=\"$long\"] a");
        $browser->visit($url . '?' . http_build_query(['queue' => $long, 'task' => str_repeat('task-', 40)]));
        $this->assertSame('dead', $browser->text('#task td.state'));
        [$scroll, $inner] = $browser->run('return [document.documentElement.scrollWidth, window.innerWidth]');
        $this->assertLessThanOrEqual($inner, $scroll, "no sideways scrolling on a task's page");
    }

    public function testADeadLetterHasItsPageATaskCanBeFoundAndGoneWorkersAreMarked(): void
    {
        if (getenv('REDISLOCK_BROWSER') === '0') {
            $this->markTestSkipped('REDISLOCK_BROWSER=0: no browser here');
        }
        $c = new Client();
        $orders = $c->queue('orders', ['maxAttempts' => 1]);
        $json = json_encode(['order' => 42, 'items' => [['sku' => 'A-1', 'note' => str_repeat('long note ', 40)]], 'url' => 'https://shop/x']);
        $orders->enqueueMany(['o1' => $json, 'o2' => 'not json {']);
        foreach ($orders->reserve(2) as $t) {
            $orders->nack($t, 0, 'RuntimeException: payment API down');
        }
        // A worker that acked one task and went away 20 minutes ago.
        $orders->enqueue('o3', null, 0, null, ['customer-42']);
        $pid = (int) self::php('$q = (new RedisLock\Client())->queue("orders"); $q->ack($q->reserve()[0]); echo getmypid();');
        [$now] = $this->redis->time();
        $this->redis->zAdd('{Queue:orders}:workers', $now - 1200, array_column($orders->workers(), 'id', 'pid')[$pid]);

        $url = self::serve(self::PASSWORD);
        $browser = new Browser();
        $browser->visit($url);
        $browser->type('#password', self::PASSWORD);
        $browser->click('#sign-in');
        $this->assertStringContainsString('gone', $browser->text('#workers tr.gone td.seen'));
        $this->assertStringContainsString("pid $pid", $browser->text('#workers tr.gone td.worker'));

        // A dead letter's id opens its page: its JSON payload pretty-printed, its lines whole; Retry.
        $browser->click('section.dead tr[data-task="o1"] a');
        $this->assertSame('Task · orders · redislock', $browser->title());
        $this->assertSame('dead', $browser->text('#task td.state'));
        $this->assertSame(json_encode(json_decode($json), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), $browser->text('#payload.json'));
        $this->assertTrue($browser->run('const p = document.getElementById("payload"); return p.scrollWidth > p.clientWidth;'),
            'the long line scrolls rather than wrapping mid-string');
        $browser->screenshot(self::SCREENSHOTS . '/dashboard-dead-letter.png');
        $browser->click('button.retry');
        $this->assertSame("1 dead letter 'o1' of queue 'orders' retried.", $browser->text('#flash'));
        $this->assertSame('Queue orders · redislock', $browser->title());
        $this->assertSame('queued', $orders->find('o1')['state']);

        // The queue's page: the timings of its recent attempts, and the attempts, newest first.
        $this->assertMatchesRegularExpression('/^Last 5 minutes, p50 \/ p95: runtime \d+ ms \/ \d+ ms, wait \d+ ms \/ \d+ ms \(3 attempts\)\.$/', $browser->text('#timings'));
        $this->assertSame(['o3', 'o2', 'o1'], $browser->texts('#recent tr[data-task] td:nth-child(2)'));
        $this->assertSame('acked', $browser->text('#recent tr[data-task="o3"] td.outcome'));
        $this->assertSame('dead', $browser->text('#recent tr[data-task="o1"] td.outcome'));
        $this->assertSame('RuntimeException: payment API down', $browser->text('#recent tr[data-task="o1"] td.reason'));
        $this->assertStringContainsString("pid $pid", $browser->text('#recent tr[data-task="o3"] td.worker'));
        $browser->screenshot(self::SCREENSHOTS . '/dashboard-recent.png');
        // A finished task's page: what it did, kept a while.
        $browser->click('#recent tr[data-task="o3"] a');
        $this->assertSame('Not in the queue any more: not queued, running or dead.', $browser->text('#gone'));
        $this->assertSame('acked', $browser->text('#recent td.outcome'));
        $browser->click('#back');

        // Found by its id from the queue's page; a payload that is not JSON is shown as it is; Purge asks first.
        $browser->type('#find-task', 'o2');
        $browser->click('#find button');
        $this->assertSame('not json {', $browser->text('#payload'));
        $this->assertSame([], $browser->all('#payload.json'));
        $browser->click('button.purge');
        $this->assertSame("Purge dead letter 'o2' of queue 'orders', with their payloads, for good?", $browser->text('#question'));
        $browser->click('button.confirm');
        $this->assertSame("1 dead letter 'o2' of queue 'orders' purged.", $browser->text('#flash'));
        $this->assertNull($orders->find('o2'));
        $browser->type('#find-task', 'o9');
        $browser->click('#find button');
        $this->assertSame("No task 'o9' in queue 'orders'.", $browser->text('p.error'));

        // Searched by a tag: the tasks that have it, and their recent attempts; a task's page links its tags.
        $orders->enqueue('o4', null, 60, null, ['customer-42', 'vip']);
        $browser->click('#back');
        $browser->type('#tag', 'customer-42');
        $browser->click('#find-tag button');
        $this->assertSame('Tag · orders · redislock', $browser->title());
        $this->assertSame(['o4'], $browser->texts('#tasks tr[data-task] td:first-child'));
        $this->assertSame('queued', $browser->text('#tasks tr[data-task="o4"] td.state'));
        $this->assertSame(['o3'], $browser->texts('#recent tr[data-task] td:nth-child(2)'));
        $browser->screenshot(self::SCREENSHOTS . '/dashboard-tag.png');
        $browser->click('#tasks tr[data-task="o4"] a');
        $this->assertSame('customer-42 vip', $browser->text('#task td.tags'));
        $browser->click('#task td.tags a:last-child');
        $this->assertSame('Tag · orders · redislock', $browser->title());
        $this->assertSame(['o4'], $browser->texts('#tasks tr[data-task] td:first-child'));
        $this->assertSame([], $browser->all('#recent tr[data-task]'));
        $browser->click('#back');
        $browser->type('#tag', 'two words');
        $browser->click('#find-tag button');
        $this->assertStringContainsString('a tag is 1 to 100 bytes, without spaces or control bytes', $browser->text('p.error'));

        // A queue with groups lists them, the one served next first (the
        // tasks it had before, without a group, then the group).
        $browser->click('#back');
        $this->assertSame('Queue orders · redislock', $browser->title());
        $this->assertSame([], $browser->all('#groups'), 'none before');
        $orders->enqueueMany(['g1' => null, 'g2' => null], 0, null, null, 'tenant-9');
        $browser->visit($url . '?queue=orders');
        $this->assertSame(['none', 'tenant-9'], $browser->texts('#groups tr[data-group] td:first-child'));
        $this->assertSame(['2', '-', '-'], $browser->texts('#groups tr[data-group="tenant-9"] td.n'));
        // Its limits: the leased tasks counted, a throttle's seconds left.
        $orders->setGroupConcurrency(3);
        $orders->throttle(60, 'tenant-9');
        $browser->visit($url . '?queue=orders');
        $texts = $browser->texts('#groups tr[data-group="tenant-9"] td.n');
        $this->assertSame(['2', '0'], array_slice($texts, 0, 2));
        $this->assertMatchesRegularExpression('/^(60\.0|59\.\d) s$/', $texts[2]);
    }

    public function testManyRowsAreCutAndTheCutIsSaid(): void
    {
        if (getenv('REDISLOCK_BROWSER') === '0') {
            $this->markTestSkipped('REDISLOCK_BROWSER=0: no browser here');
        }
        $c = new Client();
        $q = $c->queue('busy', ['maxAttempts' => 1]);
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "d$i", range(1, 30)), null));
        foreach ($q->reserve(30) as $t) {
            $q->nack($t, 0, "failure {$t->id()}");
        }
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => sprintf('w%02d', $i), range(1, 60)), 'p'));
        $running = $q->reserve(25, 300);
        $this->assertCount(25, $running);
        $url = self::serve(self::PASSWORD);
        $browser = new Browser();
        $browser->visit($url);
        $browser->type('#password', self::PASSWORD);
        $browser->click('#sign-in');
        $this->assertCount(20, $browser->all('section.dead[data-queue="busy"] tr[data-task]'));
        $this->assertStringStartsWith('Showing the oldest 20 of 30 dead letters', $browser->text('section.dead[data-queue="busy"] p.more'));
        $this->assertCount(20, $browser->all('#running tr[data-task]'));
        $this->assertStringStartsWith('Showing 20 of 25 running tasks', $browser->text('#running + p.more'));
        $browser->visit($url . '?queue=busy');
        $this->assertCount(35, $browser->all('#tasks tr[data-task]'), 'all 35 waiting (under 50)');
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "x$i", range(1, 20)), null));
        $browser->visit($url . '?queue=busy');
        $this->assertCount(50, $browser->all('#tasks tr[data-task]'));
        $this->assertStringStartsWith('Showing the first 50 of 55 waiting tasks', $browser->text('p.more'));
        $browser->screenshot(self::SCREENSHOTS . '/dashboard-queue.png');
    }

    /**
     * The screenshot is the page as a browser drew it: its size, the dark
     * header band at the top, and the two colours of the charts' bars.
     */
    private function assertScreenshotShowsThePage(string $png): void
    {
        [$width, $height] = getimagesize($png);
        $this->assertSame(1280, $width, 'the window is 1280 wide');
        $this->assertGreaterThan(600, $height);
        $image = imagecreatefrompng($png);
        $this->assertSame(0x1d2330, imagecolorat($image, 5, 5) & 0xffffff, 'the header');
        $colours = [];
        for ($y = 0; $y < $height; $y += 1) {
            for ($x = 0; $x < $width; $x += 1) {
                $colours[imagecolorat($image, $x, $y) & 0xffffff] = true;
            }
        }
        $this->assertArrayHasKey(0x2f6fdf, $colours, 'enqueued bars drawn');
        $this->assertArrayHasKey(0x1a9a5b, $colours, 'acked bars drawn');
    }
}
