<?php

declare(strict_types=1);

namespace RedisLock\Symfony\Messenger;

use Symfony\Component\Messenger\Stamp\StampInterface;

/**
 * Handles the message once per key across every worker (OnceMiddleware):
 * the first worker to receive a message stamped `$key` runs its handlers,
 * the others acknowledge theirs without running them. `$retryAfter`
 * (seconds): a run whose worker died without finishing may be run again
 * after it (null: never); `$keep` (seconds): how long the key is
 * remembered.
 */
final class OnceStamp implements StampInterface
{
    public function __construct(
        public readonly string $key,
        public readonly ?float $retryAfter = null,
        public readonly float $keep = 86400,
    ) {
    }
}
