-- include: permits_line.lua
-- flags: allow-oom
-- How a hold of permits stands, for an operator (a semaphore, a read-write
-- lock): the holder whose lease ends last and what is left of it, the last
-- fencing token, the waiters whose place in line is still kept (at most
-- the first 1000 are counted), how many hold it, the permits they hold and
-- a semaphore's permits in all as its last holder counted them.
-- KEYS[1] holders zset; KEYS[2] permits per holder; KEYS[3] fencing
-- counter; KEYS[4] waiter line. ARGV[1] waiter key prefix.
-- Returns {a holder's token or false, ms left of its lease (-2: not held),
-- fencing counter or false, waiters, holders, permits in use, permits in
-- all (0: not known)}; fails naming a fencing counter that holds no whole
-- number (need.lua).
local now = permits_now()
local token, left, holding = false, -2, 1
if permits_old_lock(KEYS[1]) then
  -- (Its value is the old client's token; -1: no expiry.)
  token, left = redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])
else
  local last = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', '(' .. now, 'WITHSCORES', 'LIMIT', 0, 1)
  if last[1] then token, left = last[1], tonumber(last[2]) - now end
  holding = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
end
local waiting = 0
for _, member in ipairs(redis.call('LRANGE', KEYS[4], 0, 999)) do
  waiting = waiting + redis.call('EXISTS', line_alive(ARGV[1], line_token(member)))
end
local fence = redis.call('GET', KEYS[3])
if fence then need_units(KEYS[3], fence) end
local of = not permits_symfony and tonumber(redis.call('HGET', KEYS[2], PERMITS_OF)) or 0
return {token, left, fence, waiting, holding, permits_in_use(KEYS[1], KEYS[2], now), of}
