<?php

// Stubs for redislock: exception classes

namespace RedisLock {
    class ConnectionException extends \RedisLock\RedisLockException {}
    class RedisLockException extends \RuntimeException {}
    class ServerException extends \RedisLock\RedisLockException {}
}
