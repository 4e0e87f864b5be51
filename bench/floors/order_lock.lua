-- The least Lock_Service::addLock that keeps its promise: the id comes from
-- the shared counter the seed's copies INCR (`lock_unique_id`), and is
-- spent only when the order lock is taken. Released with
-- compare_and_delete.lua.
-- Leaves out: a counter written by hand (text, another type) failing by
-- name before anything is written, and waking a waiter of the same key.
-- KEYS[1] order lock; KEYS[2] counter; ARGV[1] lease in ms.
-- Returns the new id, or 0 when the order is locked.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local id = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], id, 'PX', ARGV[1])
return id
