-- include: queue_line.lua queue_count.lua queue_add.lua queue_record.lua
-- flags: allow-oom
-- Creates a workflow (flow.rs): tasks, each in its queue, those with
-- children waiting for them (not reservable), each child linked to its
-- parent (queue_task.lua: queue_flow_end). In one step when the flow is in
-- one slot ('whole'); else one step per slot ('stage': this slot's tasks,
-- its leaves staged rather than queued, until flow_stage.lua's 'commit').
-- KEYS: 10 per queue (or partition) of the flow in this slot, in its
-- order: its queue zset, payloads, attempts, leased zset, consumer line,
-- stats, waiting parents hash (flows), waiting parents' children hash
-- (flow-children), links hash, staged hash (flow-staged); then, staging
-- the root's slot, the root queue's flows being made (flow-making).
-- ARGV[1] how long a wake-up waits for its consumer, in ms; ARGV[2] the
-- flow's token (task i's, a parent's own, is '<token>.<i - 1>'); ARGV[3]
-- 'whole' or 'stage'; ARGV[4] how many queues the flow has (q); then 5 per
-- queue: its consumer key prefix, name, partition, partition count, and
-- its keys' place in KEYS (1-based, in tens; 0: in another slot); then
-- how many tasks (n); then 8 per task: its queue (1-based), id, payload,
-- '1' when it has one, its parent's index (1-based; 0: the root), its
-- policy for a failed child ('fail', 'ignore', 'continue'), its delay in
-- seconds once due, its stored tags ('': none). Only the tasks of the
-- queues in KEYS are checked and written.
-- A waiting parent's record (flows hash): token, policy, children left,
-- delay, tags or false, payload or false, then its children's names
-- ('<queue>/<id>'). Each child is also the field '<token>\0<name>' of the
-- flow-children hash: '' until it ends, then its outcome and value
-- (queue_record); the field '<token>' there counts the children left
-- (flow_end.lua; the record keeps the first count). A staged task is the
-- field id of its queue's staged hash: the flow's token, '1' for a leaf
-- ('0': a parent, or a child with children), its payload or false, its
-- delay. A flow being made is the field token of its root queue's
-- flow-making hash: 'staging', 'committing' or 'dropping'
-- (flow_stage.lua), since when (ms), then each of its queues' name,
-- partition and partition count.
-- Returns {'added', indices of the first task of each queue that was never
-- registered...} (queue_relayed), or {'busy', i} when task i's id is
-- queued, leased, waiting, staged or a child already: then nothing is
-- written.
local KEYS_EACH, QUEUE_ARGS, TASK_ARGS = 10, 5, 8
local TYPES = {'zset', 'hash', 'hash', 'zset', 'list', 'hash', 'hash', 'hash', 'hash', 'hash'}
local ms, token, mode, q = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local at = 5 + q * QUEUE_ARGS
local n = tonumber(ARGV[at])
local function queue_arg(j, f) return ARGV[4 + (j - 1) * QUEUE_ARGS + f] end
local here = {}
for j = 1, q do
  local place = tonumber(queue_arg(j, 5))
  if place > 0 then here[j] = place end
end
local function key(j, k) return KEYS[(here[j] - 1) * KEYS_EACH + k] end

for j in pairs(here) do
  for k = 1, KEYS_EACH do need_type(key(j, k), TYPES[k]) end
end
local making = #KEYS % KEYS_EACH == 1 and KEYS[#KEYS]
if making then need_type(making, 'hash') end

-- The tasks, and each queue's ids (busy checks and writes go per queue).
local tasks, ids = {}, {}
for i = 1, n do
  local a = at + (i - 1) * TASK_ARGS
  local j = tonumber(ARGV[a + 1])
  local t = {j = j, id = ARGV[a + 2], payload = ARGV[a + 4] == '1' and ARGV[a + 3],
    parent = tonumber(ARGV[a + 5]), policy = ARGV[a + 6], delay = ARGV[a + 7],
    tags = ARGV[a + 8] ~= '' and ARGV[a + 8]}
  t.name = queue_arg(j, 2) .. '/' .. t.id
  tasks[i] = t
  if here[j] then
    ids[j] = ids[j] or {}
    table.insert(ids[j], i)
  end
end
local busy = false
for j, list in pairs(ids) do
  for from = 1, #list, 1000 do
    local part = {}
    for x = from, math.min(#list, from + 999) do part[#part + 1] = tasks[list[x]].id end
    local waiting = redis.call('HMGET', key(j, 7), unpack(part))
    local linked = redis.call('HMGET', key(j, 9), unpack(part))
    local staged = redis.call('HMGET', key(j, 10), unpack(part))
    local queued, leased = queue_zscores(key(j, 1), part), queue_zscores(key(j, 4), part)
    for x in ipairs(part) do
      local i = list[from + x - 1]
      if (not busy or i < busy) and (waiting[x] or linked[x] or staged[x] or queued[x] or leased[x]) then
        busy = i
      end
    end
  end
end
if busy then return {'busy', busy} end

local children, names = {}, {}
for _, t in ipairs(tasks) do
  if t.parent > 0 then
    children[t.parent] = (children[t.parent] or 0) + 1
    names[t.parent] = names[t.parent] or {}
    table.insert(names[t.parent], t.name)
  end
end
local now = queue_now()
local out = {'added'}
for j = 1, q do
  local links, fields, waiting, staged = {}, {}, {}, {}
  local batch = queue_batch(now)
  for _, i in ipairs(ids[j] or {}) do
    local t = tasks[i]
    if t.parent > 0 then
      local p = tasks[t.parent]
      links[#links + 1] = t.id
      links[#links + 1] = queue_record(queue_arg(p.j, 2), queue_arg(p.j, 3), queue_arg(p.j, 4), p.id,
        token .. '.' .. (t.parent - 1), t.name)
    end
    if mode == 'stage' then
      staged[#staged + 1] = t.id
      staged[#staged + 1] = queue_record(token, children[i] and '0' or '1', t.payload, t.delay)
    end
    if children[i] then
      fields[#fields + 1] = token .. '.' .. (i - 1)
      fields[#fields + 1] = string.format('%d', children[i])
      for _, name in ipairs(names[i]) do
        fields[#fields + 1] = token .. '.' .. (i - 1) .. '\0' .. name
        fields[#fields + 1] = ''
      end
      waiting[#waiting + 1] = t.id
      waiting[#waiting + 1] = queue_record(token .. '.' .. (i - 1), t.policy,
        string.format('%d', children[i]), t.delay, t.tags, t.payload, unpack(names[i]))
    elseif mode ~= 'stage' then
      queue_batch_add(batch, t.id, t.delay, t.payload)
    end
  end
  if ids[j] then
    queue_each('HSET', key(j, 9), links)
    -- A parent's children's fields are in its own queue's hash (key(j, 8)
    -- of the parent's queue j): written with the parent.
    queue_each('HSET', key(j, 8), fields)
    queue_each('HSET', key(j, 7), waiting)
    queue_each('HSET', key(j, 10), staged)
    queue_add_batch(batch, key(j, 1), key(j, 2), key(j, 3))
    local first = ids[j][1]
    if #batch.ids > 0 then
      if queue_count_enqueued(key(j, 6), now, #batch.ids) then out[#out + 1] = first end
      if batch.ready > 0 then queue_wake(key(j, 5), queue_arg(j, 1), batch.ready, false, ms) end
      if batch.later then queue_wake(key(j, 5), queue_arg(j, 1), 0, true, ms) end
    elseif queue_unregistered(key(j, 6)) then
      out[#out + 1] = first
    end
  end
end
if making then
  local record = {'staging', string.format('%d', math.floor(now * 1000))}
  for j = 1, q do
    for f = 2, 4 do record[#record + 1] = queue_arg(j, f) end
  end
  redis.call('HSET', making, token, queue_record(unpack(record)))
end
return queue_relayed(out)
