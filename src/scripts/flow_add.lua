-- include: queue_line.lua queue_count.lua queue_add.lua queue_record.lua
-- flags: allow-oom
-- Creates a workflow in one step (flow.rs): tasks, each in its queue,
-- those with children waiting for them (not reservable), each child
-- linked to its parent (queue_task.lua: queue_flow_end).
-- KEYS: 9 per queue (or partition) of the flow, in its order: its queue
-- zset, payloads, attempts, leased zset, consumer line, stats, waiting
-- parents hash (flows), waiting parents' children hash (flow-children),
-- links hash.
-- ARGV[1] how long a wake-up waits for its consumer, in ms; ARGV[2] the
-- flow's token (task i's, a parent's own, is '<token>.<i - 1>'); ARGV[3]
-- how many queues (q); then 4 per queue: its consumer key prefix, name,
-- partition and partition count; then how many tasks (n); then 8 per task:
-- its queue (1-based), id, payload, '1' when it has one, its parent's
-- index (1-based; 0: the root), its policy for a failed child ('fail',
-- 'ignore', 'continue'), its delay in seconds once due, its stored tags
-- ('': none).
-- A waiting parent's record (flows hash): token, policy, children left,
-- delay, tags or false, payload or false, then its children's names
-- ('<queue>/<id>'). Each child is also the field '<token>\0<name>' of the
-- flow-children hash: '' until it ends, then its outcome and value
-- (queue_record); the field '<token>' there counts the children left
-- (flow_end.lua; the record keeps the first count).
-- Returns {'added', indices of the first task of each queue that was never
-- registered...} (queue_relayed), or {'busy', i} when task i's id is
-- queued, leased, waiting or a child already: then nothing is written.
local KEYS_EACH, QUEUE_ARGS, TASK_ARGS = 9, 4, 8
local TYPES = {'zset', 'hash', 'hash', 'zset', 'list', 'hash', 'hash', 'hash', 'hash'}
local ms, token, q = ARGV[1], ARGV[2], tonumber(ARGV[3])
local at = 4 + q * QUEUE_ARGS
local n = tonumber(ARGV[at])
local function queue_arg(j, f) return ARGV[3 + (j - 1) * QUEUE_ARGS + f] end
local function key(j, k) return KEYS[(j - 1) * KEYS_EACH + k] end

for j = 1, q do
  for k = 1, KEYS_EACH do need_type(key(j, k), TYPES[k]) end
end

-- The tasks, and each queue's ids (busy checks and writes go per queue).
local tasks, ids = {}, {}
for i = 1, n do
  local a = at + (i - 1) * TASK_ARGS
  local j = tonumber(ARGV[a + 1])
  local t = {j = j, id = ARGV[a + 2], payload = ARGV[a + 4] == '1' and ARGV[a + 3],
    parent = tonumber(ARGV[a + 5]), policy = ARGV[a + 6], delay = tonumber(ARGV[a + 7]),
    tags = ARGV[a + 8] ~= '' and ARGV[a + 8]}
  t.name = queue_arg(j, 2) .. '/' .. t.id
  tasks[i] = t
  ids[j] = ids[j] or {}
  table.insert(ids[j], i)
end
local busy = false
for j = 1, q do
  local list = {}
  for x, i in ipairs(ids[j] or {}) do list[x] = tasks[i].id end
  for from = 1, #list, 1000 do
    local part = {unpack(list, from, math.min(#list, from + 999))}
    local waiting = redis.call('HMGET', key(j, 7), unpack(part))
    local linked = redis.call('HMGET', key(j, 9), unpack(part))
    local queued, leased = queue_zscores(key(j, 1), part), queue_zscores(key(j, 4), part)
    for x in ipairs(part) do
      local i = ids[j][from + x - 1]
      if (not busy or i < busy) and (waiting[x] or linked[x] or queued[x] or leased[x]) then
        busy = i
      end
    end
  end
end
if busy then return {'busy', busy} end

-- Runs command on key with the arguments in list, a thousand at a time.
local function each(command, k, list)
  for from = 1, #list, 1000 do
    redis.call(command, k, unpack(list, from, math.min(#list, from + 999)))
  end
end

local children, names = {}, {}
for i, t in ipairs(tasks) do
  if t.parent > 0 then
    children[t.parent] = (children[t.parent] or 0) + 1
    names[t.parent] = names[t.parent] or {}
    table.insert(names[t.parent], t.name)
  end
end
local now = queue_now()
local out = {'added'}
for j = 1, q do
  local links, fields, waiting, due, payloads, bare, taskIds = {}, {}, {}, {}, {}, {}, {}
  local ready, later = 0, false
  for _, i in ipairs(ids[j] or {}) do
    local t = tasks[i]
    if t.parent > 0 then
      local p = tasks[t.parent]
      links[#links + 1] = t.id
      links[#links + 1] = queue_record(queue_arg(p.j, 2), queue_arg(p.j, 3), queue_arg(p.j, 4), p.id,
        token .. '.' .. (t.parent - 1), t.name)
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
        string.format('%d', children[i]), ARGV[at + (i - 1) * TASK_ARGS + 7], t.tags, t.payload,
        unpack(names[i]))
    else
      local at_ = now + t.delay
      due[#due + 1] = t.id
      due[#due + 1] = string.format('%.17g', at_)
      taskIds[#taskIds + 1] = t.id
      if t.payload then
        payloads[#payloads + 1] = t.id
        payloads[#payloads + 1] = t.payload
      else
        bare[#bare + 1] = t.id
      end
      if at_ <= now then ready = ready + 1 else later = true end
    end
  end
  each('HSET', key(j, 9), links)
  -- A parent's children's fields are in its own queue's hash (key(j, 8)
  -- of the parent's queue j): written with the parent.
  each('HSET', key(j, 8), fields)
  each('HSET', key(j, 7), waiting)
  -- Members and scores in reverse, as queue_add.lua says.
  local reversed = {}
  for x = #due, 1, -1 do reversed[#reversed + 1] = due[x] end
  each('ZADD', key(j, 1), reversed)
  each('HSET', key(j, 2), payloads)
  each('HDEL', key(j, 2), bare)
  each('HDEL', key(j, 3), taskIds)
  local first = (ids[j] or {})[1]
  if #taskIds > 0 then
    if queue_count_enqueued(key(j, 6), now, #taskIds) and first then out[#out + 1] = first end
    if ready > 0 then queue_wake(key(j, 5), queue_arg(j, 1), ready, false, ms) end
    if later then queue_wake(key(j, 5), queue_arg(j, 1), 0, true, ms) end
  elseif first and queue_unregistered(key(j, 6)) then
    out[#out + 1] = first
  end
end
return queue_relayed(out)
