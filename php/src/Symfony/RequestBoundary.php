<?php

declare(strict_types=1);

namespace RedisLock\Symfony;

use RedisLock\Runtime;
use Symfony\Contracts\Service\ResetInterface;

/**
 * The request boundary as a Symfony service: tagged `kernel.reset`, it is
 * reset between two requests of a worker runtime (Symfony Runtime with
 * RoadRunner, FrankenPHP or Swoole) and after each message of
 * `messenger:consume`, and then ends the request for the locks
 * (`RedisLock\Runtime::endRequest()`).
 */
final class RequestBoundary implements ResetInterface
{
    public function reset(): void
    {
        Runtime::endRequest();
    }
}
