<?php
// Starts a private redis-server on a free loopback port for the whole suite
// and points the extension's default DSN at it.

if (!extension_loaded('redislock')) {
    fwrite(STDERR, "the redislock extension is not loaded: run the suite with `make test`\n");
    exit(1);
}

require __DIR__ . '/RedisServer.php';
require __DIR__ . '/TestCase.php';
require __DIR__ . '/FpmPool.php';
require __DIR__ . '/Topologies.php';

RedisServer::$main = RedisServer::start();
ini_set('redislock.default_dsn', RedisServer::$main->dsn());
