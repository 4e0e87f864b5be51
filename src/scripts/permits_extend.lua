-- Set a new lease on a holder's permits if its lease still runs.
-- KEYS[1] holders zset; KEYS[2] permits per holder. ARGV[1] owner token;
-- ARGV[2] lease in ms. Returns 1 or 0.
local now = permits_now()
local ends = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not ends or tonumber(ends) <= now then return 0 end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then
  redis.call('PEXPIRE', KEYS[1], lease)
  redis.call('PEXPIRE', KEYS[2], lease)
end
return 1
