<?php

declare(strict_types=1);

namespace RedisLock\Symfony\Messenger;

use Symfony\Component\Messenger\Stamp\StampInterface;

/**
 * Sends the envelope to this queue of the transport instead of its first,
 * where the transport serves a queue of that name; a transport that does
 * not (a failure transport) sends it to its first queue.
 */
final class QueueStamp implements StampInterface
{
    public function __construct(public readonly string $queue)
    {
    }
}
