<?php

/**
 * Headless Debian Chromium driven over W3C WebDriver (chromedriver), for
 * the dashboard's tests. The protocol is plain JSON over HTTP, so this is
 * the few commands the tests use; Debian packages no PHP WebDriver client.
 */
final class Browser
{
    private const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

    /** @var resource */
    private $driver;
    private string $base;
    private string $session;
    private string $profile;

    public function __construct()
    {
        foreach (['/usr/bin/chromium', '/usr/bin/chromedriver'] as $bin) {
            if (!is_executable($bin)) {
                throw new RuntimeException("$bin is missing: tools/deps.sh installs chromium and chromium-driver");
            }
        }
        $port = RedisServer::freePort();
        $this->driver = proc_open(['/usr/bin/chromedriver', "--port=$port"], [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        $this->base = "http://127.0.0.1:$port";
        $deadline = microtime(true) + 10;
        while (self::http('GET', "$this->base/status") === false) {
            if (microtime(true) > $deadline) {
                throw new RuntimeException('chromedriver did not start');
            }
            usleep(50000);
        }
        $this->profile = sys_get_temp_dir() . '/redislock-chromium-' . getmypid() . '-' . bin2hex(random_bytes(4));
        // As root (CI) Chromium needs --no-sandbox; the background services
        // would only try to reach Google from a closed network.
        $args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync', '--window-size=1280,900',
            "--user-data-dir=$this->profile"];
        $this->session = $this->call('POST', '/session', ['capabilities' => ['alwaysMatch' => [
            'browserName' => 'chrome',
            'goog:chromeOptions' => ['binary' => '/usr/bin/chromium', 'args' => $args],
        ]]])['sessionId'];
    }

    public function __destruct()
    {
        try {
            $this->call('DELETE', '');
        } catch (Throwable) {
        }
        proc_terminate($this->driver);
        proc_close($this->driver);
        exec('rm -rf ' . escapeshellarg($this->profile));
    }

    private function call(string $method, string $path, ?array $body = null): mixed
    {
        $url = $this->base . (str_starts_with($path, '/session') ? $path : "/session/$this->session$path");
        $content = match ($body) { null => '', [] => '{}', default => json_encode($body) };
        $reply = json_decode((string) self::http($method, $url, $content), true);
        if (isset($reply['value']['error'])) {
            throw new RuntimeException("WebDriver $method $path: {$reply['value']['error']}: {$reply['value']['message']}");
        }
        return $reply['value'] ?? null;
    }

    /** An HTTP request to chromedriver (curl: it keeps connections open). */
    private static function http(string $method, string $url, string $content = ''): string|false
    {
        $curl = curl_init($url);
        curl_setopt_array($curl, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_HTTPHEADER => ['Content-Type: application/json'],
            CURLOPT_TIMEOUT => 60,
        ] + ($method === 'POST' ? [CURLOPT_POSTFIELDS => $content] : []));
        $reply = curl_exec($curl);
        curl_close($curl);
        return $reply;
    }

    public function visit(string $url): void
    {
        $this->call('POST', '/url', ['url' => $url]);
    }

    /** The elements matching a CSS selector. */
    public function all(string $css): array
    {
        return array_map(fn ($e) => $e[self::ELEMENT], $this->call('POST', '/elements', ['using' => 'css selector', 'value' => $css]));
    }

    public function one(string $css): string
    {
        $found = $this->all($css);
        if (count($found) !== 1) {
            throw new RuntimeException(count($found) . " elements match '$css' on " . $this->url());
        }
        return $found[0];
    }

    public function text(string $css): string
    {
        return $this->call('GET', '/element/' . $this->one($css) . '/text');
    }

    /** The texts of every element matching a CSS selector. */
    public function texts(string $css): array
    {
        return array_map(fn (string $e) => $this->call('GET', "/element/$e/text"), $this->all($css));
    }

    /** Clicks what submits a form or follows a link, and waits for the next page. */
    public function click(string $css): void
    {
        $page = $this->one('body');
        $this->call('POST', '/element/' . $this->one($css) . '/click', []);
        $deadline = microtime(true) + 10;
        while (true) {
            try {
                $this->call('GET', "/element/$page/name");
            } catch (RuntimeException $e) {
                // The old page is gone. Mid-navigation Chromium may say so
                // as an inspector error about the node instead.
                if (str_contains($e->getMessage(), 'stale element reference')
                    || str_contains($e->getMessage(), 'does not belong to the document')) {
                    break;
                }
                throw $e;
            }
            if (microtime(true) > $deadline) {
                throw new RuntimeException("clicking '$css' led to no new page");
            }
            usleep(20000);
        }
        // The new page's body is there once the old one is gone, but may
        // still be loading.
        while ($this->call('POST', '/execute/sync', ['script' => 'return document.readyState', 'args' => []]) !== 'complete') {
            usleep(20000);
        }
    }

    public function type(string $css, string $text): void
    {
        $this->call('POST', '/element/' . $this->one($css) . '/value', ['text' => $text]);
    }

    public function url(): string
    {
        return $this->call('GET', '/url');
    }

    public function title(): string
    {
        return $this->call('GET', '/title');
    }

    public function cookie(string $name): string
    {
        return $this->call('GET', "/cookie/$name")['value'];
    }

    /** What a script returns in the page. */
    public function run(string $script): mixed
    {
        return $this->call('POST', '/execute/sync', ['script' => $script, 'args' => []]);
    }

    /** Sets the window's outer size. */
    public function resize(int $width, int $height): void
    {
        $this->call('POST', '/window/rect', ['width' => $width, 'height' => $height]);
    }

    /** Saves a PNG of the viewport; returns its path. */
    public function screenshot(string $path): string
    {
        @mkdir(dirname($path), 0777, true);
        file_put_contents($path, base64_decode($this->call('GET', '/screenshot')));
        return $path;
    }
}
