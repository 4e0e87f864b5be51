<?php
namespace App\Support;

/** Locking mixed into services. */
trait RedisLockTrait
{
    protected $lockedNames = [];
    public function lock($name, $timeout = 0, $expire = 15) { return (bool) $this->redis->set("Lock:$name", time() + $expire, ['nx', 'ex' => $expire]); }
    public function unlock($name) { return (bool) $this->redis->del("Lock:$name"); }
    public function unlockAll() { foreach ($this->lockedNames as $n => $_) { $this->unlock($n); } return true; }
}
