-- include: permits_line.lua
-- flags: allow-oom
-- A waiter gives up: it leaves the line, unless permits were handed to it
-- meanwhile, which it then keeps. Waiters behind it that now fit get theirs
-- (it may have stood in front of them, wanting more).
-- KEYS as permits_acquire.lua. ARGV[1] owner token; ARGV[2] lease in ms;
-- ARGV[3] fencing counter keep ('': none); ARGV[4] waiter key prefix;
-- ARGV[5] place in ms; ARGV[6] permits wanted; ARGV[7] permits in all.
-- Returns {0, fencing token} when handed over, else {1, 0}.
if permits_ends(KEYS[1], ARGV[1]) then return permits_handed(ARGV[4], ARGV[1]) end
local now = permits_now()
local used = permits_used(KEYS[1], KEYS[2], KEYS[4], now, KEYS[3], ARGV[3])
line_leave(KEYS[4], ARGV[4], table.concat({ARGV[1], ARGV[2], ARGV[6], ARGV[7]}, ':'))
permits_grant(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[4], tonumber(ARGV[5]), used, now)
return {1, 0}
