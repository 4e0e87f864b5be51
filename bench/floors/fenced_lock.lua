-- The least acquire of RedisLock\Lock that keeps its promise: taken only
-- if free (SET NX PX), with a fencing token above every earlier one of
-- the lock, even after its counter expired (the server's clock in µs,
-- raised past the last token). Released with compare_and_delete.lua.
-- Leaves out: the waiters' line (a free lock with somebody in line goes
-- to the first of them, and a release hands it over and wakes them), a
-- counter written by hand failing by name, reentrancy.
-- KEYS[1] lock; KEYS[2] fencing counter; ARGV[1] token; ARGV[2] lease in
-- ms; ARGV[3] how long the counter outlives the lease, in ms.
-- Returns the fencing token, or 0 when the lock is held.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
local t = redis.call('TIME')
local f = math.max(tonumber(t[1]) * 1000000 + tonumber(t[2]), (tonumber(redis.call('GET', KEYS[2])) or 0) + 1)
redis.call('SET', KEYS[2], string.format('%.0f', f), 'PX', tonumber(ARGV[2]) + tonumber(ARGV[3]))
return f
