-- The least token bucket that keeps the limiter's promise: GCRA on the
-- server's clock, one key, the decision in one step, and the same result
-- fields (allowed, remaining, retry after, reset after, now).
-- Leaves out: several limits at once (all or none), a peek that writes
-- nothing, a key written by hand failing by name.
-- KEYS[1] bucket; ARGV[1] limit; ARGV[2] period in µs; ARGV[3] burst.
-- Returns {refused (0: allowed), remaining, retry after µs, reset after
-- µs, now µs}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local step = tonumber(ARGV[2]) / tonumber(ARGV[1])
local burst = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local after = tat + step
if after - burst * step > now then
  return {1, math.floor((burst * step - (tat - now)) / step), math.ceil(after - burst * step - now), math.ceil(tat - now), now}
end
redis.call('SET', KEYS[1], string.format('%.17g', after), 'PX', math.max(1, math.ceil((after - now) / 1000)))
return {0, math.floor((burst * step - (after - now)) / step), 0, math.ceil(after - now), now}
