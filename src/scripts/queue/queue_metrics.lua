-- include: queue_count.lua
-- flags: allow-oom
-- A queue's counts at one instant of server time, its counters' totals, and
-- with ARGV[1] = 'history' the counters of each of the last 60 periods of
-- 10 s (queue_count.lua), oldest first.
-- KEYS[1] queue zset; KEYS[2] leased zset; KEYS[3] dead zset; KEYS[4] stats
-- hash; KEYS[5] groups zset (queue_task.lua); KEYS[6] the parents waiting
-- for their children (flow_add.lua).
-- Returns {ready (due), delayed, leased, dead, age of the oldest due task in
-- ms (-1: none due), when it was paused in ms (-1: it is not; see
-- queue_pause.lua), until when it is throttled in ms (-1: it is not), how
-- many groups it has, how many parents wait for their children, the totals
-- in QUEUE_COUNTERS' order, and with history:
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
local out = {ready, queued - ready, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), age, -1, -1,
  redis.call('ZCARD', KEYS[5]), need_call('hash', 'HLEN', KEYS[6])}
-- The totals and the periods' counts from the stats hash (queue_count.lua).
local current = math.floor(now / 10)
local index, totals, periods = {}, {}, {}
for i, name in ipairs(QUEUE_COUNTERS) do index[name] = i; totals[i] = 0 end
local flat = redis.call('HGETALL', KEYS[4])
for i = 1, #flat, 2 do
  if flat[i] == 'paused' then out[6] = tonumber(flat[i + 1]) or 0 end
  if flat[i] == 'throttled' and (tonumber(flat[i + 1]) or 0) > now * 1000 then
    out[7] = tonumber(flat[i + 1])
  end
  local name, period = string.match(flat[i], '^(%a+):?(%d*)$')
  local at = name and index[name]
  if at then
    local n = tonumber(flat[i + 1]) or 0
    totals[at] = totals[at] + n
    period = tonumber(period)
    if period and period > current - 60 and period <= current then
      periods[period] = periods[period] or {}
      periods[period][at] = n
    end
  end
end
for i = 1, #QUEUE_COUNTERS do out[#out + 1] = totals[i] end
if ARGV[1] == 'history' then
  out[#out + 1] = current
  for period = current - 59, current do
    local counts = periods[period] or {}
    for i = 1, #QUEUE_COUNTERS do out[#out + 1] = counts[i] or 0 end
  end
end
return out
