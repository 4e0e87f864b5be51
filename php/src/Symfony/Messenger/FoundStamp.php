<?php

declare(strict_types=1);

namespace RedisLock\Symfony\Messenger;

use Symfony\Component\Messenger\Stamp\NonSendableStampInterface;

/**
 * A message `find()` or `all()` returned: its id and queue. `ack()` and
 * `reject()` remove it from the queue (Messenger's `failed:retry` and
 * `failed:remove` commands work on such envelopes).
 */
final class FoundStamp implements NonSendableStampInterface
{
    public function __construct(public readonly string $id, public readonly string $queue)
    {
    }
}
