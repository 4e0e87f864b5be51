<?php

declare(strict_types=1);

namespace RedisLock\Symfony\Messenger;

use RedisLock\Task;
use Symfony\Component\Messenger\Stamp\NonSendableStampInterface;

/** The leased task a received envelope came from, and its queue. */
final class ReceivedStamp implements NonSendableStampInterface
{
    public function __construct(public readonly Task $task, public readonly string $queue)
    {
    }
}
