-- include: queue_task.lua
-- Enqueue tasks due at server time + delay. An id already queued is kept,
-- or replaced, or takes the earlier or later due time (the policy); a task
-- added or replaced takes its payload (or loses an old one). An id that is
-- leased is not queued beside its running task: it waits as a rerun until
-- the lease ends (queue_task.lua), under the same policy. One waiting
-- consumer is woken per task due now; tasks due later wake the first in line.
-- KEYS: see queue_task.lua.
-- ARGV[1] delay in seconds; ARGV[2] policy: keep | replace | earliest | latest;
-- ARGV[3] maximum length, queued plus leased (0: none);
-- ARGV[4] '' when ARGV[8..] are ids only, else one flag per task ('1': it
-- has a payload) and ARGV[8..] are id, payload pairs;
-- ARGV[5] '1' for a status per task, '0' for how many were added;
-- ARGV[6] consumer key prefix; ARGV[7] how long a wake-up waits for its
-- consumer, in ms.
-- Returns {done, status per task (0 ignored, 1 added, 2 updated)} or
-- {done, added}, done being 2 when the caller is to register the queue
-- (queue_count_enqueued) and 1 otherwise; {0, length} when the batch would
-- take the queue past its maximum length (then nothing is changed). For
-- {1, added} it replies added alone (a number the server replies faster
-- than a table).
local now = queue_now()
local due = now + tonumber(ARGV[1])
local dueText = string.format('%.17g', due)
local policy = ARGV[2]
local max = tonumber(ARGV[3])
local flags = ARGV[4]
local statuses = ARGV[5] == '1'
local step = 1
if flags ~= '' then step = 2 end
local first = 8
local function wake(n)
  if tonumber(ARGV[1]) > 0 then
    queue_wake(KEYS[9], ARGV[6], 0, n > 0, ARGV[7])
  else
    queue_wake(KEYS[9], ARGV[6], n, false, ARGV[7])
  end
end
-- Counts the added tasks; the reply without statuses.
local function counted(added)
  if queue_count_enqueued(KEYS[10], now, added) then
    return {2, added}
  end
  return added
end
local n = (#ARGV - first + 1) / step
-- Nothing an added id could inherit or run beside: no payloads, attempts or
-- leases (one EXISTS for the three).
local bare = redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4]) == 0

-- The seed's enqueue: one ZADD NX per 500 ids, and the consumers woken
-- only when some wait. The line's length, a read of the stats hash (a
-- read answers a number faster than TYPE its table) and the first ZADD are
-- the checks of their keys' types (need_call).
if bare and not statuses and policy == 'keep' and flags == '' and max == 0 then
  local waiting = need_call(QUEUE_TYPES[9], 'LLEN', KEYS[9]) > 0
  need_call(QUEUE_TYPES[10], 'HEXISTS', KEYS[10], 'registered')
  local added = 0
  local args = {}
  for from = first, #ARGV, 500 do
    local k = 0
    for i = from, math.min(from + 499, #ARGV) do
      args[k + 1] = dueText
      args[k + 2] = ARGV[i]
      k = k + 2
    end
    added = added + need_call(QUEUE_TYPES[1], 'ZADD', KEYS[1], 'NX', unpack(args, 1, k))
  end
  if waiting then wake(added) end
  return counted(added)
end

local hasPayloads = not bare and redis.call('EXISTS', KEYS[2]) == 1
local hasAttempts = not bare and redis.call('EXISTS', KEYS[3]) == 1
local hasLeased = not bare and redis.call('EXISTS', KEYS[4]) == 1
local hasDead = redis.call('EXISTS', KEYS[7]) == 1
queue_need(1, 2, 3, 4, 6, 9, 10)
if hasDead then queue_need(7, 8) end

-- Growth: ids neither queued nor leased (a rerun replaces its running task).
if max > 0 then
  local adding = 0
  local seen = {}
  for i = 0, n - 1 do
    local id = ARGV[first + i * step]
    if not seen[id] and not redis.call('ZSCORE', KEYS[1], id)
        and not (hasLeased and redis.call('ZSCORE', KEYS[4], id)) then
      adding = adding + 1
    end
    seen[id] = true
  end
  local length = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[4])
  if adding > 0 and length + adding > max then
    return {0, length}
  end
end

local out = {0}
local added = 0
local queued = 0
for i = 0, n - 1 do
  local id = ARGV[first + i * step]
  local payload = false
  if step == 2 and string.sub(flags, i + 1, i + 1) == '1' then
    payload = ARGV[first + 1 + i * step]
  end
  local status
  if hasLeased and redis.call('ZSCORE', KEYS[4], id) then
    status = queue_rerun(id, due, dueText, payload, policy)
  else
    local old = redis.call('ZSCORE', KEYS[1], id)
    status = 0
    if not old then
      status = 1
      if hasDead then queue_keep_grave(id) end
      queue_add(id, dueText, payload)
    elseif queue_wins(policy, due, tonumber(old)) then
      status = 2
      redis.call('ZADD', KEYS[1], dueText, id)
      queue_payload(id, payload)
    end
    if status > 0 then queued = queued + 1 end
  end
  if status == 1 then
    added = added + 1
  end
  out[#out + 1] = status
end
wake(queued)
if not statuses then
  return counted(added)
end
out[1] = queue_count_enqueued(KEYS[10], now, added) and 2 or 1
return out
