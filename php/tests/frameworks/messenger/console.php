<?php
// Messenger's failed-message commands, as an app's bin/console runs them,
// with a redislock transport as the failure transport:
// php console.php <dsn> <record file> messenger:failed:<show|retry|remove> [args...]
// The bus handles Recorded messages (see worker.php); a retried message
// that fails again goes back to the failure transport.

require '/usr/share/php/Symfony/Component/Messenger/autoload.php';
require '/usr/share/php/Symfony/Component/EventDispatcher/autoload.php';
require '/usr/share/php/Symfony/Component/Console/autoload.php';
require_once '/usr/share/php/Psr/Container/autoload.php';
require __DIR__ . '/autoload.php';
require __DIR__ . '/Recorded.php';

use Symfony\Component\Console\Application;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\Messenger\Command\FailedMessagesRemoveCommand;
use Symfony\Component\Messenger\Command\FailedMessagesRetryCommand;
use Symfony\Component\Messenger\Command\FailedMessagesShowCommand;
use Symfony\Component\Messenger\EventListener\SendFailedMessageToFailureTransportListener;
use Symfony\Component\Messenger\Handler\HandlersLocator;
use Symfony\Component\Messenger\MessageBus;
use Symfony\Component\Messenger\Middleware\HandleMessageMiddleware;
use Symfony\Component\Messenger\Transport\Serialization\PhpSerializer;
use Symfony\Contracts\Service\ServiceLocatorTrait;
use Symfony\Contracts\Service\ServiceProviderInterface;

[$dsn, $file] = array_splice($argv, 1, 2);
$failed = (new RedisLock\Symfony\Messenger\TransportFactory())->createTransport($dsn, [], new PhpSerializer());
$bus = new MessageBus([new HandleMessageMiddleware(new HandlersLocator([Recorded::class => [
    function (Recorded $m) use ($file): void {
        $m->handle($file);
    },
]]))]);
$locator = new class (['failed' => fn () => $failed]) implements ServiceProviderInterface {
    use ServiceLocatorTrait;
};
$events = new EventDispatcher();
$events->addSubscriber(new SendFailedMessageToFailureTransportListener($locator));
$app = new Application('console');
$app->setAutoExit(false);
$app->add(new FailedMessagesShowCommand('failed', $locator));
$app->add(new FailedMessagesRetryCommand('failed', $locator, $bus, $events));
$app->add(new FailedMessagesRemoveCommand('failed', $locator));
exit($app->run(new Symfony\Component\Console\Input\ArgvInput($argv)));
