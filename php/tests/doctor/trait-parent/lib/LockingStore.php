<?php
namespace App\Cache;

class LockingStore extends Store
{
    use TRedisLock;
}
