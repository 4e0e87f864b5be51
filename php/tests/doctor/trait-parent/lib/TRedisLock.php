<?php
namespace App\Cache;

/** Named locks mixed into the app's cache store, which has a parent already. */
trait TRedisLock
{
    private array $lockedNames = [];

    public function lock($name, $timeout = 0, $expire = 15)
    {
        if ($this->redis->set("Lock:$name", time() + $expire, ['nx', 'ex' => $expire])) {
            $this->lockedNames[$name] = true;
            return true;
        }
        return false;
    }

    public function unlock($name)
    {
        unset($this->lockedNames[$name]);
        return (bool) $this->redis->del("Lock:$name");
    }

    public function isLocking($name)
    {
        return isset($this->lockedNames[$name]) && $this->redis->exists("Lock:$name") > 0;
    }

    public function unlockAll()
    {
        $all = true;
        foreach (array_keys($this->lockedNames) as $name) {
            $all = $this->unlock($name) && $all;
        }
        return $all;
    }
}
