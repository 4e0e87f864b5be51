-- Take a lock of the RedisLock\ API and hand out its fencing token.
-- The token is the server clock in microseconds, raised past the last token
-- of this lock when needed: tokens keep increasing even after the counter
-- key has expired, as long as the server clock does not step back.
-- KEYS[1] lock key; KEYS[2] fence counter (same hash slot);
-- ARGV[1] owner token; ARGV[2] lease in ms; ARGV[3] how long the counter
-- outlives the lease, in ms.
-- Returns {0, token} when acquired, else {ms until the holder's lease ends
-- (-1: it has none), 0}.
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 then
  if pttl == -1 then
    return {-1, 0}
  end
  return {pttl + 1, 0}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[2])) or 0
local fence = math.max(now, last + 1)
redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', tonumber(ARGV[2]) + tonumber(ARGV[3]))
return {0, fence}
