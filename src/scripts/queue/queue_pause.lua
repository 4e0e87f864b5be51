-- include: queue_task.lua
-- flags: allow-oom
-- Pause, resume or throttle a queue's consumers. While the stats hash has
-- the field 'paused' (the server time it was paused at, in ms), or its
-- field 'throttled' holds a server time (ms) still to come, reserve() and
-- the seed's pop() take nothing; leased tasks finish (or run out) as usual
-- and producers go on enqueueing. Resuming (and ending a throttle) wakes
-- one waiting consumer per task due now, and the first in line for tasks
-- due later; a throttle that runs out is seen by the first in line, whose
-- wait ends with it (queue_reserve.lua).
-- KEYS: see queue_task.lua.
-- ARGV[1] 'pause' | 'resume' | 'throttle'; ARGV[2] consumer key prefix;
-- ARGV[3] how long a wake-up waits for its consumer, in ms; ARGV[4] (a
-- throttle) its seconds from now, 0 ending it.
-- Returns 1 when the queue's state changed, 0 when it already was so; a
-- throttle, the ms it has left (0: none).
queue_need(9, 10)
local now = queue_now()
local nowMs = math.floor(now * 1000)
if ARGV[1] == 'pause' then
  return redis.call('HSETNX', KEYS[10], 'paused', string.format('%.0f', nowMs))
end
if ARGV[1] == 'throttle' then
  local seconds = tonumber(ARGV[4])
  local was = tonumber(redis.call('HGET', KEYS[10], 'throttled'))
  if seconds > 0 then
    -- The longer throttle wins: a worker's short one does not end another's.
    local untilMs = math.ceil((now + seconds) * 1000)
    if was and was > untilMs then return was - nowMs end
    redis.call('HSET', KEYS[10], 'throttled', string.format('%.0f', untilMs))
    return untilMs - nowMs
  end
  if redis.call('HDEL', KEYS[10], 'throttled') == 0 or not was or was <= nowMs
    or redis.call('HEXISTS', KEYS[10], 'paused') == 1 then
    return 0
  end
elseif redis.call('HDEL', KEYS[10], 'paused') == 0 then
  return 0
else
  local held = tonumber(redis.call('HGET', KEYS[10], 'throttled'))
  if held and held > nowMs then
    -- Still throttled: the first in line learns for how long.
    queue_wake(KEYS[9], ARGV[2], 0, true, ARGV[3])
    return 1
  end
end
queue_wake_due(now, ARGV[2], ARGV[3])
return ARGV[1] == 'throttle' and 0 or 1
