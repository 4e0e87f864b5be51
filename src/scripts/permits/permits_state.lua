-- include: permits_line.lua
-- flags: allow-oom
-- How a holder's lease stands, and the permits in use.
-- KEYS[1] holders zset; KEYS[2] permits per holder; KEYS[3] waiter line.
-- ARGV[1] owner token ('': none).
-- Returns {ms left of the token's lease (-2: holds nothing), permits in
-- use, waiters in line}.
local now = permits_now()
local used = permits_in_use(KEYS[1], KEYS[2], now)
local left = -2
local ends = ARGV[1] ~= '' and permits_ends(KEYS[1], ARGV[1])
if ends and ends > now then left = ends - now end
return {left, used, redis.call('LLEN', KEYS[3])}
