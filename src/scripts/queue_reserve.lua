-- Lease up to ARGV[1] due tasks (server time), earliest first. Leases that
-- ran out are settled first, in a bounded batch: back to the queue, or to
-- the dead letters once the task used up its attempts.
-- KEYS[1] queue zset; KEYS[2] payloads hash; KEYS[3] attempts hash;
-- KEYS[4] leased zset (lease end per id); KEYS[5] lease tokens hash;
-- KEYS[6] dead zset (time of death per id); KEYS[7] consumer line;
-- KEYS[8] stats hash.
-- ARGV[1] count; ARGV[2] lease in seconds; ARGV[3] lease token prefix (the
-- task's rank is appended); ARGV[4] maximum attempts (0: no limit);
-- ARGV[5] most expired leases settled by this call; ARGV[6] consumer key
-- prefix; ARGV[7] the consumer's token; ARGV[8] how long a place in line is
-- kept, in ms; ARGV[9] how it waits: '' not at all, 'fresh' joining the
-- line at its end (first try, or just woken), 'keep' keeping its place.
-- Returns {ms until a task may be due or a lease ends (-1: nothing
-- scheduled, or not first in line; 0 when tasks follow), id, payload or
-- false, attempts, token, ...}.
local now = queue_now()
local nowText = string.format('%.17g', now)
local max = tonumber(ARGV[4])

local expired = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', nowText, 'LIMIT', 0, tonumber(ARGV[5]))
local died = 0
for _, id in ipairs(expired) do
  redis.call('ZREM', KEYS[4], id)
  redis.call('HDEL', KEYS[5], id)
  local attempts = tonumber(redis.call('HGET', KEYS[3], id)) or 0
  if max > 0 and attempts >= max then
    redis.call('ZADD', KEYS[6], nowText, id)
    died = died + 1
  else
    redis.call('ZADD', KEYS[1], 'NX', nowText, id)
  end
end
queue_count(KEYS[8], now, 'expired', #expired)
queue_count(KEYS[8], now, 'dead', died)

local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowText, 'LIMIT', 0, tonumber(ARGV[1]))
local leaseEnd = string.format('%.17g', now + tonumber(ARGV[2]))
local out = {0}
for i, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  local token = ARGV[3] .. i
  redis.call('HSET', KEYS[5], id, token)
  redis.call('ZADD', KEYS[4], leaseEnd, id)
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id)
  out[#out + 1] = redis.call('HINCRBY', KEYS[3], id, 1)
  out[#out + 1] = token
end
local p, me, place, mode = ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9]
if #due > 0 then
  if mode == 'keep' then line_leave(KEYS[7], p, me) end
  -- Due tasks left over (this consumer took fewer than an enqueue woke it
  -- for, or expired leases came back): one more waiter each.
  if redis.call('LLEN', KEYS[7]) > 0 then
    local left = redis.call('ZCOUNT', KEYS[1], '-inf', nowText)
    queue_wake(KEYS[7], p, left, false, place)
  end
  return out
end
if mode ~= '' and not line_keep(KEYS[7], p, me, place, mode == 'fresh') then
  -- Not first in line: the first one keeps the timer.
  return {-1}
end
do
  local soonest = -1
  for _, key in ipairs({KEYS[1], KEYS[4]}) do
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if first[2] then
      local ms = math.max(1, math.ceil((tonumber(first[2]) - now) * 1000))
      if soonest < 0 or ms < soonest then
        soonest = ms
      end
    end
  end
  out[1] = soonest
end
return out
