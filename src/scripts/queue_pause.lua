-- include: queue_task.lua
-- flags: allow-oom
-- Pause or resume a queue's consumers. While the stats hash has the field
-- 'paused' (the server time it was paused at, in ms), reserve() and the
-- seed's pop() take nothing; leased tasks finish (or run out) as usual and
-- producers go on enqueueing. Resuming wakes one waiting consumer per task
-- due now, and the first in line for tasks due later.
-- KEYS: see queue_task.lua.
-- ARGV[1] 'pause' | 'resume'; ARGV[2] consumer key prefix; ARGV[3] how long
-- a wake-up waits for its consumer, in ms.
-- Returns 1 when the queue's state changed, 0 when it already was so.
queue_need(9, 10)
local now = queue_now()
if ARGV[1] == 'pause' then
  return redis.call('HSETNX', KEYS[10], 'paused', string.format('%.0f', math.floor(now * 1000)))
end
if redis.call('HDEL', KEYS[10], 'paused') == 0 then return 0 end
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', string.format('%.17g', now))
queue_wake(KEYS[9], ARGV[2], ready, redis.call('ZCARD', KEYS[1]) > ready, ARGV[3])
return 1
