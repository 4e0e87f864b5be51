-- The least release of a lock that keeps the promise every lock row keeps:
-- only the holder's token frees the lock (compare-and-delete, atomic).
-- Its acquire is a plain `SET key token NX PX ms`, no script.
-- Leaves out: handing the lock to the next waiter in line (a waiter then
-- polls), fencing tokens, reentrancy, the holder's record.
-- KEYS[1] lock; ARGV[1] token. Returns 1 if released.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
