-- Give a leased task back, only if the caller's lease is still the task's:
-- due again after ARGV[3] seconds, or to the dead letters once it used up
-- its attempts.
-- KEYS[1] queue zset; KEYS[2] attempts hash; KEYS[3] leased zset;
-- KEYS[4] lease tokens hash; KEYS[5] dead zset; KEYS[6] consumer line;
-- KEYS[7] stats hash.
-- ARGV[1] id; ARGV[2] lease token; ARGV[3] delay in seconds;
-- ARGV[4] maximum attempts (0: no limit); ARGV[5] consumer key prefix;
-- ARGV[6] how long a wake-up waits for its consumer, in ms.
-- Returns 1 when queued again, 2 when dead, 0 when the lease is not the
-- caller's.
if redis.call('HGET', KEYS[4], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
local now = queue_now()
local max = tonumber(ARGV[4])
local attempts = tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0
if max > 0 and attempts >= max then
  redis.call('ZADD', KEYS[5], string.format('%.17g', now), ARGV[1])
  queue_count(KEYS[7], now, 'dead', 1)
  return 2
end
redis.call('ZADD', KEYS[1], 'NX', string.format('%.17g', now + tonumber(ARGV[3])), ARGV[1])
queue_count(KEYS[7], now, 'nacked', 1)
local delay = tonumber(ARGV[3])
if delay > 0 then
  queue_wake(KEYS[6], ARGV[5], 0, true, ARGV[6])
else
  queue_wake(KEYS[6], ARGV[5], 1, false, ARGV[6])
end
return 1
