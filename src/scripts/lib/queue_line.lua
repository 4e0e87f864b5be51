-- include: line.lua
-- What the queue scripts share (after line.lua): waking consumers.

-- The wake-ups of consumers who wait elsewhere: a consumer of several
-- queues or partitions in several hash slots (a Cluster) blocks on its
-- home's wake list, and joins the other lines as '<token>@<hex of its
-- home's key prefix>'. A script cannot write to another slot: it takes such
-- a consumer out of the line as any other, and leaves its wake-up here,
-- member and value, for the caller to push (queue_put.lua replies them;
-- elsewhere the consumer finds the task at its next recheck). They are
-- this run's (need_run): a function library keeps its helpers' tables
-- from one call to the next, so a table of this file's would hand every
-- later call the wake-ups of the earlier ones.
local function queue_relays()
  need_run.relays = need_run.relays or {}
  return need_run.relays
end

-- Leaves work for the caller: member and value (queue_relayed).
local function queue_relay(member, value)
  local relays = queue_relays()
  relays[#relays + 1] = member
  relays[#relays + 1] = value
end

local function queue_wake_member(p, member, value, ms)
  if string.find(member, '@', 1, true) then
    queue_relay(member, value)
  else
    line_wake_up(p, member, value, ms)
  end
end

-- Wakes the consumers waiting in the queue's line for n tasks that are due
-- now: one consumer per task, first come first served. Tasks due later
-- (later = true, n = 0) wake only the first in line, without taking it out
-- of the line, so that it sets its timer by them. ms: how long a wake-up
-- waits for a consumer that died after it was chosen.
local function queue_wake(line, p, n, later, ms)
  for _ = 1, math.min(n, 1000) do
    local member = line_next(line, p)
    if not member then return end
    queue_wake_member(p, member, '1', ms)
  end
  if later and n == 0 then
    local first = redis.call('LINDEX', line, 0)
    if first then queue_wake_member(p, first, '0', ms) end
  end
end

-- The reply, and before it the wake-ups left to the caller when there are
-- any: {'relay', member, value, ..., 'reply', <the reply's items>} for a
-- table, {'relay', ..., 'value', <the reply>} for a number or a string.
local function queue_relayed(reply)
  local relays = queue_relays()
  if #relays == 0 then return reply end
  local out = {'relay'}
  for i = 1, #relays do out[#out + 1] = relays[i] end
  if type(reply) ~= 'table' then
    out[#out + 1] = 'value'
    out[#out + 1] = reply
    return out
  end
  out[#out + 1] = 'reply'
  for i = 1, #reply do out[#out + 1] = reply[i] end
  return out
end
