<?php
/** A delay queue on a sorted set (this app's copy, without the lock). */
class RedisQueue
{
    private $redis;

    public function __construct($param = null)
    {
        $this->redis = new Redis();
        $this->redis->connect('127.0.0.1', {{PORT}});
    }

    public function enqueue($name, $id, $timeout = 10, $afterInterval = 0)
    {
        if (empty($name) || empty($id) || $timeout <= 0) return false;
        foreach ((array) $id as $one) {
            if ($this->redis->zScore("Queue:$name", $one) === false) {
                $this->redis->zAdd("Queue:$name", microtime(true) + $afterInterval, $one);
            }
        }
        return true;
    }

    public function dequeue($name, $id, $score, $timeout = 10)
    {
        if (empty($name) || empty($id) || empty($score)) return false;
        $result = false;
        if ($this->redis->zScore("Queue:$name", $id) == $score) {
            $result = (float) $this->redis->zRem("Queue:$name", $id);
        }
        return $result;
    }

    public function pop($name, $count = 1, $timeout = 10)
    {
        if (empty($name) || $count <= 0) return [];
        $result = [];
        foreach ($this->redis->zRangeByScore("Queue:$name", '-inf', sprintf('%.6f', microtime(true)), ['withscores' => true, 'limit' => [0, $count]]) as $id => $score) {
            if ($this->redis->zRem("Queue:$name", $id)) {
                $result[] = ['id' => $id, 'score' => (float) $score];
            }
        }
        return $count == 1 ? (empty($result) ? false : $result[0]) : $result;
    }

    public function top($name, $count = 1)
    {
        if (empty($name) || $count < 1) return [];
        $result = [];
        foreach ($this->redis->zRangeByScore("Queue:$name", '-inf', sprintf('%.6f', microtime(true)), ['withscores' => true, 'limit' => [0, $count]]) as $id => $score) {
            $result[] = ['id' => $id, 'score' => (float) $score];
        }
        return $count == 1 ? (empty($result) ? false : $result[0]) : $result;
    }
}
