-- flags: allow-oom
-- The processes consuming a queue: when each was last seen reserving
-- (server time) and how many tasks it acked (queue_ack.lua counts them). A
-- worker notes itself at most every few seconds (queue/lease/workers.rs);
-- workers not seen for a day are forgotten, a hundred per note, and past
-- ARGV[4] workers the longest unseen go, so the keys stay bounded.
-- KEYS[1] workers zset (last seen per process id); KEYS[2] done hash (tasks
-- acked per process id).
-- ARGV[1] 'seen' (ARGV[2] the process id, ARGV[3] how long a worker is
-- remembered, in s, ARGV[4] the most workers remembered) or 'list' (ARGV[2]
-- how many at most).
-- seen returns 1; list returns {id, last seen, done, ...}, the last seen
-- first.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if ARGV[1] == 'seen' then
  need_type(KEYS[1], 'zset')
  need_type(KEYS[2], 'hash')
  local function forget(gone)
    if #gone > 0 then
      redis.call('ZREM', KEYS[1], unpack(gone))
      redis.call('HDEL', KEYS[2], unpack(gone))
    end
  end
  forget(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now - tonumber(ARGV[3])), 'LIMIT', 0, 100))
  redis.call('ZADD', KEYS[1], string.format('%.17g', now), ARGV[2])
  local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
  if over > 0 then forget(redis.call('ZRANGE', KEYS[1], 0, math.min(over, 100) - 1)) end
  return 1
end
local out = {}
local seen = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #seen, 2 do
  out[#out + 1] = seen[i]
  out[#out + 1] = seen[i + 1]
  out[#out + 1] = tonumber(redis.call('HGET', KEYS[2], seen[i])) or 0
end
return out
