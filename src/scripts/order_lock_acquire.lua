-- Lock_Service::addLock: take the order lock with a fresh id from the shared
-- counter, in one step, so the id is spent only when the lock is taken.
-- KEYS[1] order lock key; KEYS[2] id counter; ARGV[1] lease in ms.
-- Returns the new id, or 0 when the order is already locked.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local id = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], id, 'PX', ARGV[1])
return id
