-- include: queue_task.lua
-- Enqueue tasks moved here from another queue (lease::moving): each keeps
-- its payload, attempts and last failure, and its due time relative to the
-- other server's clock (so their order). An id queued or leased here
-- already keeps its task (the policy 'keep'), and the moved one is not
-- added. Consumers are woken as by an enqueue.
-- KEYS: see queue_task.lua.
-- ARGV[1] maximum length, queued plus leased (0: none); ARGV[2] consumer
-- key prefix; ARGV[3] how long a wake-up waits for its consumer, in ms;
-- ARGV[4..] seven per task: id, due in seconds from now (negative:
-- overdue), attempts, what follows ('' none, 'p' a payload, 'r' a reason,
-- 'pr' both), payload, reason ('' when absent), tags ('': none).
-- Returns {done, status per task (0 kept here, 1 added)}, done being 2 when
-- the caller is to register the queue (queue_count_enqueued) and 1
-- otherwise; {0, length} when the tasks would take the queue past its
-- maximum length (then nothing is changed).
local now = queue_now()
local max = tonumber(ARGV[1])
local first, step = 4, 7
local ids = {}
for i = first, #ARGV, step do ids[#ids + 1] = ARGV[i] end

queue_need(1, 2, 3, 9, 10, 11, 13)
queue_groups(ARGV[2])
local hasDead = queue_has(7)
if hasDead then queue_need(8, 12) end
local queued = queue_scores(1, ids)
local leased = {}
if queue_has(4) then leased = queue_scores(4, ids) end

local adding, seen = {}, {}
for i, id in ipairs(ids) do
  if not seen[id] and not queued[i] and not leased[i] then
    adding[i] = true
  end
  seen[id] = true
end
local n = 0
for _ in pairs(adding) do n = n + 1 end
if max > 0 and n > 0 then
  local length = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[4])
  if length + n > max then return {0, length} end
end

local out = {1}
local due_now, later = 0, false
for i, id in ipairs(ids) do
  out[i + 1] = 0
  if adding[i] then
    local at = first + (i - 1) * step
    local due = now + tonumber(ARGV[at + 1])
    local attempts = tonumber(ARGV[at + 2])
    local has = ARGV[at + 3]
    if hasDead then queue_keep_grave(id) end
    queue_add(id, string.format('%.17g', due), string.find(has, 'p', 1, true) and ARGV[at + 4],
      ARGV[at + 6] ~= '' and ARGV[at + 6])
    if attempts > 0 then
      redis.call('HSET', KEYS[3], id, string.format('%d', attempts))
    end
    queue_hset_or_del(KEYS[11], id, string.find(has, 'r', 1, true) and ARGV[at + 5])
    if due <= now then due_now = due_now + 1 else later = true end
    out[i + 1] = 1
  end
end
if due_now > 0 then queue_wake(KEYS[9], ARGV[2], due_now, false, ARGV[3]) end
if later then queue_wake(KEYS[9], ARGV[2], 0, true, ARGV[3]) end
if queue_count_enqueued(KEYS[10], now, n) then out[1] = 2 end
return out
