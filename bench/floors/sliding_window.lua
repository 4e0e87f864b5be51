-- The least sliding-window limiter that keeps the limiter's promise: at
-- most `limit` admissions in any window of `per` ending now, on the
-- server's clock (a log of the admissions, not an estimate), the decision
-- in one step, and the same result fields (allowed, remaining, retry
-- after, reset after, now).
-- Leaves out: costs above 1 (a member counts one, so ZCARD is the count),
-- several limits at once (all or none), a peek that writes nothing, keys
-- written by hand failing by name.
-- KEYS[1] the log (a sorted set by µs); KEYS[2] its sequence counter;
-- ARGV[1] limit; ARGV[2] window in µs. Returns {refused, remaining, retry
-- after µs, reset after µs, now µs}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit, per = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now - per))
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local retry = math.ceil(tonumber(oldest[2]) + per - now)
  return {1, 0, retry, per, now}
end
redis.call('ZADD', KEYS[1], string.format('%.17g', now), redis.call('INCR', KEYS[2]))
local ms = math.ceil(per / 1000)
redis.call('PEXPIRE', KEYS[1], ms)
redis.call('PEXPIRE', KEYS[2], ms)
return {0, limit - count - 1, 0, per, now}
