-- What the queue scripts share for counting (prepended to the scripts that
-- move tasks): in the queue's stats hash, a total per counter since the
-- queue was first used, and the same counters per 10 s of server time over
-- the last 10 minutes: a ring of 60 slots, slot s holding the period in
-- 't'..s and its counts in '<counter>:'..s, cleared when a newer period
-- takes the slot. The history costs one HGET per count; nothing prunes it.
local QUEUE_COUNTERS = {'enqueued', 'acked', 'nacked', 'retried', 'dead', 'expired'}

-- Adds n to the counter at server time now (seconds). Returns the new
-- total (0 when n is 0: nothing happened, nothing is written).
local function queue_count(stats, now, counter, n)
  if n <= 0 then return 0 end
  local period = math.floor(now / 10)
  local slot = period % 60
  local stamp = 't' .. slot
  if tonumber(redis.call('HGET', stats, stamp)) ~= period then
    local old = {}
    for i, name in ipairs(QUEUE_COUNTERS) do old[i] = name .. ':' .. slot end
    redis.call('HDEL', stats, unpack(old))
    redis.call('HSET', stats, stamp, string.format('%d', period))
  end
  redis.call('HINCRBY', stats, counter .. ':' .. slot, n)
  return redis.call('HINCRBY', stats, counter, n)
end

-- The server's clock in seconds.
local function queue_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
