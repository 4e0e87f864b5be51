-- include: lock_line.lua
-- Take a lock, or wait for it in its line (first come, first served: a new
-- arrival never takes a free lock ahead of the waiters).
-- KEYS[1] lock; KEYS[2] fencing counter; KEYS[3] waiter line (all one slot).
-- ARGV[1] owner token; ARGV[2] lease in ms ('0': no expiry); ARGV[3] how long the fencing
-- counter outlives the lease in ms ('': no fencing tokens); ARGV[4] waiter
-- key prefix; ARGV[5] how long a place in line is kept, in ms (0: one try,
-- never join); ARGV[6] '1' on an acquire's first try, '0' on a recheck
-- while waiting; ARGV[7] '1' when a key without expiry may be stale (the
-- seed's rule: an old client died between SETNX and EXPIRE) and taken over
-- (absent: never).
-- Returns {0, fencing token (0 without)} when acquired, else ms until the
-- holder's lease ends, for the first in line (-1: not first, or no lease),
-- a number alone (the server replies it faster than a table).
local lock, fence, line = KEYS[1], KEYS[2], KEYS[3]
local token, lease, keep, p = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- The place's ms stay text: they go to the commands as they came.
local place, firstTry, stale = ARGV[5], ARGV[6] == '1', ARGV[7] == '1'
local me = token .. ':' .. lease

if firstTry then
  if redis.call('LLEN', line) == 0 then
    if lock_set(lock, token, lease, true) then
      return {0, lock_fence(fence, keep, lease, false, lock)}
    end
    if lock_stale(lock, stale) then return lock_take(lock, fence, token, lease, keep) end
    -- Held, or of another type: checked before joining the line writes,
    -- and on one try too, which would say 'not acquired' of a key nobody
    -- can ever take (a line that is not empty was joined by a try that
    -- checked it).
    need_type(lock, 'string')
  end
  return lock_wait(lock, line, p, me, place, firstTry)
end

-- A recheck while in line.
local holder = redis.call('GET', lock)
if holder == token then return lock_handed(p, token, fence, keep) end
-- Handed to a waiter that died at the handoff: free the lock.
if holder and lock_unclaimed(p, holder, place) then
  redis.call('DEL', lock, line_wake(p, holder))
  holder = false
end
if holder and lock_stale(lock, stale) then
  redis.call('DEL', lock)
  holder = false
end
if not holder then
  -- Free (a lease ran out, or a key was deleted without a release): the
  -- first live waiter gets it, which may be the caller.
  local first = redis.call('LINDEX', line, 0)
  if first == me or not first then
    if first then redis.call('LPOP', line) end
    redis.call('DEL', line_alive(p, token))
    return lock_take(lock, fence, token, lease, keep)
  end
  lock_grant(lock, fence, line, keep, p, place)
  if redis.call('GET', lock) == token then return lock_handed(p, token, fence, keep) end
end
return lock_wait(lock, line, p, me, place, false)
