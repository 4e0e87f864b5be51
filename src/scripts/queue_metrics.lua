-- A queue's counts at one instant of server time, its counters' totals, and
-- with ARGV[1] = 'history' the counters of each of the last 60 periods of
-- 10 s (the ring of queue_count.lua), oldest first.
-- KEYS[1] queue zset; KEYS[2] leased zset; KEYS[3] dead zset; KEYS[4] stats
-- hash.
-- Returns {ready (due), delayed, leased, dead, age of the oldest due task in
-- ms (-1: none due), the totals in QUEUE_COUNTERS' order, and with history:
-- the current period, then per period its counts in the same order}.
local now = queue_now()
local nowText = string.format('%.17g', now)
local queued = redis.call('ZCARD', KEYS[1])
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', nowText)
local age = -1
if ready > 0 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  age = math.floor((now - tonumber(first[2])) * 1000)
end
local out = {ready, queued - ready, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), age}
local function counts(suffix)
  local fields = {}
  for i, name in ipairs(QUEUE_COUNTERS) do fields[i] = name .. suffix end
  for _, n in ipairs(redis.call('HMGET', KEYS[4], unpack(fields))) do
    out[#out + 1] = tonumber(n) or 0
  end
end
counts('')
if ARGV[1] == 'history' then
  local current = math.floor(now / 10)
  out[#out + 1] = current
  for period = current - 59, current do
    local slot = period % 60
    if tonumber(redis.call('HGET', KEYS[4], 't' .. slot)) == period then
      counts(':' .. slot)
    else
      for _ = 1, #QUEUE_COUNTERS do out[#out + 1] = 0 end
    end
  end
end
return out
