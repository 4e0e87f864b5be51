<?php
/** The app's connections by name. */
class RedisFactory
{
    private static $config = ['lock' => ['host' => '127.0.0.1', 'port' => {{PORT}}]];

    public static function get($name = null)
    {
        $c = self::$config[$name ?? 'lock'];
        $redis = new Redis();
        $redis->connect($c['host'], $c['port']);
        return $redis;
    }
}
