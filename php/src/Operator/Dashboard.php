<?php

declare(strict_types=1);

namespace RedisLock\Operator;

use RedisLock\Client;

/**
 * The dashboard page (php/web/index.php): queues with their depth and
 * throughput over the last 10 minutes, pause, resume and clear, dead
 * letters with why they died, retry and purge,
 * locks with holders and waiters. Behind a password; every change is a POST
 * carrying the session's CSRF token, answered with a redirect.
 */
final class Dashboard
{
    /** Dead letters shown per queue. */
    private const DEAD_SHOWN = 20;
    /** Locks shown. */
    private const LOCKS_SHOWN = 200;

    /** @param float $goneAfter seconds unseen after which a worker running none of its queue's tasks is gone */
    public function __construct(private readonly string $password, private readonly ?string $url, private readonly float $goneAfter = Report::GONE_AFTER)
    {
    }

    /** Answers the current request (PHP's superglobals) and ends it. */
    public function handle(): void
    {
        header('Content-Type: text/html; charset=utf-8');
        header("Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'");
        header('X-Content-Type-Options: nosniff');
        header('Cache-Control: no-store');
        if ($this->password === '') {
            http_response_code(503);
            echo $this->page('Not configured', '<p class="error">Set a password in the environment variable <code>REDISLOCK_DASHBOARD_PASSWORD</code> (PHP-FPM: <code>env[REDISLOCK_DASHBOARD_PASSWORD]</code> in the pool) to open the dashboard.</p>');
            return;
        }
        session_start(['cookie_httponly' => true, 'cookie_samesite' => 'Strict', 'cookie_secure' => self::https(), 'use_strict_mode' => true, 'name' => 'redislock_dashboard']);
        $_SESSION['csrf'] ??= bin2hex(random_bytes(32));
        $post = ($_SERVER['REQUEST_METHOD'] ?? 'GET') === 'POST';
        $token = $_POST['csrf'] ?? '';
        if ($post && (!is_string($token) || !hash_equals($_SESSION['csrf'], $token))) {
            http_response_code(403);
            echo $this->page('Refused', '<p class="error">The form was stale or not from this page (CSRF token mismatch): nothing was changed. <a href="?">Back to the dashboard</a></p>');
            return;
        }
        // Every parameter of its forms and links is one string: an array
        // (`queue[]=x`) is no request of this page's.
        foreach ([...array_keys(array_filter($_GET, 'is_array')), ...array_keys(array_filter($_POST, 'is_array'))] as $name) {
            http_response_code(400);
            echo $this->page('Bad request', '<p class="error">' . self::h("The parameter '$name' is a list: this page takes one value for each. Nothing was changed.") . ' <a href="?">Back to the dashboard</a></p>');
            return;
        }
        $action = $post ? (string) ($_POST['action'] ?? '') : '';
        if ($action === 'login') {
            $this->signIn();
            return;
        }
        if (empty($_SESSION['in'])) {
            echo $this->page('Sign in', $this->login());
            return;
        }
        if (!extension_loaded('redislock')) {
            http_response_code(503);
            echo $this->page('Extension not loaded', '<p class="error">The redislock extension is not loaded in the PHP that serves this page (<code>php -m</code> lists what is loaded): load it from php.ini or conf.d, then reload PHP-FPM.</p>');
            return;
        }
        try {
            $report = new Report(new Client($this->url), $this->goneAfter,
                fn (string $prefix) => new Client(['prefix' => $prefix] + ($this->url === null ? [] : ['dsn' => $this->url])));
            if ($post) {
                $question = $this->question($report, $action);
                if ($question !== null && ($_POST['confirm'] ?? '') !== 'yes') {
                    echo $this->page('Confirm', $question);
                    return;
                }
                $flash = $this->change($report, $action);
                // Back to the queue's page when the change was made there.
                $this->redirect($flash, isset($_POST['back']) ? ['queue' => (string) $_POST['queue']] : []);
                return;
            }
            $flash = $_SESSION['flash'] ?? null;
            unset($_SESSION['flash']);
            $queue = isset($_GET['queue']) ? (string) $_GET['queue'] : null;
            if ($queue !== null && isset($_GET['task'])) {
                echo $this->page("Task · $queue", $this->taskPage($report, $queue, (string) $_GET['task']));
            } elseif ($queue !== null && isset($_GET['job'])) {
                echo $this->page("Job · $queue", $this->jobPage($report, $queue, (string) $_GET['job']));
            } elseif ($queue !== null && isset($_GET['tag'])) {
                echo $this->page("Tag · $queue", $this->tagPage($report, $queue, (string) $_GET['tag']));
            } elseif ($queue !== null) {
                echo $this->page("Queue $queue", $this->queuePage($report, $queue, $flash));
            } else {
                echo $this->page('redislock', $this->overview($report, $flash));
            }
        } catch (\RedisLock\RedisLockException | \ValueError $e) {
            http_response_code(502);
            echo $this->page('Redis unavailable', '<p class="error">' . self::h($e->getMessage()) . '</p>');
        }
    }

    /** Wrong passwords a client address may send per THROTTLE_WINDOW seconds. */
    private const THROTTLE_TRIES = 5;
    private const THROTTLE_WINDOW = 60;

    /**
     * Checks a sign-in; every wrong password is logged, and an address that
     * sent THROTTLE_TRIES of them within THROTTLE_WINDOW s is answered 429,
     * without a look at the password, until the oldest of them is that old.
     */
    private function signIn(): void
    {
        $address = (string) ($_SERVER['REMOTE_ADDR'] ?? '');
        $wait = self::throttle($address, false);
        if ($wait > 0) {
            error_log("redislock dashboard: sign-in from $address refused for {$wait} s: too many wrong passwords");
            http_response_code(429);
            header("Retry-After: $wait");
            echo $this->page('Too many attempts', '<p class="error" id="flash">Too many wrong passwords from this address: try again in ' . $wait . ' s.</p>');
            return;
        }
        if (!hash_equals($this->password, (string) ($_POST['password'] ?? ''))) {
            self::throttle($address, true);
            error_log("redislock dashboard: wrong password from $address");
            $this->redirect('Wrong password.');
            return;
        }
        session_regenerate_id(true);
        $_SESSION['in'] = true;
        $this->redirect(null);
    }

    /**
     * The seconds an address must still wait before its next sign-in (0:
     * none), after noting one more failure when $failed. The failures live
     * in a file per address beside the sessions (shared by every worker of
     * the pool), locked while read and written.
     */
    private static function throttle(string $address, bool $failed): int
    {
        $dir = is_dir(session_save_path()) && is_writable(session_save_path()) ? session_save_path() : sys_get_temp_dir();
        $file = fopen($dir . '/redislock-dashboard-failures-' . hash('sha256', $address), 'c+');
        if ($file === false) {
            return 0;
        }
        flock($file, LOCK_EX);
        $now = time();
        $times = array_filter(
            array_map('intval', explode(' ', trim((string) stream_get_contents($file)))),
            fn (int $t) => $t > $now - self::THROTTLE_WINDOW,
        );
        if ($failed) {
            $times[] = $now;
        }
        ftruncate($file, 0);
        rewind($file);
        fwrite($file, implode(' ', $times));
        flock($file, LOCK_UN);
        fclose($file);
        return count($times) >= self::THROTTLE_TRIES ? min($times) + self::THROTTLE_WINDOW - $now : 0;
    }

    /** Whether the browser reached this page over HTTPS (here, or at a proxy that says so). */
    private static function https(): bool
    {
        return !in_array(strtolower((string) ($_SERVER['HTTPS'] ?? '')), ['', 'off'], true)
            || strtolower((string) ($_SERVER['HTTP_X_FORWARDED_PROTO'] ?? '')) === 'https';
    }

    /**
     * What a change that cannot be taken back (a purge, a clear), that
     * moves a whole queue's dead letters (retry all) or that stops or starts
     * a queue's workers asks before it is made, as the CLI asks: a page with
     * the question, a confirming form and a way back; null for a change
     * made at once.
     */
    private function question(Report $report, string $action): ?string
    {
        if ($action === 'unlock') {
            $name = (string) ($_POST['name'] ?? '');
            $kind = (string) ($_POST['kind'] ?? '');
            return '<p id="question">' . self::h("Force unlock $kind lock '$name', whoever holds it? The next waiter in line gets it.") . '</p><p>'
                . $this->form('unlock', 'Force unlock', ['name' => $name, 'kind' => $kind, 'confirm' => 'yes'], 'confirm danger')
                . ' <a href="?" id="cancel">Cancel</a></p>';
        }
        if (!in_array($action, ['purge', 'retry', 'pause', 'resume', 'clear', 'remove'], true)) {
            return null;
        }
        $queue = (string) ($_POST['queue'] ?? '');
        $id = isset($_POST['id']) ? (string) $_POST['id'] : null;
        $counts = $report->queue($queue);
        $what = $id !== null ? "dead letter '$id'" : "all {$counts['dead']} dead letter(s)";
        $question = match ($action) {
            'purge' => "Purge $what of queue '$queue', with their payloads, for good?",
            'retry' => $id === null ? "Retry $what of queue '$queue' now?" : null,
            'pause' => "Pause queue '$queue'? Its workers take no new tasks until it is resumed; running tasks finish.",
            'resume' => "Resume queue '$queue'? Its workers take tasks again.",
            'remove' => "Remove task '$id' waiting in queue '$queue', for good?",
            'clear' => 'Clear queue \'' . $queue . '\': remove all ' . ($counts['ready'] + $counts['delayed'])
                . ' waiting task(s), for good? Running tasks finish; dead letters stay.',
        };
        if ($question === null) {
            return null;
        }
        $back = isset($_POST['back']) ? ['back' => '1'] : [];
        $fields = ['queue' => $queue, 'confirm' => 'yes'] + ($id === null ? [] : ['id' => $id]) + $back;
        return '<p id="question">' . self::h($question) . '</p><p>'
            . $this->form($action, ucfirst($action), $fields, 'confirm' . (in_array($action, ['purge', 'clear', 'remove'], true) ? ' danger' : ''))
            . ' <a href="?' . ($back ? self::h(http_build_query(['queue' => $queue])) : '') . '" id="cancel">Cancel</a></p>';
    }

    private function change(Report $report, string $action): string
    {
        $queue = (string) ($_POST['queue'] ?? '');
        $ids = isset($_POST['id']) ? [(string) $_POST['id']] : [];
        $what = $ids ? "dead letter '{$ids[0]}'" : 'dead letter(s)';
        return match ($action) {
            'logout' => $this->logout(),
            'retry' => $report->retry($queue, $ids) . " $what of queue '$queue' retried.",
            'purge' => $report->purge($queue, $ids) . " $what of queue '$queue' purged.",
            'pause' => $report->pause($queue) ? "Queue '$queue' paused." : "Queue '$queue' was paused already.",
            'resume' => $report->resume($queue) ? "Queue '$queue' resumed." : "Queue '$queue' was not paused.",
            'clear' => $report->clear($queue) . " task(s) removed from queue '$queue'.",
            'remove' => $ids === [] ? 'No task named: nothing was changed.'
                : ($report->remove($queue, $ids) === 1 ? "Task '{$ids[0]}' removed from queue '$queue'."
                    : "Task '{$ids[0]}' was not waiting in queue '$queue' (running, done or gone)."),
            'unlock' => $report->release((string) ($_POST['name'] ?? ''), (string) ($_POST['kind'] ?? ''))
                ? "Lock '{$_POST['name']}' freed." : "Lock '{$_POST['name']}' was not held.",
            default => "Unknown action '$action': nothing was changed.",
        };
    }

    private function logout(): string
    {
        $_SESSION = [];
        session_regenerate_id(true);
        return 'Signed out.';
    }

    private function redirect(?string $flash, array $query = []): void
    {
        if ($flash !== null) {
            $_SESSION['flash'] = $flash;
        }
        header('Location: ' . strtok($_SERVER['REQUEST_URI'] ?? '/', '?') . ($query === [] ? '' : '?' . http_build_query($query)), true, 303);
    }

    /** Tasks shown on a queue's page. */
    private const TASKS_SHOWN = 50;

    /** A queue's page: its counts and its waiting tasks, each with a link to it and Remove. */
    private function queuePage(Report $report, string $name, ?string $flash): string
    {
        if (!$report->exists($name)) {
            http_response_code(404);
            return '<p class="error" id="flash">' . self::h("No queue '$name'.") . ' <a href="?">Back to the dashboard</a></p>';
        }
        $q = $report->queue($name);
        $html = ($flash ? '<p class="flash" id="flash">' . self::h($flash) . '</p>' : '')
            . '<p><a href="?" id="back">← All queues</a></p><h2>Queue ' . self::h($name)
            . ($q['paused'] !== null ? ' <span class="state">paused</span>' : '')
            . ($q['throttled'] !== null ? ' <span class="state" title="until ' . date('Y-m-d H:i:s T', (int) $q['throttled']) . '">throttled</span>' : '') . '</h2>'
            . "<p id=\"counts\">{$q['ready']} ready, {$q['delayed']} delayed, {$q['leased']} running, {$q['dead']} dead.</p>"
            . self::partitions($q['partitions'] ?? [])
            . self::timings($q['timings'])
            . '<form method="get" id="find"><input type="hidden" name="queue" value="' . self::h($name) . '">'
            . '<label>Task <input name="task" id="find-task" placeholder="id" required></label> <button type="submit">Find</button></form>'
            . '<form method="get" id="find-tag"><input type="hidden" name="queue" value="' . self::h($name) . '">'
            . '<label>Tag <input name="tag" id="tag" placeholder="tag" required></label> <button type="submit">Search</button></form>'
            . '<form method="get" id="find-job"><input type="hidden" name="queue" value="' . self::h($name) . '">'
            . '<label>Job <input name="job" id="job" placeholder="App\\Jobs\\SendInvoice" required></label> <button type="submit">Search</button></form>';
        $tasks = $report->queued($name, self::TASKS_SHOWN);
        $waiting = $q['ready'] + $q['delayed'];
        if ($tasks === []) {
            return $html . '<p id="no-tasks">No task waiting.</p>' . $this->groups($report, $name, $q['groups']) . $this->recent($report, $name) . $this->footer();
        }
        $html .= '<table id="tasks"><tr><th>Task</th><th>Due</th><th>Attempts</th><th>Why it failed</th><th>Payload</th><th></th></tr>';
        foreach ($tasks as $t) {
            $html .= '<tr data-task="' . self::h($t['id']) . '"><td><a href="?' . self::h(http_build_query(['queue' => $name, 'task' => $t['id']])) . '">'
                . self::h($t['id']) . '</a>' . self::job($t['payload']) . '</td><td>' . date('Y-m-d H:i:s T', (int) $t['at']) . '</td><td class="n">' . $t['attempts']
                . '</td><td class="reason">' . self::h($t['reason'] ?? '–') . '</td><td><code>' . self::h(self::cut($t['payload'])) . '</code></td><td>'
                . $this->form('remove', 'Remove', ['queue' => $name, 'id' => $t['id'], 'back' => '1'], 'remove danger') . '</td></tr>';
        }
        return $html . '</table>' . (count($tasks) < $waiting ? '<p class="more">Showing the first ' . count($tasks)
            . " of $waiting waiting tasks, due first (the CLI's <code>queue NAME --limit=N</code> lists more).</p>" : '')
            . $this->groups($report, $name, $q['groups']) . $this->recent($report, $name) . $this->footer();
    }

    /** A partitioned queue's counts by partition; nothing for a queue of one slot. */
    private static function partitions(array $parts): string
    {
        if ($parts === []) {
            return '';
        }
        $html = '<table id="partitions"><tr><th>Partition</th>' . self::countHeaders() . '</tr>';
        foreach ($parts as $i => $m) {
            $html .= "<tr><td class=\"n\">$i</td><td class=\"n\">{$m['ready']}</td><td class=\"n\">{$m['delayed']}</td><td class=\"n\">{$m['leased']}</td><td class=\"n\">{$m['dead']}</td></tr>";
        }
        return $html . '</table>';
    }

    /** How many groups a queue's page shows. */
    private const GROUPS_SHOWN = 20;

    /** A queue's groups ($count of them), the one served next first; nothing when it has none. */
    private function groups(Report $report, string $name, int $count): string
    {
        if ($count === 0) {
            return '';
        }
        $html = '<h3>Groups</h3><p>reserve() takes their due tasks in turn, the first here next.</p>'
            . '<table id="groups"><tr><th>Group</th><th>Queued</th><th>' . View::COUNTS['leased'] . '</th><th>Throttled</th></tr>';
        foreach ($report->groups($name, self::GROUPS_SHOWN) as $g) {
            $html .= '<tr data-group="' . self::h($g['group'] ?? '') . '"><td>' . ($g['group'] === null ? '<em>none</em>' : self::h($g['group']))
                . '</td><td class="n">' . $g['queued'] . '</td><td class="n">' . ($g['leased'] ?? '-')
                . '</td><td class="n">' . ($g['throttled'] > 0 ? sprintf('%.1f s', $g['throttled']) : '-') . '</td></tr>';
        }
        return $html . '</table>' . ($count > self::GROUPS_SHOWN ? '<p class="more">Showing the first ' . self::GROUPS_SHOWN
            . " of $count groups (the CLI's <code>groups NAME --limit=N</code> lists more).</p>" : '');
    }

    /** How many recent attempts a queue's page shows. */
    private const RECENT_SHOWN = 50;

    /** The runtime and wait quantiles of a queue's recent attempts (Report::timings()). */
    private static function timings(array $t): string
    {
        return '<p id="timings">Last ' . (Report::TIMINGS_OVER / 60) . ' minutes, p50 / p95: runtime <span class="runtime">' . self::quantiles($t['runtime'], ' / ')
            . '</span>, wait <span class="wait">' . self::quantiles($t['wait'], ' / ') . '</span> (' . $t['attempts'] . ' attempts).</p>';
    }

    /** 'p50<between>p95' of Report::timings(), or a dash for none. */
    private static function quantiles(?array $q, string $between): string
    {
        return $q === null ? '–' : Report::span($q['p50']) . $between . Report::span($q['p95']);
    }

    /**
     * A queue's recent attempts (of task $id only when given), newest
     * first; $recent: those already read, under the heading $title.
     */
    private function recent(Report $report, string $name, ?string $id = null, ?array $recent = null, ?string $title = null): string
    {
        $recent ??= $report->recent($name, self::RECENT_SHOWN, $id);
        $title = '<h3>' . ($title ?? ($id === null ? 'Recent attempts' : 'Its recent attempts')) . '</h3>';
        if ($id === null) {
            // How much of Redis the history takes: what grows with it.
            $title .= '<p id="recent-footprint">Kept: ' . self::h(Report::footprintText($report->recentFootprint($name)))
                . ' (<code>redislock keep-recent ' . self::h($name) . ' COUNT SECONDS [BYTES]</code> sets them).</p>';
        }
        if ($recent === []) {
            return $title . '<p id="no-recent">None kept: the queue keeps its last attempts for a while (<code>redislock keep-recent</code>).</p>';
        }
        $html = $title . '<table id="recent"><tr><th>Ended</th>' . ($id === null ? '<th>Task</th>' : '')
            . '<th>Outcome</th><th>Attempt</th><th>Runtime</th><th>Wait</th><th>Worker</th><th>Why it failed</th></tr>';
        foreach ($recent as $a) {
            $html .= '<tr data-task="' . self::h($a['id']) . '" class="' . self::h($a['outcome']) . '"><td>' . date('Y-m-d H:i:s T', (int) $a['at']) . '</td>'
                . ($id === null ? '<td><a href="?' . self::h(http_build_query(['queue' => $name, 'task' => $a['id']])) . '">' . self::h($a['id']) . '</a></td>' : '')
                . '<td class="outcome">' . self::h($a['outcome']) . '</td><td class="n">' . ($a['attempts'] ?? '–') . '</td><td class="n">' . Report::span($a['runtime'])
                . '</td><td class="n">' . Report::span($a['wait']) . '</td><td class="worker">' . self::h($a['host'] === null ? ($a['worker'] ?? '–') : "{$a['host']} · pid {$a['pid']}")
                . '</td><td class="reason">' . self::h($a['reason'] ?? '–') . '</td></tr>';
        }
        return $html . '</table>';
    }

    /** One task wherever it is, its payload whole. */
    private function taskPage(Report $report, string $name, string $id): string
    {
        $t = $report->task($name, $id);
        $back = '<p><a href="?' . self::h(http_build_query(['queue' => $name])) . '" id="back">← Queue ' . self::h($name) . '</a></p>';
        if ($t === null) {
            $recent = $report->recent($name, self::RECENT_SHOWN, $id);
            if ($recent !== []) {
                // Finished (or removed) since: what it did is kept a while.
                return $back . '<h2>Task ' . self::h($id) . '</h2><p id="gone">Not in the queue any more: not queued, running or dead.</p>'
                    . $this->recent($report, $name, $id, $recent) . $this->footer();
            }
            http_response_code(404);
            return $back . '<p class="error">' . self::h("No task '$id' in queue '$name'.") . '</p>';
        }
        $at = ['queued' => 'Due', 'leased' => 'Lease ends', 'dead' => 'Died', 'waiting' => 'Waits for'][$t['state']] ?? 'At';
        return $back . '<h2>Task ' . self::h($id) . '</h2><table id="task">'
            . (($job = Report::job($t['payload'])) === null ? '' : '<tr><th>Job</th><td class="job">' . self::h($job) . '</td></tr>')
            . '<tr><th>State</th><td class="state">' . $t['state'] . '</td></tr>'
            // A parent of a workflow waits for its children, not for a time.
            . "<tr><th>$at</th><td>" . ($t['state'] === 'waiting' ? "<span id=\"children\">{$t['children']}</span> child(ren) not ended" : date('Y-m-d H:i:s T', (int) $t['at'])) . '</td></tr>'
            . '<tr><th>Attempts</th><td>' . $t['attempts'] . '</td></tr>'
            . '<tr><th>Why it failed</th><td class="reason">' . self::h($t['reason'] ?? '–') . '</td></tr>'
            . '<tr><th>Tags</th><td class="tags">' . ($t['tags'] === [] ? '–' : implode(' ', array_map(
                fn (string $tag) => '<a href="?' . self::h(http_build_query(['queue' => $name, 'tag' => $tag])) . '">' . self::h($tag) . '</a>',
                $t['tags'],
            ))) . '</td></tr></table>'
            . (isset($t['childStates']) ? '<h3>Children</h3><table id="child-states"><tr><th>Child</th><th>State</th></tr>'
                . implode('', array_map(fn ($child, string $state) => '<tr><td class="child">' . self::h((string) $child)
                    . '</td><td class="state">' . self::h($state) . '</td></tr>', array_keys($t['childStates']), $t['childStates']))
                . '</table>' : '')
            . '<h3>Payload</h3>' . self::payload($t['payload'])
            . match ($t['state']) {
                'queued' => '<p>' . $this->form('remove', 'Remove', ['queue' => $name, 'id' => $id, 'back' => '1'], 'remove danger') . '</p>',
                'dead' => '<p>' . $this->form('retry', 'Retry', ['queue' => $name, 'id' => $id, 'back' => '1'], 'retry')
                    . $this->form('purge', 'Purge', ['queue' => $name, 'id' => $id, 'back' => '1'], 'purge danger') . '</p>',
                default => '',
            }
            . $this->recent($report, $name, $id) . $this->footer();
    }

    /** The tasks of a queue a producer tagged $tag, and their recent attempts. */
    /** The tasks of a framework job (Report::jobs()). */
    private function jobPage(Report $report, string $name, string $job): string
    {
        $html = '<p><a href="?' . self::h(http_build_query(['queue' => $name])) . '" id="back">← Queue ' . self::h($name) . '</a></p>'
            . '<h2>Job ' . self::h($job) . '</h2>';
        $found = $report->jobs($name, $job, self::TASKS_SHOWN);
        if ($found['tasks'] === []) {
            return $html . '<p id="no-tasks">No task of this job among the first ' . Report::JOBS_SCANNED . ' queued, running and dead.</p>' . $this->footer();
        }
        $at = ['queued' => 'due', 'leased' => 'lease ends', 'dead' => 'died'];
        $html .= '<table id="tasks"><tr><th>Task</th><th>State</th><th>When</th><th>Attempts</th><th>Why it failed</th><th>Payload</th></tr>';
        foreach ($found['tasks'] as $t) {
            $html .= '<tr data-task="' . self::h($t['id']) . '"><td><a href="?' . self::h(http_build_query(['queue' => $name, 'task' => $t['id']])) . '">'
                . self::h($t['id']) . '</a>' . self::job($t['payload']) . '</td><td class="state">' . $t['state'] . '</td><td>' . $at[$t['state']] . ' ' . date('Y-m-d H:i:s T', (int) $t['at'])
                . '</td><td class="n">' . $t['attempts'] . '</td><td class="reason">' . self::h($t['reason'] ?? '–')
                . '</td><td><code>' . self::h(self::cut($t['payload'])) . '</code></td></tr>';
        }
        return $html . '</table>' . ($found['more'] ? '<p id="more">The earliest ' . count($found['tasks']) . ' tasks of this job; there are more (<code>redislock jobs ' . self::h($name) . ' ' . self::h($job) . ' --limit=1000</code> lists up to 1000).</p>' : '')
            . $this->footer();
    }

    private function tagPage(Report $report, string $name, string $tag): string
    {
        $back = '<p><a href="?' . self::h(http_build_query(['queue' => $name])) . '" id="back">← Queue ' . self::h($name) . '</a></p>'
            . '<h2>Tag ' . self::h($tag) . '</h2>';
        try {
            $found = $report->tagged($name, $tag, self::TASKS_SHOWN);
        } catch (\ValueError $e) {
            http_response_code(400);
            return $back . '<p class="error">' . self::h("No task can have the tag '$tag': a tag is 1 to 100 bytes, without spaces or control bytes.") . '</p>';
        }
        if ($found['tasks'] === []) {
            $html = $back . '<p id="no-tasks">No task queued, running or dead has this tag.</p>';
        } else {
            $at = ['queued' => 'due', 'leased' => 'lease ends', 'dead' => 'died'];
            $html = $back . '<table id="tasks"><tr><th>Task</th><th>State</th><th>When</th><th>Attempts</th><th>Why it failed</th><th>Payload</th></tr>';
            foreach ($found['tasks'] as $t) {
                $html .= '<tr data-task="' . self::h($t['id']) . '"><td><a href="?' . self::h(http_build_query(['queue' => $name, 'task' => $t['id']])) . '">'
                    . self::h($t['id']) . '</a>' . self::job($t['payload']) . '</td><td class="state">' . $t['state'] . '</td><td>' . $at[$t['state']] . ' ' . date('Y-m-d H:i:s T', (int) $t['at'])
                    . '</td><td class="n">' . $t['attempts'] . '</td><td class="reason">' . self::h($t['reason'] ?? '–')
                    . '</td><td><code>' . self::h(self::cut($t['payload'])) . '</code></td></tr>';
            }
            $html .= '</table>' . ($found['more'] ? '<p id="more">The earliest ' . count($found['tasks']) . ' tasks with this tag; there are more (<code>redislock tagged ' . self::h($name) . ' ' . self::h($tag) . ' --limit=1000</code> lists up to 1000).</p>' : '');
        }
        return $html . $this->recent($report, $name, null, $found['recent'], 'Their recent attempts') . $this->footer();
    }

    /**
     * A task's payload whole: JSON pretty-printed (its lines kept whole,
     * the block scrolls sideways), anything else as it is.
     */
    private static function payload(?string $payload): string
    {
        if ($payload === null) {
            return '<p id="payload">No payload.</p>';
        }
        $json = json_decode($payload, true, 512, JSON_BIGINT_AS_STRING);
        if (is_array($json)) {
            $pretty = json_encode($json, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);
            if ($pretty !== false) {
                return '<pre id="payload" class="json">' . self::h($pretty) . '</pre>';
            }
        }
        return '<pre id="payload">' . self::h($payload) . '</pre>';
    }

    /** A framework job's name (Report::job()) under its task's id, if it is one. */
    private static function job(?string $payload): string
    {
        $job = Report::job($payload);
        return $job === null ? '' : '<br><small class="job">' . self::h($job) . '</small>';
    }

    /** A payload in a table, cut as the CLI cuts it (View::payload()). */
    private static function cut(?string $payload): string
    {
        return View::payload($payload) ?? '–';
    }

    private function login(): string
    {
        $flash = $_SESSION['flash'] ?? null;
        unset($_SESSION['flash']);
        return ($flash ? '<p class="error" id="flash">' . self::h($flash) . '</p>' : '')
            . '<form method="post" class="login"><input type="hidden" name="csrf" value="' . self::h($_SESSION['csrf']) . '">'
            . '<input type="hidden" name="action" value="login">'
            . '<label>Password <input type="password" name="password" id="password" autofocus></label> '
            . '<button type="submit" id="sign-in">Sign in</button></form>';
    }

    private function form(string $action, string $label, array $fields, string $class = ''): string
    {
        $hidden = '<input type="hidden" name="csrf" value="' . self::h($_SESSION['csrf']) . '">'
            . '<input type="hidden" name="action" value="' . self::h($action) . '">';
        foreach ($fields as $name => $value) {
            $hidden .= '<input type="hidden" name="' . self::h($name) . '" value="' . self::h($value) . '">';
        }
        return '<form method="post" class="inline">' . $hidden
            . '<button type="submit" class="' . $class . '">' . self::h($label) . '</button></form>';
    }

    /**
     * The queues under the server's other key prefixes (other apps',
     * Laravel's), read only: this page serves one prefix, the one of its
     * DSN.
     */
    private function otherPrefixes(Report $report): string
    {
        $others = $report->otherPrefixes();
        if ($others === []) {
            return '';
        }
        $html = '<h3>Queues under other prefixes</h3><p>A dashboard whose <code>REDISLOCK_URL</code> ends in <code>?prefix=PREFIX</code> serves one of them; <code>redislock --prefix=PREFIX</code> looks at it from a shell.</p>'
            . '<table id="other-prefixes"><tr><th>Prefix</th><th>Queue</th>' . self::countHeaders() . '</tr>';
        foreach ($others as $prefix => $queues) {
            foreach ($queues as $q) {
                $html .= '<tr data-prefix="' . self::h((string) $prefix) . '"><td>' . ($prefix === '' ? '(none)' : '<code>' . self::h((string) $prefix) . '</code>')
                    . '</td><td>' . self::h($q['name']) . '</td>';
                foreach (['ready', 'delayed', 'leased', 'dead'] as $state) {
                    $html .= '<td class="n ' . $state . ($state === 'dead' && $q['dead'] > 0 ? ' alert' : '') . '">' . $q[$state] . '</td>';
                }
                $html .= '</tr>';
            }
        }
        return $html . '</table>';
    }

    private function overview(Report $report, ?string $flash): string
    {
        $queues = $report->queues(true);
        $html = $flash ? '<p class="flash" id="flash">' . self::h($flash) . '</p>' : '';
        $html .= '<h2>Queues</h2>';
        if ($queues === []) {
            $html .= '<p>No queues yet: a queue appears with its first enqueue.</p>';
        } else {
            $html .= '<table id="queues"><tr><th>Queue</th>' . self::countHeaders() . ''
                . '<th>Oldest due</th><th>In / min</th><th>Done / min<br><small title="runtime p50 / p95 over the last ' . (Report::TIMINGS_OVER / 60)
                . ' minutes of recent attempts">run p50/p95</small></th><th>Failed / min<br><small>dead letters</small></th><th>Last 10 minutes '
                . '<span class="in">■ enqueued</span> <span class="done">■ acked</span></th><th></th></tr>';
            foreach ($queues as $q) {
                $paused = $q['paused'] !== null;
                $html .= '<tr data-queue="' . self::h($q['name']) . '"' . ($paused ? ' class="paused"' : '') . '><td><a href="?'
                    . self::h(http_build_query(['queue' => $q['name']])) . '">' . self::h($q['name']) . '</a>'
                    . ($paused ? ' <span class="state" title="since ' . date('Y-m-d H:i:s T', (int) $q['paused']) . '">paused</span>' : '')
                    . ($q['throttled'] !== null ? ' <span class="state" title="until ' . date('Y-m-d H:i:s T', (int) $q['throttled']) . '">throttled</span>' : '') . '</td>';
                foreach (['ready', 'delayed', 'leased', 'dead'] as $state) {
                    $alert = $state === 'dead' && $q['dead'] > 0 ? ' alert' : '';
                    $html .= '<td class="n ' . $state . $alert . '">' . $q[$state] . '</td>';
                }
                $html .= '<td class="n">' . ($q['oldestDueAge'] === null ? '–' : sprintf('%.1f s', $q['oldestDueAge'])) . '</td>'
                    . '<td class="n">' . $q['perMinute']['enqueued'] . '</td><td class="n">' . $q['perMinute']['acked']
                    . '<br><small class="runtime">' . self::quantiles($q['timings']['runtime'], '/') . '</small></td>'
                    . '<td class="n failed' . ($q['perMinute']['dead'] > 0 ? ' alert' : '') . '">' . $q['perMinute']['dead'] . '</td>'
                    . '<td>' . self::chart($q['history']) . '</td><td class="actions">'
                    . ($paused ? $this->form('resume', 'Resume', ['queue' => $q['name']], 'resume')
                        : $this->form('pause', 'Pause', ['queue' => $q['name']], 'pause'))
                    . $this->form('clear', 'Clear', ['queue' => $q['name']], 'clear danger') . '</td></tr>';
            }
            $html .= '</table>';
        }
        $html .= $this->otherPrefixes($report);
        $html .= $this->running($report, $queues) . $this->workers($report, $queues);
        $html .= '<h2>Dead letters</h2>';
        $any = false;
        foreach ($queues as $q) {
            if ($q['dead'] === 0) {
                continue;
            }
            $any = true;
            $fields = ['queue' => $q['name']];
            $html .= '<section class="dead" data-queue="' . self::h($q['name']) . '"><h3>' . self::h($q['name'])
                . ' <small>' . $q['dead'] . ' dead</small> '
                . $this->form('retry', 'Retry all', $fields, 'retry-all')
                . $this->form('purge', 'Purge all', $fields, 'purge-all danger') . '</h3>'
                . '<table><tr><th>Task</th><th>Attempts</th><th>Died</th><th>Why</th><th>Payload</th><th></th></tr>';
            foreach ($report->dead($q['name'], self::DEAD_SHOWN) as $t) {
                $one = $fields + ['id' => $t['id']];
                $payload = self::cut($t['payload']);
                $html .= '<tr data-task="' . self::h($t['id']) . '"><td><a href="?' . self::h(http_build_query(['queue' => $q['name'], 'task' => $t['id']]))
                    . '">' . self::h($t['id']) . '</a>' . self::job($t['payload']) . '</td><td class="n">' . $t['attempts']
                    . '</td><td>' . date('Y-m-d H:i:s T', (int) $t['diedAt']) . '</td><td class="reason">' . self::h($t['reason'] ?? '–')
                    . '</td><td><code>' . self::h($payload) . '</code></td><td>'
                    . $this->form('retry', 'Retry', $one, 'retry') . $this->form('purge', 'Purge', $one, 'purge danger') . '</td></tr>';
            }
            $html .= '</table>' . ($q['dead'] > self::DEAD_SHOWN
                ? '<p class="more">Showing the oldest ' . self::DEAD_SHOWN . " of {$q['dead']} dead letters (the CLI's <code>dead NAME --limit=N</code> lists more).</p>" : '')
                . '</section>';
        }
        if (!$any) {
            $html .= '<p id="no-dead">No dead letters.</p>';
        }
        $html .= '<h2>Locks</h2>';
        try {
            // One more than shown, to know whether there are more.
            $locks = $report->locks(null, self::LOCKS_SHOWN + 1);
        } catch (\ValueError $e) {
            return $html . '<p>' . self::h($e->getMessage()) . '</p>' . $this->footer();
        }
        if ($locks === []) {
            $html .= '<p>No locks.</p>';
        } else {
            $more = count($locks) > self::LOCKS_SHOWN;
            $html .= '<table id="locks"><tr><th>Lock</th><th>Kind</th><th>Held</th><th>Lease left</th><th>Fencing token</th><th>Waiting</th><th>Holder</th><th></th></tr>';
            foreach (array_slice($locks, 0, self::LOCKS_SHOWN) as $l) {
                $holder = $l['holder'] ? "{$l['holder']['host']} · pid {$l['holder']['pid']} · {$l['holder']['process']}" : '–';
                $left = !$l['held'] ? '–' : ($l['remaining'] === null ? 'no expiry' : sprintf('%.1f s', $l['remaining']));
                $html .= '<tr data-lock="' . self::h($l['name']) . '"><td>' . self::h($l['name']) . '</td><td>' . $l['kind'] . '</td><td>'
                    . self::h(Report::held($l)) . '</td><td class="n">' . $left . '</td><td class="n">' . ($l['token'] ?? '–')
                    . '</td><td class="n waiting">' . $l['waiting'] . '</td><td class="holder">' . self::h($holder) . '</td><td>'
                    . ($l['held'] ? $this->form('unlock', 'Force unlock', ['name' => $l['name'], 'kind' => $l['kind']], 'unlock danger') : '')
                    . '</td></tr>';
            }
            $html .= '</table>' . ($more ? '<p class="more">Showing the first ' . self::LOCKS_SHOWN
                . " locks; there are more (the CLI's <code>locks PATTERN --limit=N</code> lists up to 10000).</p>" : '');
        }
        return $html . $this->footer();
    }

    /** Rows shown per list of running tasks and of workers. */
    private const ROWS_SHOWN = 20;

    /** The headers of a queue's counts, as the CLI names them too (View::COUNTS). */
    private static function countHeaders(): string
    {
        return implode('', array_map(fn ($w) => "<th>$w</th>", View::COUNTS));
    }

    /**
     * The tasks running now, per queue: worker, for how long, lease left;
     * apart, those whose lease ran out (View::leased()), which no worker
     * runs any more.
     */
    private function running(Report $report, array $queues): string
    {
        $rows = ['running' => '', 'overdue' => ''];
        $shown = $total = 0;
        $now = microtime(true);
        foreach ($queues as $q) {
            $total += $q['leased'];
            if ($q['leased'] === 0 || $shown >= self::ROWS_SHOWN) {
                continue;
            }
            foreach (View::leased($report->running($q['name'], self::ROWS_SHOWN - $shown), $now) as $which => $tasks) {
                foreach ($tasks as $t) {
                    $shown++;
                    $worker = $t['worker'] ? "{$t['worker']['host']} · pid {$t['worker']['pid']} · {$t['worker']['process']}" : '–';
                    $rows[$which] .= '<tr data-queue="' . self::h($q['name']) . '" data-task="' . self::h($t['id']) . '"><td>' . self::h($q['name'])
                        . '</td><td>' . self::h($t['id']) . self::job($t['payload']) . '</td><td class="worker">' . self::h($worker) . '</td><td class="n">'
                        . ($t['for'] === null ? '–' : sprintf('%.1f s', $t['for'])) . '</td><td class="n' . ($which === 'overdue' ? ' expired' : '') . '">'
                        . self::h($t['left']) . '</td><td class="n">' . $t['attempts'] . '</td></tr>';
                }
            }
        }
        if ($total === 0) {
            return '<h2>Running</h2><p id="none-running">Nothing running.</p>';
        }
        $head = '<tr><th>Queue</th><th>Task</th><th>Worker</th><th>For</th><th>Lease left</th><th>Attempts</th></tr>';
        $html = '<h2>Running</h2>' . ($rows['running'] === '' ? '<p id="none-running">Nothing running.</p>'
            : '<table id="running">' . $head . $rows['running'] . '</table>');
        if ($rows['overdue'] !== '') {
            $html .= '<h3>Leases that ran out</h3><p>No longer their worker\'s: the next reserve takes each back.</p>'
                . '<table id="overdue">' . str_replace('Lease left', 'Lease', $head) . $rows['overdue'] . '</table>';
        }
        return $html . ($shown < $total ? "<p class=\"more\">Showing $shown of $total running tasks (the CLI's <code>running NAME --limit=N</code> lists more).</p>" : '');
    }

    /** The processes consuming each queue: seen within the last day. */
    private function workers(Report $report, array $queues): string
    {
        $rows = '';
        $shown = 0;
        $more = false;
        $now = microtime(true);
        foreach ($queues as $q) {
            $workers = $report->workers($q['name'], self::ROWS_SHOWN + 1);
            foreach ($workers as $w) {
                if ($shown >= self::ROWS_SHOWN) {
                    $more = true;
                    break 2;
                }
                $shown++;
                $rows .= '<tr data-queue="' . self::h($q['name']) . '" data-worker="' . self::h($w['id']) . '"' . ($w['gone'] ? ' class="gone"' : '') . '><td>' . self::h($q['name'])
                    . '</td><td class="worker">' . self::h($w['host'] === null ? $w['id'] : "{$w['host']} · pid {$w['pid']}") . '</td><td>'
                    . self::h($w['process'] ?? '–') . '</td><td>' . ($w['since'] === null ? '–' : date('Y-m-d H:i:s T', (int) $w['since']))
                    . '</td><td class="n seen">' . Report::seen(max(0, $now - $w['seen']))
                    . ($w['gone'] ? ' <span class="state" title="not seen for over ' . $report->goneAfter() . ' s, running none of its tasks">gone</span>' : '')
                    . '</td><td class="n done">' . $w['done'] . '</td></tr>';
            }
        }
        if ($shown === 0) {
            return '<h2>Workers</h2><p id="no-workers">No worker seen in the last day.</p>';
        }
        return '<h2>Workers</h2><table id="workers"><tr><th>Queue</th><th>Worker</th><th>Runs</th><th>Since</th><th>Last seen</th><th>Done</th></tr>'
            . $rows . '</table>' . ($more ? "<p class=\"more\">Showing the first $shown workers (the CLI's <code>workers NAME --limit=N</code> lists more).</p>" : '');
    }

    private function footer(): string
    {
        return '<footer>Read at ' . date('Y-m-d H:i:s T') . ', refreshed every 15 s. '
            . $this->form('logout', 'Sign out', [], 'logout') . '</footer>';
    }

    /** Enqueued and acked per 10 s as two series of bars, in SVG. */
    private static function chart(array $periods): string
    {
        $max = 1;
        foreach ($periods as $p) {
            $max = max($max, $p['enqueued'], $p['acked']);
        }
        $bars = '';
        // A log scale: 10 acked beside a bulk enqueue of 3,000 stand a
        // quarter as high, where a linear scale would draw nothing.
        $scale = 40 / log10(1 + $max);
        foreach ($periods as $i => $p) {
            foreach (['enqueued' => [0, 'in'], 'acked' => [2, 'done']] as $counter => [$dx, $class]) {
                $h = round($scale * log10(1 + $p[$counter]), 1);
                if ($h > 0) {
                    $bars .= sprintf('<rect class="%s" x="%d" y="%.1f" width="2" height="%.1f"><title>%s %s: %d</title></rect>', $class, $i * 5 + $dx, 40 - $h, $h, date('H:i:s', $p['at']), $counter, $p[$counter]);
                }
            }
        }
        // A time axis: ticks every 5 minutes, labelled by the end of the period they mark.
        $axis = '';
        $end = ($periods === [] ? time() - 10 : $periods[count($periods) - 1]['at']) + 10;
        foreach ([0 => 'start', 30 => 'middle', 60 => 'end'] as $i => $anchor) {
            $at = $periods[$i]['at'] ?? $end;
            $x = min($i * 5, 299.5);
            $axis .= sprintf('<line x1="%.1f" y1="40" x2="%.1f" y2="43" class="axis"/><text x="%.1f" y="52" text-anchor="%s">%s</text>', $x, $x, $x, $anchor, date('H:i', $at));
        }
        return '<svg class="chart" width="300" height="54" viewBox="0 0 300 54" role="img" aria-label="enqueued and acked per 10 s, peak ' . $max . ', log scale">'
            . '<line x1="0" y1="39.5" x2="300" y2="39.5" class="axis"/>' . $bars . $axis . '</svg>';
    }

    private function page(string $title, string $body): string
    {
        $refresh = empty($_SESSION['in']) ? '' : '<meta http-equiv="refresh" content="15">';
        $where = $this->url === null ? 'the default Redis (redislock.default_dsn)' : self::where($this->url);
        return '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">' . $refresh
            . '<meta name="viewport" content="width=device-width, initial-scale=1"><title>' . self::h($title) . ' · redislock</title>'
            . '<style>' . self::STYLE . '</style></head><body><header><h1>redislock</h1><span>' . self::h($where) . '</span></header>'
            . '<main>' . $body . '</main></body></html>';
    }

    /**
     * Which Redis a DSN names, as the header shows it: host:port, the
     * database when it is not 0 and the prefix (never the user or
     * password); 'Redis' for
     * a DSN this cannot read (several nodes).
     */
    private static function where(string $dsn): string
    {
        $parts = parse_url($dsn);
        if (!is_array($parts) || !isset($parts['host'])) {
            return 'Redis';
        }
        $db = trim($parts['path'] ?? '', '/');
        parse_str($parts['query'] ?? '', $query);
        $db = $db !== '' ? $db : (string) ($query['database'] ?? '');
        $prefix = (string) ($query['prefix'] ?? '');
        return $parts['host'] . ':' . ($parts['port'] ?? 6379) . ($db !== '' && $db !== '0' ? " db $db" : '')
            . ($prefix !== '' ? " prefix $prefix" : '');
    }

    private static function h(string $text): string
    {
        return htmlspecialchars($text, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
    }

    private const STYLE = <<<'CSS'
        body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
        header { background: #1d2330; color: #fff; padding: 10px 24px; display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: baseline; overflow-wrap: anywhere; }
        header h1 { margin: 0; font-size: 18px; }
        main { padding: 8px 24px 24px; }
        h2 { font-size: 16px; margin: 24px 0 8px; }
        h3 { font-size: 14px; margin: 12px 0 6px; }
        #recent tr.dead td.outcome, #recent tr.nacked td.outcome, #recent tr.expired td.outcome { color: #b42318; }
        table { border-collapse: collapse; background: #fff; box-shadow: 0 1px 2px #0002; display: block; max-width: 100%; overflow-x: auto; }
        th, td { padding: 6px 10px; border-bottom: 1px solid #e3e6ea; text-align: left; vertical-align: middle; }
        th { white-space: nowrap; }
        td:first-child, td.holder, td.worker { min-width: 8em; max-width: 24em; overflow-wrap: anywhere; }
        h2, h3, p { overflow-wrap: anywhere; }
        pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; padding: 8px 10px; box-shadow: 0 1px 2px #0002; }
        pre.json { white-space: pre; overflow-wrap: normal; overflow-x: auto; }
        tr.gone td { color: #888; }
        th { background: #eef0f3; font-weight: 600; }
        td.n { text-align: right; font-variant-numeric: tabular-nums; }
        td.alert { color: #b42318; font-weight: 600; }
        span.state { background: #fef0c7; color: #93370d; border-radius: 4px; padding: 0 6px; font-size: 12px; font-weight: 600; }
        td.actions { white-space: nowrap; }
        .chart .in, span.in { fill: #2f6fdf; color: #2f6fdf; }
        .chart .done, span.done { fill: #1a9a5b; color: #1a9a5b; }
        .chart .axis { stroke: #c4c9d0; }
        .chart text { font-size: 9px; fill: #5b6472; }
        form.inline { display: inline; margin-left: 4px; }
        button { font: inherit; padding: 2px 10px; border: 1px solid #9aa3ae; border-radius: 4px; background: #fff; cursor: pointer; }
        button.danger { border-color: #d92d20; color: #b42318; }
        .flash { background: #e6f4ea; border: 1px solid #1a9a5b; padding: 6px 10px; display: inline-block; }
        .error { background: #fdecea; border: 1px solid #d92d20; padding: 6px 10px; display: inline-block; }
        footer { margin-top: 24px; color: #5b6472; }
        code { font-size: 12px; overflow-wrap: anywhere; }
        @media (max-width: 600px) { header, main { padding-left: 10px; padding-right: 10px; } th, td { padding: 4px 6px; } }
        CSS;
}
