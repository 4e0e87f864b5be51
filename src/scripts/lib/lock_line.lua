-- include: line.lua
-- What the lock scripts share (after line.lua): fencing tokens and handing
-- the lock to the next waiter in line.

-- Fails, naming it (need.lua), unless the fencing counter holds a whole
-- number or nothing ('' keep: no tokens, nothing to check). A handoff
-- writes before it counts: it checks first.
local function lock_fence_ready(fence, keep)
  if keep == '' then return end
  local last = need_call('string', 'GET', fence)
  if last then need_units(fence, last) end
end

-- The fencing token of an acquire: above every earlier one of this lock.
-- A handoff counts up from the last token (one INCR); an acquire, or a
-- handoff that finds the counter gone, starts from the server clock in
-- microseconds, raised past the last token: tokens keep increasing after
-- the counter expired, as long as the server clock does not step back.
-- keep: how long the counter outlives the lease, in ms ('': no tokens).
-- taken: the lock key a SET NX just created (the free acquire reads the
-- counter after it, so that a try that finds the lock taken reads nothing
-- more): a counter of another type deletes it again before the call fails
-- naming the counter (need.lua), so the failed call changed nothing.
local function lock_fence(fence, keep, lease, handoff, taken)
  if keep == '' then return 0 end
  if handoff then
    local f = redis.call('INCR', fence)
    if f > 1 then return f end
  end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = redis.pcall('GET', fence)
  if type(last) == 'table' then
    if taken then redis.call('DEL', taken) end
    last = need_call('string', 'GET', fence) -- fails, naming the counter
  end
  local f = math.max(now, (tonumber(last) or 0) + 1)
  redis.call('SET', fence, string.format('%.0f', f), 'PX', string.format('%.0f', tonumber(lease) + tonumber(keep)))
  return f
end

-- Sets the lock to token for lease ms ('0': no expiry); with nx, only if
-- it is free. Returns whether it was set.
local function lock_set(lock, token, lease, nx)
  if lease == '0' then
    if nx then return redis.call('SET', lock, token, 'NX') end
    return redis.call('SET', lock, token)
  end
  if nx then return redis.call('SET', lock, token, 'NX', 'PX', lease) end
  return redis.call('SET', lock, token, 'PX', lease)
end

-- Hands the free lock to the next waiter in line: it becomes the owner with
-- its own token and lease, and is woken with its fencing token, so its
-- acquire returns without another round trip. The wake list lives for a
-- place's time (place, ms, as the caller's text): see lock_unclaimed. False
-- when nobody waits.
local function lock_grant(lock, fence, line, keep, p, place)
  -- Nobody in line (a list exists only while it holds somebody): nothing
  -- to hand over, and no counter to read, which a release without waiters
  -- then never does.
  if redis.call('EXISTS', line) == 0 then return false end
  -- The handoff's token comes after its writes (the waiter out of the
  -- line, the lock set to it): the counter is checked first.
  lock_fence_ready(fence, keep)
  local member = line_next(line, p)
  if not member then return false end
  local token = line_token(member)
  local lease = string.sub(member, #token + 2)
  lock_set(lock, token, lease, false)
  local f = lock_fence(fence, keep, lease, true)
  line_wake_up(p, token, string.format('%.0f', f), place)
  return true
end

-- Whether the lock was handed to `holder` more than half a place ago and
-- never picked up (its wake list is still there): a live waiter picks it up
-- at once, so the holder died at the handoff. place: ms, a number or text.
local function lock_unclaimed(p, holder, place)
  local left = redis.call('PTTL', line_wake(p, holder))
  return left > 0 and left <= place / 2
end

-- The lock as handed to `token` while it was not blocked on its wake list,
-- or whose wake-up was lost with a dropped connection: {0, its fencing
-- token}. The counter holds it too: nobody else acquired since.
local function lock_handed(p, token, fence, keep)
  local f = redis.call('LPOP', line_wake(p, token))
  if not f and keep ~= '' then f = redis.call('GET', fence) end
  return {0, tonumber(f) or 0}
end

-- Takes the lock for token (acquire's reply).
local function lock_take(lock, fence, token, lease, keep)
  lock_set(lock, token, lease, false)
  return {0, lock_fence(fence, keep, lease, false)}
end

-- With stale (the seed's rule), whether the lock is a key without expiry
-- that is stale: its value, the seed's expiry time in seconds, has passed,
-- or is no time at all. An old client alive between its SETNX and EXPIRE
-- holds a time still ahead: it is never taken over.
local function lock_stale(lock, stale)
  if not stale or redis.call('PTTL', lock) ~= -1 then return false end
  local at = tonumber(redis.call('GET', lock))
  return not at or at <= tonumber(redis.call('TIME')[1])
end

-- Keeps member's place in line for place ms (text; '0': one try, never
-- join; fresh: see line_keep). Acquire's reply when not acquired: ms until
-- the holder's lease ends for the first in line, else -1.
local function lock_wait(lock, line, p, member, place, fresh)
  if place == '0' then return -1 end
  if not line_keep(line, p, member, place, fresh) then return -1 end
  local ms = redis.call('PTTL', lock)
  if ms == -2 then return 1 end
  if ms < 0 then return -1 end
  return ms + 1
end
