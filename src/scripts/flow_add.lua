-- include: queue_line.lua queue_count.lua queue_add.lua queue_record.lua
-- flags: allow-oom
-- Creates a workflow in one step (flow.rs): tasks, each in its queue,
-- those with children waiting for them (not reservable), each child
-- linked to its parent (queue_task.lua: queue_flow_end).
-- KEYS: 9 per task, in its order: its queue's (or partition's) queue
-- zset, payloads, attempts, leased zset, consumer line, stats, waiting
-- parents hash (flows), waiting parents' children hash (flow-children),
-- links hash.
-- ARGV[1] how long a wake-up waits for its consumer, in ms; ARGV[2] how
-- many tasks (n); then 13 per task: id, payload, '1' when it has one,
-- its parent's index (1-based; 0: the root), its policy for a failed child
-- ('fail', 'ignore', 'continue'), its delay in seconds once due, its
-- stored tags ('': none), its name for its parent ('<queue>/<id>'), its
-- queue's consumer key prefix, its flow token (a parent's own), its
-- queue's name, its partition and partition count.
-- A waiting parent's record (flows hash): token, policy, children left,
-- delay, tags or false, payload or false, then its children's names. Each
-- child is also the field '<token>\0<name>' of the flow-children hash:
-- '' until it ends, then its outcome and value (queue_record).
-- Returns {'added', indices of the tasks whose queue was never
-- registered...} (queue_relayed), or {'busy', i} when task i's id is
-- queued, leased, waiting or a child already: then nothing is written.
local KEYS_EACH, ARGS_EACH = 9, 13
local TYPES = {'zset', 'hash', 'hash', 'zset', 'list', 'hash', 'hash', 'hash', 'hash'}
local ms, n = ARGV[1], tonumber(ARGV[2])
local function arg(i, f) return ARGV[2 + (i - 1) * ARGS_EACH + f] end
local function key(i, k) return KEYS[(i - 1) * KEYS_EACH + k] end

for i = 1, n do
  for k = 1, KEYS_EACH do need_type(key(i, k), TYPES[k]) end
end
local children, names = {}, {}
for i = 1, n do
  local id = arg(i, 1)
  if redis.call('ZSCORE', key(i, 1), id) or redis.call('ZSCORE', key(i, 4), id)
    or redis.call('HEXISTS', key(i, 7), id) == 1 or redis.call('HEXISTS', key(i, 9), id) == 1 then
    return {'busy', i}
  end
  local parent = tonumber(arg(i, 4))
  if parent > 0 then
    children[parent] = (children[parent] or 0) + 1
    names[parent] = names[parent] or {}
    table.insert(names[parent], arg(i, 8))
  end
end

local now = queue_now()
local out = {'added'}
for i = 1, n do
  local id, parent = arg(i, 1), tonumber(arg(i, 4))
  local payload = arg(i, 3) == '1' and arg(i, 2)
  local tags = arg(i, 7) ~= '' and arg(i, 7)
  if parent > 0 then
    redis.call('HSET', key(i, 9), id,
      queue_record(arg(parent, 11), arg(parent, 12), arg(parent, 13), arg(parent, 1), arg(parent, 10), arg(i, 8)))
    redis.call('HSET', key(parent, 8), arg(parent, 10) .. '\0' .. arg(i, 8), '')
  end
  if children[i] then
    redis.call('HSET', key(i, 7), id, queue_record(arg(i, 10), arg(i, 5),
      string.format('%d', children[i]), arg(i, 6), tags, payload, unpack(names[i])))
    if queue_unregistered(key(i, 6)) then out[#out + 1] = i end
  else
    local due = now + tonumber(arg(i, 6))
    queue_add_to(key(i, 1), key(i, 2), key(i, 3), id, string.format('%.17g', due), payload)
    if queue_count_enqueued(key(i, 6), now, 1) then out[#out + 1] = i end
    if due <= now then
      queue_wake(key(i, 5), arg(i, 9), 1, false, ms)
    else
      queue_wake(key(i, 5), arg(i, 9), 0, true, ms)
    end
  end
end
return queue_relayed(out)
