-- include: lock_line.lua
-- What the scripts of permits share (semaphores, read-write locks; after
-- line.lua and lock_line.lua): the holders in a sorted set scored by the end
-- of their lease (server clock, ms), the permits each holds in a hash, and
-- the line served in arrival order. A waiter's member in the line is
-- '<token>:<lease ms>:<permits wanted>:<permits in all>'. Taking all the
-- permits (a write lock, a semaphore of one) hands out a fencing token.
-- Beside the holders' counts, the hash keeps a semaphore's permits in all
-- as the last holder to take them counted them, for operators, under the
-- field ':of' (a token never holds a ':').

-- permits_symfony.lua, included after this file, sets this: the holders
-- are then a sorted set in the format of Symfony's RedisStore, on a key
-- that store's clients share (`exactKey`): a read lock is its token, a
-- write lock its token beside the member `__write__` (alone), and no
-- permit counts are kept (KEYS[2] is not used). Only read-write locks.
local permits_symfony = false
local PERMITS_WRITE = '__write__'
local PERMITS_ALL = 2 ^ 50
local PERMITS_OF = ':of'

-- Whether the holders' key is a lock of Symfony before 5.2, in Symfony's
-- format only: a string (`SET NX`) where Symfony keeps its sorted set.
-- Symfony's stock store reads it as held by somebody else, and takes,
-- extends and releases nothing there: so do these scripts, until it
-- expires or its client deletes it (a forced release deletes it). Any other
-- type fails, naming the key (need.lua). Checked once per run: need.lua's
-- record of the run's checks keeps the type found (any other check of the
-- key found a zset, or nothing).
local function permits_old_lock(holders)
  if not permits_symfony then return false end
  if not need_checked[holders] then
    local t = redis.call('TYPE', holders)['ok']
    if t ~= 'string' and t ~= 'none' and t ~= 'zset' then
      need_fail(holders, 'holds a ' .. t .. ', where redislock keeps a zset')
    end
    need_checked[holders] = t
  end
  return need_checked[holders] == 'string'
end

-- When `token`'s lease ends (server ms; nil: it holds nothing).
local function permits_ends(holders, token)
  if permits_old_lock(holders) then return nil end
  return tonumber(redis.call('ZSCORE', holders, token))
end

-- When the first lease to end ends (server ms; nil: none, or never).
local function permits_first_end(holders, now)
  if permits_old_lock(holders) then
    local ms = redis.call('PTTL', holders)
    return ms >= 0 and now + ms or nil
  end
  return tonumber(redis.call('ZRANGE', holders, 0, 0, 'WITHSCORES')[2])
end

local function permits_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The permits `token` holds (nil: none), its lease aside.
local function permits_count(holders, counts, token)
  if not permits_symfony then return tonumber(redis.call('HGET', counts, token)) end
  if not permits_ends(holders, token) then return nil end
  if redis.call('ZSCORE', holders, PERMITS_WRITE) then return PERMITS_ALL end
  return 1
end

-- The permits the holders whose lease runs after now hold.
local function permits_in_use(holders, counts, now)
  if permits_old_lock(holders) then return PERMITS_ALL end
  if permits_symfony then
    local write = redis.call('ZSCORE', holders, PERMITS_WRITE)
    if write and tonumber(write) > now then return PERMITS_ALL end
    return redis.call('ZCOUNT', holders, '(' .. now, '+inf')
  end
  local used = 0
  for _, h in ipairs(redis.call('ZRANGEBYSCORE', holders, '(' .. now, '+inf')) do
    used = used + (tonumber(redis.call('HGET', counts, h)) or 0)
  end
  return used
end

-- Drops the count of permits in all once nobody holds any.
local function permits_forget(holders, counts)
  if redis.call('EXISTS', holders) == 0 then redis.call('DEL', counts) end
end

-- Drops the holders whose lease ran out; returns the permits in use and
-- the length of the line. Every script that writes calls it before its
-- first write: it reads (and so checks, need.lua) the holders, the counts
-- (each a whole number), the line, and the fencing counter where the
-- script may hand out a token (keep: see lock_fence_ready) before it
-- writes.
local function permits_used(holders, counts, line, now, fence, keep)
  lock_fence_ready(fence, keep)
  local waiting = need_call('list', 'LLEN', line)
  if permits_symfony then
    -- The key is named by the caller: say clearly when it is not a lock.
    if permits_old_lock(holders) then return PERMITS_ALL, waiting end
    redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
    return permits_in_use(holders, counts, now), waiting
  end
  local gone = need_call('zset', 'ZRANGEBYSCORE', holders, '-inf', now)
  local held = need_call('hash', 'HGETALL', counts)
  local out = {}
  for _, token in ipairs(gone) do out[token] = true end
  local used = 0
  for i = 1, #held, 2 do
    local n = need_units(counts, held[i + 1])
    if not out[held[i]] and held[i] ~= PERMITS_OF then used = used + n end
  end
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
    redis.call('HDEL', counts, unpack(gone))
    permits_forget(holders, counts)
  end
  return used, waiting
end

-- Makes the keys live as long as the longest lease: Symfony's rule in its
-- format, else at least `lease` ms from now.
local function permits_keep(holders, counts, lease)
  if permits_symfony then
    local last = redis.call('ZREVRANGE', holders, 0, 0, 'WITHSCORES')[2]
    if last then redis.call('PEXPIREAT', holders, last) end
  elseif redis.call('PTTL', holders) < lease then
    redis.call('PEXPIRE', holders, lease)
    redis.call('PEXPIRE', counts, lease)
  end
end

-- Makes `token` a holder of n of `permits` permits until now + lease.
local function permits_add(holders, counts, token, n, permits, lease, now)
  redis.call('ZADD', holders, now + lease, token)
  if not permits_symfony then
    if permits < PERMITS_ALL then
      redis.call('HSET', counts, token, n, PERMITS_OF, permits)
    else
      redis.call('HSET', counts, token, n)
    end
  elseif n >= PERMITS_ALL then
    redis.call('ZADD', holders, now + lease, PERMITS_WRITE)
  else
    redis.call('ZREM', holders, PERMITS_WRITE)
  end
  permits_keep(holders, counts, lease)
end

-- Sets a new lease on the permits `token` holds.
local function permits_renew(holders, counts, token, lease, now)
  redis.call('ZADD', holders, 'XX', now + lease, token)
  if permits_symfony then redis.call('ZADD', holders, 'XX', now + lease, PERMITS_WRITE) end
  permits_keep(holders, counts, lease)
end

-- Takes the permits of `token` back.
local function permits_drop(holders, counts, token)
  redis.call('ZREM', holders, token)
  if permits_symfony then
    -- A write lock is alone in its set: whoever leaves, no writer is left.
    redis.call('ZREM', holders, PERMITS_WRITE)
    permits_keep(holders, counts, 0)
  else
    redis.call('HDEL', counts, token)
    permits_forget(holders, counts)
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
      permits_add(holders, counts, token, n, permits, lease, now)
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
