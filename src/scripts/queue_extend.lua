-- Prolong a lease, only if it is still the caller's.
-- KEYS[1] leased zset; KEYS[2] lease tokens hash.
-- ARGV[1] id; ARGV[2] lease token; ARGV[3] new lease in seconds from now.
-- Returns 1, or 0 when the lease is not the caller's.
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZADD', KEYS[1], 'XX', string.format('%.17g', now + tonumber(ARGV[3])), ARGV[1])
return 1
