<?php
/** The app's connections by name, from its own config. */
class RedisFactory
{
    private static $config = ['order' => ['host' => '127.0.0.1', 'port' => {{PORT}}, 'db' => 2]];

    public static function get($name)
    {
        $c = self::$config[$name];
        $redis = new Redis();
        $redis->connect($c['host'], $c['port']);
        $redis->select($c['db']);
        return $redis;
    }
}
