<?php
// One server's `php artisan schedule:run` on the test application, with the
// schedule LaravelScheduleTest runs: an event every minute and one every
// five minutes, both onOneServer(), each run appended to $log as
// "<event> <tick>"; $store is the cache store the scheduler uses (`redis`:
// the redislock driver, `stock`: Laravel's own).
// php schedule.php <host> <port> <store> <log> <tick>

use Illuminate\Console\Scheduling\Schedule;
use Illuminate\Console\Scheduling\ScheduleRunCommand;

require __DIR__ . '/boot.php';

[, $host, $port, $store, $log, $tick] = $argv;
$app = laravel_app($host, (int) $port);
$app['config']->set('cache.default', $store);
$app->instance('env', 'production');
$app->singleton(Schedule::class, function () use ($log, $tick) {
    $schedule = new Schedule();
    foreach (['minute' => 'everyMinute', 'five' => 'everyFiveMinutes'] as $event => $frequency) {
        $schedule->call(fn () => file_put_contents($log, "$event $tick\n", FILE_APPEND | LOCK_EX))
            ->name($event)->$frequency()->onOneServer();
    }
    return $schedule;
});
$artisan = new Illuminate\Console\Application($app, $app['events'], 'tests');
$artisan->setAutoExit(false);
$artisan->resolveCommands([ScheduleRunCommand::class]);
// Laravel 10 registers named commands lazily, through its command loader.
if (method_exists($artisan, 'setContainerCommandLoader')) {
    $artisan->setContainerCommandLoader();
}
exit($artisan->run(new Symfony\Component\Console\Input\ArgvInput(['artisan', 'schedule:run'])));
