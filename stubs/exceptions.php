<?php

// Stubs for redislock: exception classes

namespace RedisLock {
    class ConnectionException extends \RedisLock\RedisLockException {}
    class LockLostException extends \RedisLock\RedisLockException {}
    class NotAcquiredException extends \RedisLock\RedisLockException {}
    class NotHeldException extends \RedisLock\RedisLockException {}
    class QueueFullException extends \RedisLock\RedisLockException {}
    class RedisLockException extends \RuntimeException {}
    class ServerException extends \RedisLock\RedisLockException {}
}
