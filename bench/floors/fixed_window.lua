-- The least fixed-window limiter that keeps the limiter's promise: at most
-- `limit` admissions per window, windows on the server's clock (the first
-- admission starts one, and it ends `per` later), the decision in one
-- step, and the same result fields (allowed, remaining, retry after,
-- reset after, now).
-- Leaves out: several limits at once (all or none), a peek that writes
-- nothing, a count written by hand (or without an expiry) failing by name
-- or mended.
-- KEYS[1] the window's count; ARGV[1] limit; ARGV[2] window in µs;
-- ARGV[3] cost. Returns {refused, remaining, retry after µs, reset after
-- µs, now µs}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit, per, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local raw = redis.call('GET', KEYS[1])
local count = tonumber(raw or '0')
local reset = raw and (redis.call('PTTL', KEYS[1]) + 1) * 1000 or per
if count + cost > limit then return {1, limit - count, reset, reset, now} end
if raw then
  redis.call('INCRBY', KEYS[1], cost)
else
  redis.call('SET', KEYS[1], cost, 'PX', math.ceil(per / 1000))
end
return {0, limit - count - cost, 0, reset, now}
