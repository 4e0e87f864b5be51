-- include: line.lua
-- flags: allow-oom
-- How a lock stands, for an operator: its holder, lease, last fencing token
-- and the waiters whose place in line is still kept (a dead waiter's place
-- runs out; at most the first 1000 are counted).
-- KEYS[1] lock; KEYS[2] fencing counter; KEYS[3] waiter line (after
-- line.lua). ARGV[1] waiter key prefix.
-- Returns {holder's token or false, ms left of its lease (-1: no expiry,
-- -2: not held), fencing counter or false, waiters, holders (0 or 1),
-- permits in use (the same), permits in all (0: not a semaphore)}; fails
-- naming a fencing counter that holds no whole number (need.lua).
local waiting = 0
for _, member in ipairs(redis.call('LRANGE', KEYS[3], 0, 999)) do
  waiting = waiting + redis.call('EXISTS', line_alive(ARGV[1], line_token(member)))
end
local token = redis.call('GET', KEYS[1])
local held = token and 1 or 0
local fence = redis.call('GET', KEYS[2])
if fence then need_units(KEYS[2], fence) end
return {token, redis.call('PTTL', KEYS[1]), fence, waiting, held, held, 0}
