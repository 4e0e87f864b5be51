<?php
// A Messenger worker (Symfony\Component\Messenger\Worker) on the redislock
// transport, with Messenger's retry (SendFailedMessageForRetryListener,
// no delay): php worker.php <dsn> <record file>. A Recorded message sleeps
// its ms, fails its first `fail` deliveries, then appends "<n> <pid>" to
// the record file. Stops on SIGTERM after the current message.

require '/usr/share/php/Symfony/Component/Messenger/autoload.php';
require '/usr/share/php/Symfony/Component/EventDispatcher/autoload.php';
require_once '/usr/share/php/Psr/Container/autoload.php';
require __DIR__ . '/autoload.php';
require __DIR__ . '/Recorded.php';

use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\Messenger\EventListener\SendFailedMessageForRetryListener;
use Symfony\Component\Messenger\EventListener\StopWorkerOnSigtermSignalListener;
use Symfony\Component\Messenger\Handler\HandlersLocator;
use Symfony\Component\Messenger\MessageBus;
use Symfony\Component\Messenger\Middleware\HandleMessageMiddleware;
use Symfony\Component\Messenger\Retry\MultiplierRetryStrategy;
use Symfony\Component\Messenger\Transport\Serialization\PhpSerializer;
use Symfony\Component\Messenger\Worker;

[, $dsn, $file] = $argv;
$transport = (new RedisLock\Symfony\Messenger\TransportFactory())->createTransport($dsn, [], new PhpSerializer());
$bus = new MessageBus([new HandleMessageMiddleware(new HandlersLocator([Recorded::class => [
    function (Recorded $m) use ($file): void {
        $m->handle($file);
    },
]]))]);
$one = fn ($service) => new class ($service) implements Psr\Container\ContainerInterface {
    public function __construct(private $service) {}
    public function get(string $id) { return $this->service; }
    public function has(string $id): bool { return true; }
};
$events = new EventDispatcher();
$events->addSubscriber(new SendFailedMessageForRetryListener($one($transport), $one(new MultiplierRetryStrategy(3, 0))));
$events->addSubscriber(new StopWorkerOnSigtermSignalListener());
pcntl_async_signals(true);
echo "working\n";
(new Worker(['redislock' => $transport], $bus, $events))->run(['sleep' => 0]);
