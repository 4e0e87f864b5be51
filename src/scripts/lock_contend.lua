-- Acquire after a plain SET NX PX failed: retry it, take over a key left with
-- no TTL (an old client died between SETNX and EXPIRE), else report how long
-- the holder's lease still runs so a waiter knows when to look again.
-- KEYS[1] lock key; ARGV[1] owner token; ARGV[2] lease in ms.
-- Returns 0 when acquired, else the holder's remaining lease in ms (>= 1).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -1 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 0
end
return pttl + 1
