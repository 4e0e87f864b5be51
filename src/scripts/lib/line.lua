-- A waiter line, prepended to the scripts of locks and queues that wait.
-- The line is a list of members in arrival order ('<token>' for a queue's
-- consumer, '<token>:<lease ms>' for a lock's waiter). Beside it, under the
-- prefix P (same hash slot): P..'a:'..token, the waiter's place, a key the
-- waiter renews while it waits, so a waiter that died loses its place when
-- the key runs out; and P..'w:'..token, the list the waiter blocks on
-- (BLPOP). These two are named inside the scripts: which waiter is next is
-- only known there, so they cannot be declared in KEYS; they share the hash
-- slot of the declared keys by construction (P carries the same hash tag).

local function line_alive(p, token) return p .. 'a:' .. token end
local function line_wake(p, token) return p .. 'w:' .. token end
local function line_token(member)
  local colon = string.find(member, ':', 1, true)
  if colon then return string.sub(member, 1, colon - 1) end
  return member
end

-- Keeps the waiter's place for ms more (a number, or the caller's text,
-- which goes to the commands unformatted). A fresh waiter (first try, or just
-- woken and so taken out of the line) joins at the end; one whose place ran
-- out while it waited (it stalled) joins again at the end. The line lives
-- two places past the last join or renewal: a busy line is never empty, and
-- its waiters, woken before they renew, keep it alive by joining. Returns
-- whether it is first.
local function line_keep(line, p, member, ms, fresh)
  local alive = line_alive(p, line_token(member))
  local first
  if fresh or redis.call('EXISTS', alive) == 0 then
    if not fresh then redis.call('LREM', line, 0, member) end
    first = redis.call('RPUSH', line, member) == 1
  else
    first = redis.call('LINDEX', line, 0) == member
  end
  -- ('%d': a number argument is formatted with '%.17g', slower.)
  redis.call('PEXPIRE', line, string.format('%d', 2 * ms))
  redis.call('SET', alive, '1', 'PX', ms)
  return first
end

-- Takes the next waiter whose place is still kept out of the line, with
-- its place (the ones whose place ran out are dropped on the way); nil when
-- none is left.
local function line_next(line, p)
  for _ = 1, 1000 do
    local member = redis.call('LPOP', line)
    if not member then return nil end
    if redis.call('DEL', line_alive(p, line_token(member))) == 1 then
      return member
    end
  end
  return nil
end

-- Wakes a waiter with a value; the wake list expires after ms (a number or
-- text) if nobody takes it (the waiter died after it was chosen).
local function line_wake_up(p, token, value, ms)
  local wake = line_wake(p, token)
  redis.call('RPUSH', wake, value)
  redis.call('PEXPIRE', wake, ms)
end

-- Leaves the line and gives up the place. Returns how many times member
-- was in line.
local function line_leave(line, p, member)
  local was = redis.call('LREM', line, 0, member)
  redis.call('DEL', line_alive(p, line_token(member)))
  return was
end
