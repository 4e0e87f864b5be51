<?php
// Laravel's queue console commands (queue:clear, queue:monitor) on the test
// application, as `php artisan` runs them:
// php artisan.php <host> <port> <command> [args...]

require __DIR__ . '/boot.php';

[$host, $port] = array_splice($argv, 1, 2);
$app = laravel_app($host, (int) $port);
// As in production: queue:clear asks unless --force.
$app->instance('env', 'production');
$artisan = new Illuminate\Console\Application($app, $app['events'], 'tests');
$artisan->setAutoExit(false);
$artisan->resolveCommands([Illuminate\Queue\Console\ClearCommand::class, Illuminate\Queue\Console\MonitorCommand::class]);
// Laravel 10 registers named commands lazily, through its command loader.
if (method_exists($artisan, 'setContainerCommandLoader')) {
    $artisan->setContainerCommandLoader();
}
exit($artisan->run(new Symfony\Component\Console\Input\ArgvInput($argv)));
