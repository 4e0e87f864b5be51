-- flags: allow-oom
-- When the lease of a lock that still holds the caller's token ends, on the
-- server's clock: what the seed's `RedisLock::isLocking()` returned (it
-- stored its expiry time as the lock's value).
-- KEYS[1] lock key; ARGV[1] owner token.
-- Returns the end in whole unix seconds, -1 when the lock has no expiry,
-- -2 when the token is not there.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -2
end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  return -1
end
local now = redis.call('TIME')
return math.floor((tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + left) / 1000)
