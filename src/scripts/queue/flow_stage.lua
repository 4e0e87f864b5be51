-- include: queue_line.lua queue_count.lua queue_add.lua queue_record.lua
-- flags: allow-oom
-- The steps of a flow across Cluster slots after each slot's part was
-- staged (flow_add.lua's 'stage'; flow.rs), each idempotent. The flow's
-- record in its root queue's flow-making hash says which way it goes: from
-- 'staging', its creator moves it to 'committing' (then each queue's
-- leaves are queued) or, when a slot refused it, undoes it; a creator that
-- went half way is finished by a later caller, forward when it was
-- committing, back ('dropping') when it was still staging.
-- ARGV[1] 'commit' or 'drop': KEYS a queue's 10 keys of flow_add.lua,
-- ARGV[2] the flow's token, ARGV[3] the queue's consumer key prefix,
-- ARGV[4] how long a wake-up waits for its consumer, in ms. 'commit'
-- queues the leaves the flow staged there (those not queued or leased
-- since) and forgets what it staged: returns 1 when the queue was never
-- registered, else 0. 'drop' undoes what it staged there: its waiting
-- parents with their children's fields, the links to its parents, the
-- staged tasks; returns how many tasks.
-- ARGV[1] 'start' (to 'committing') or 'abandon' (to 'dropping'): KEYS[1]
-- the root queue's flow-making hash, ARGV[2] the token; returns 1 when the
-- flow was 'staging', else 0 (it went the other way, or is not made).
-- ARGV[1] 'done': forgets the flow's record; returns 1 or 0.
-- ARGV[1] 'old': the flows being made since before ARGV[2] ms ago, up to
-- 100: {{token, state, name, partition, partitions, ...}, ...}.
local op = ARGV[1]

if op == 'commit' or op == 'drop' then
  local TYPES = {'zset', 'hash', 'hash', 'zset', 'list', 'hash', 'hash', 'hash', 'hash', 'hash'}
  for k = 1, #TYPES do need_type(KEYS[k], TYPES[k]) end
  local token = ARGV[2]
  local mine, gone = {}, {}
  local all = redis.call('HGETALL', KEYS[10])
  for x = 1, #all, 2 do
    local owner, leaf, payload, delay = queue_fields(all[x + 1])
    if owner == token then
      mine[#mine + 1] = {id = all[x], leaf = leaf == '1', payload = payload, delay = delay}
      gone[#gone + 1] = all[x]
    end
  end
  if #mine == 0 then return 0 end
  local ours = token .. '.'
  local function flows(value)
    return value and string.sub(value, 1, #ours) == ours
  end
  local registered = 0
  if op == 'commit' then
    local batch = queue_batch(queue_now())
    for _, t in ipairs(mine) do
      if t.leaf and not redis.call('ZSCORE', KEYS[1], t.id) and not redis.call('ZSCORE', KEYS[4], t.id) then
        queue_batch_add(batch, t.id, t.delay, t.payload)
      end
    end
    queue_add_batch(batch, KEYS[1], KEYS[2], KEYS[3])
    if #batch.ids > 0 and queue_count_enqueued(KEYS[6], batch.now, #batch.ids) then registered = 1 end
    if batch.ready > 0 then queue_wake(KEYS[5], ARGV[3], batch.ready, false, ARGV[4]) end
    if batch.later then queue_wake(KEYS[5], ARGV[3], 0, true, ARGV[4]) end
  else
    for _, t in ipairs(mine) do
      local record = redis.call('HGET', KEYS[7], t.id)
      local fields = record and {queue_fields(record)} or {}
      if flows(fields[1]) then
        local del = {fields[1]}
        for x = 7, #fields do del[#del + 1] = fields[1] .. '\0' .. fields[x] end
        queue_each('HDEL', KEYS[8], del)
        redis.call('HDEL', KEYS[7], t.id)
      end
      local link = redis.call('HGET', KEYS[9], t.id)
      if link and flows(select(5, queue_fields(link))) then redis.call('HDEL', KEYS[9], t.id) end
    end
  end
  queue_each('HDEL', KEYS[10], gone)
  return op == 'commit' and registered or #mine
end

local making = KEYS[1]
if op == 'start' or op == 'abandon' then
  local record = need_call('hash', 'HGET', making, ARGV[2])
  local fields = record and {queue_fields(record)} or {}
  if fields[1] ~= 'staging' then return 0 end
  fields[1] = op == 'start' and 'committing' or 'dropping'
  redis.call('HSET', making, ARGV[2], queue_record(unpack(fields)))
  return 1
end
if op == 'done' then
  return need_call('hash', 'HDEL', making, ARGV[2])
end
if op == 'old' then
  local t = redis.call('TIME')
  local before = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[2])
  local out = {}
  local all = need_call('hash', 'HGETALL', making)
  for x = 1, #all, 2 do
    local fields = {queue_fields(all[x + 1])}
    if tonumber(fields[2]) and tonumber(fields[2]) <= before then
      table.remove(fields, 2)
      table.insert(fields, 1, all[x])
      out[#out + 1] = fields
      if #out == 100 then break end
    end
  end
  return out
end
error({err = "ERR flow_stage.lua: no op " .. op})
