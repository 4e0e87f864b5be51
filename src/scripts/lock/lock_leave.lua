-- include: lock_line.lua
-- flags: allow-oom
-- A waiter gives up (its wait ran out, a signal, an error, request end): it
-- leaves the line, unless the lock was handed to it meanwhile, which it
-- then keeps.
-- KEYS[1] lock; KEYS[2] fencing counter; KEYS[3] waiter line.
-- ARGV[1] owner token; ARGV[2] lease in ms; ARGV[3] how long the fencing
-- counter outlives the lease in ms ('': none); ARGV[4] waiter key prefix;
-- ARGV[5] how long a place in line is kept, in ms.
-- Returns {0, fencing token} when the lock was handed to it, else {1, 0}.
-- (A lock key of another type, written by hand, was handed to nobody: the
-- waiter leaves all the same, and the lock is not free to hand on.)
if redis.pcall('GET', KEYS[1]) == ARGV[1] then return lock_handed(ARGV[4], ARGV[1], KEYS[2], ARGV[3]) end
line_leave(KEYS[3], ARGV[4], ARGV[1] .. ':' .. ARGV[2])
-- A free lock (its lease ran out) goes to the next in line now rather than
-- at that waiter's next recheck.
if redis.call('EXISTS', KEYS[1]) == 0 then
  lock_grant(KEYS[1], KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[5])
end
return {1, 0}
