-- include: queue_task.lua
-- flags: allow-oom
-- The parent's step of children that ended (flow.rs): idempotent, so it
-- may run again for the same ends (a caller that went before it forgot
-- them, flow_read.lua). A child's end counts once, and only for the flow
-- that linked it (its token); a parent whose children have ended as its
-- policy says is queued, due after its delay, or sent to the dead letters
-- ('fail': a child died), its children's results kept (KEYS[20]).
-- KEYS: see queue_task.lua (the parent's queue), then KEYS[21] the waiting
-- parents (flows) and KEYS[22] their children (flow-children), as
-- flow_add.lua writes them; KEYS[23] (optional) the children's queue's
-- ended hash, in the same slot, whose records of these ends go once done.
-- ARGV[1] consumer key prefix; ARGV[2] how long a wake-up waits for its
-- consumer, in ms; ARGV[3..] parent id, flow token, child's name,
-- outcome ('acked', or 'dead' or 'removed': a failure for its policy),
-- result or why it died ('' with a '0' after: none), '1' or '0', the
-- child's id and its end's record as stored (forgotten from KEYS[23] when
-- still that), ...
-- Returns how many parents it queued or buried.
local p, ms = ARGV[1], ARGV[2]
need_type(KEYS[21], 'hash')
need_type(KEYS[22], 'hash')
if KEYS[23] then need_type(KEYS[23], 'hash') end

-- The queue's own keys are read and written only when a parent goes (once
-- per parent, not per child): their types are checked before the first
-- write only if one of these ends may release its parent, that is when it
-- failed or its parent has no more children left than ends here.
local ends, lefts = {}, {}
for i = 3, #ARGV, 8 do
  local token = ARGV[i + 1]
  if lefts[token] == nil then
    lefts[token] = tonumber(redis.call('HGET', KEYS[22], token))
    if not lefts[token] then
      local record = redis.call('HGET', KEYS[21], ARGV[i])
      local _, _, left = false, false, false
      if record then _, _, left = queue_fields(record) end
      lefts[token] = tonumber(left) or 0
    end
  end
  ends[token] = (ends[token] or 0) + 1
end
for i = 3, #ARGV, 8 do
  local token = ARGV[i + 1]
  if ARGV[i + 3] ~= 'acked' or lefts[token] <= ends[token] then
    queue_need(1, 2, 3, 6, 7, 8, 9, 10, 12, 13, 14, 20)
    queue_groups(p)
    break
  end
end
local now, nowText

-- The children's results of a parent (token; children a list of names)
-- as kept for it: name, outcome, value, ... (queue_record); the fields go.
local function results_of(token, names)
  local fields = {}
  for i, name in ipairs(names) do fields[i] = token .. '\0' .. name end
  local values = redis.call('HMGET', KEYS[22], unpack(fields))
  local out = {}
  for i, name in ipairs(names) do
    local outcome, value = false, false
    if values[i] and values[i] ~= '' then outcome, value = queue_fields(values[i]) end
    out[#out + 1] = name
    out[#out + 1] = outcome or 'waiting'
    out[#out + 1] = value or false
  end
  redis.call('HDEL', KEYS[22], unpack(fields))
  return queue_record(unpack(out))
end

local released = 0
for i = 3, #ARGV, 8 do
  local id, token, name, outcome = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local value = ARGV[i + 5] == '1' and ARGV[i + 4]
  local verdict, fields = flow_end(KEYS[21], KEYS[22], id, token, name, outcome, value, true)
  if verdict == 'go' or verdict == 'bury' then
    local _, _, _, delay, tags, payload = unpack(fields, 1, 6)
    if not now then
      now = queue_now()
      nowText = string.format('%.17g', now)
    end
    redis.call('HDEL', KEYS[21], id)
    redis.call('HSET', KEYS[20], id, results_of(token, {unpack(fields, 7)}))
    released = released + 1
    if verdict == 'bury' then
      local reason = 'child ' .. name .. (outcome == 'removed' and ' was removed'
        or (' died' .. (value and (': ' .. value) or '')))
      redis.call('ZADD', KEYS[7], nowText, id)
      redis.call('HSET', KEYS[8], id, queue_record('0', tags or false, payload or false))
      redis.call('HSET', KEYS[12], id, reason)
      queue_count(KEYS[10], now, 'dead', 1)
    else
      local due = now + (tonumber(delay) or 0)
      queue_add(id, string.format('%.17g', due), payload or false, tags or false)
      queue_count(KEYS[10], now, 'enqueued', 1)
      queue_wake_for(due, now, p, ms)
    end
  end
  if KEYS[23] and redis.call('HGET', KEYS[23], ARGV[i + 6]) == ARGV[i + 7] then
    redis.call('HDEL', KEYS[23], ARGV[i + 6])
  end
end
return queue_relayed(released)
