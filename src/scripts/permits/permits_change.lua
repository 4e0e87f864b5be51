-- include: permits_line.lua
-- Change how many permits a holder holds, without waiting: a read lock
-- promoted to the write lock (all the permits), or a write lock demoted to
-- a read lock. A promotion takes what it needs only when it fits now; it
-- never waits in line, where it would wait for itself (a writer ahead of it
-- waits for its read permit). Permits given back go to the head of the line.
-- KEYS as permits_acquire.lua. ARGV[1] owner token; ARGV[2] lease in ms;
-- ARGV[3] how long the fencing counter outlives the lease in ms ('': none);
-- ARGV[4] waiter key prefix; ARGV[5] how long a place in line is kept, in
-- ms; ARGV[6] permits wanted; ARGV[7] permits in all.
-- Returns {'done', fencing token (0 without)} when changed, {'busy', 0}
-- when the permits wanted are not free, {'gone', 0} when the token holds
-- nothing.
local holders, counts, fence, line = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, lease, keep, p = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local place, n, permits = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local now = permits_now()
local used = permits_used(holders, counts, line, now, fence, keep)
local have = permits_count(holders, counts, token)
if not have then return {'gone', 0} end
if used - have + n > permits then return {'busy', 0} end
permits_add(holders, counts, token, n, permits, lease, now)
local f = 0
if n > have then
  f = permits_fence(fence, keep, lease, n, permits, false)
else
  permits_grant(holders, counts, fence, line, keep, p, place, used - have + n, now)
end
return {'done', f}
