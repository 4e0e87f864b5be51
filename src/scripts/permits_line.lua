-- What the scripts of permits share (semaphores, read-write locks; after
-- line.lua and lock_line.lua): the holders in a sorted set scored by the end
-- of their lease (server clock, ms), the permits each holds in a hash, and
-- the line served in arrival order. A waiter's member in the line is
-- '<token>:<lease ms>:<permits wanted>:<permits in all>'. Taking all the
-- permits (a write lock, a semaphore of one) hands out a fencing token.

local function permits_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Drops the holders whose lease ran out; returns the permits in use.
local function permits_used(holders, counts, now)
  local gone = redis.call('ZRANGEBYSCORE', holders, '-inf', now)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
    redis.call('HDEL', counts, unpack(gone))
  end
  local used = 0
  for _, n in ipairs(redis.call('HVALS', counts)) do used = used + tonumber(n) end
  return used
end

-- Makes `token` a holder of n permits until now + lease; the keys live as
-- long as the longest lease.
local function permits_add(holders, counts, token, n, lease, now)
  redis.call('ZADD', holders, now + lease, token)
  redis.call('HSET', counts, token, n)
  if redis.call('PTTL', holders) < lease then
    redis.call('PEXPIRE', holders, lease)
    redis.call('PEXPIRE', counts, lease)
  end
end

-- The fencing token of an acquire of n of `permits` permits: 0 unless all.
local function permits_fence(fence, keep, lease, n, permits, handoff)
  if n < permits then return 0 end
  return lock_fence(fence, keep, lease, handoff)
end

-- Hands permits to the waiters at the head of the line, in order, while
-- they fit: the first that does not fit stops it, so a waiter wanting many
-- is never overtaken by later ones wanting few. Waiters whose place ran
-- out are dropped on the way. Each is woken with its fencing token.
local function permits_grant(holders, counts, fence, line, keep, p, place, used, now)
  for _ = 1, 1000 do
    local member = redis.call('LINDEX', line, 0)
    if not member then return end
    local token, lease, n, permits = string.match(member, '^([^:]+):(%d+):(%d+):(%d+)$')
    lease, n, permits = tonumber(lease), tonumber(n), tonumber(permits)
    if redis.call('EXISTS', line_alive(p, token)) == 0 then
      redis.call('LPOP', line)
    elseif used + n > permits then
      return
    else
      redis.call('LPOP', line)
      redis.call('DEL', line_alive(p, token))
      permits_add(holders, counts, token, n, lease, now)
      used = used + n
      local f = permits_fence(fence, keep, lease, n, permits, true)
      line_wake_up(p, token, string.format('%.0f', f), place)
    end
  end
end

-- The permits as handed to `token` while it was not blocked on its wake
-- list: {0, its fencing token (0 when none came with the wake-up)}.
local function permits_handed(p, token)
  return {0, tonumber(redis.call('LPOP', line_wake(p, token))) or 0}
end
