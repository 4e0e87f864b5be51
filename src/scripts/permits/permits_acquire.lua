-- include: permits_line.lua
-- Take permits, or wait for them in line (first come, first served: a new
-- arrival never takes permits ahead of the waiters).
-- KEYS[1] holders zset; KEYS[2] permits per holder; KEYS[3] fencing
-- counter; KEYS[4] waiter line (all one slot).
-- ARGV[1] owner token; ARGV[2] lease in ms; ARGV[3] how long the fencing
-- counter outlives the lease in ms ('': no fencing tokens); ARGV[4] waiter
-- key prefix; ARGV[5] how long a place in line is kept, in ms (0: one try,
-- never join); ARGV[6] '1' on an acquire's first try, '0' on a recheck;
-- ARGV[7] permits wanted; ARGV[8] permits in all.
-- Returns {0, fencing token (0 without)} when acquired, else {ms until the
-- first lease ends, for the first in line (-1: not first), 0}.
local holders, counts, fence, line = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, lease, keep, p = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local place, firstTry = tonumber(ARGV[5]), ARGV[6] == '1'
local n, permits = tonumber(ARGV[7]), tonumber(ARGV[8])
local me = table.concat({token, ARGV[2], ARGV[7], ARGV[8]}, ':')
local now = permits_now()
-- (Only an acquire of all the permits gets a fencing token.)
local used, waiting = permits_used(holders, counts, line, now, fence, n >= permits and keep or '')

local function wait()
  if place == 0 then return {-1, 0} end
  if not line_keep(line, p, me, place, firstTry) then return {-1, 0} end
  -- First in line: look again when the first lease ends (a holder that
  -- died gives its permits back then, waking nobody).
  local first = permits_first_end(holders, now)
  if first then return {math.max(first - now, 1), 0} end
  -- An old Symfony lock without expiry: looked at again at the recheck.
  if permits_old_lock(holders) then return {place, 0} end
  return {1, 0}
end

if firstTry then
  if used + n <= permits and waiting == 0 then
    permits_add(holders, counts, token, n, permits, lease, now)
    return {0, permits_fence(fence, keep, lease, n, permits, false)}
  end
  return wait()
end
-- A recheck while in line: handed over meanwhile, or permits freed by a
-- lease that ran out go to the head of the line, which may be the caller.
if not permits_ends(holders, token) then
  permits_grant(holders, counts, fence, line, keep, p, place, used, now)
end
if permits_ends(holders, token) then return permits_handed(p, token) end
return wait()
