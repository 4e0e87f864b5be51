<?php

namespace RedisLock\Symfony\Messenger;

use Symfony\Component\Messenger\Stamp\StampInterface;

/** Sends the envelope to this queue of the transport instead of its first. */
final class QueueStamp implements StampInterface
{
    public function __construct(public readonly string $queue)
    {
    }
}
