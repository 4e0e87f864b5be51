-- include: queue_task.lua
-- flags: allow-oom
-- Look at tasks without taking them: the queued ones, earliest due first,
-- the leased ones, earliest lease end first, or one task by id, wherever it
-- is.
-- KEYS: see queue_task.lua.
-- ARGV[1] 'list' or 'leased' (ARGV[2]: how many at most) or 'find'
-- (ARGV[2]: the id).
-- Returns {id, payload or false, attempts, state, time, why its last
-- attempt failed or false, its lease token or false, ...}: state 'queued'
-- (time: due), 'leased' (time: the lease's end) or 'dead' (time: of death),
-- in seconds on the server clock as strings.
local out = {}
local function add(id, state, at)
  local attempts = tonumber(redis.call('HGET', KEYS[3], id)) or 0
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id)
  out[#out + 1] = attempts
  out[#out + 1] = state
  out[#out + 1] = at
  out[#out + 1] = attempts > 0 and redis.call('HGET', KEYS[11], id)
  out[#out + 1] = state == 'leased' and redis.call('HGET', KEYS[5], id)
end
if ARGV[1] == 'list' or ARGV[1] == 'leased' then
  local place, state = KEYS[1], 'queued'
  if ARGV[1] == 'leased' then place, state = KEYS[4], 'leased' end
  local tasks = redis.call('ZRANGE', place, 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
  for i = 1, #tasks, 2 do add(tasks[i], state, tasks[i + 1]) end
  return out
end
local id = ARGV[2]
for _, place in ipairs({{KEYS[1], 'queued'}, {KEYS[4], 'leased'}}) do
  local at = redis.call('ZSCORE', place[1], id)
  if at then
    add(id, place[2], at)
    return out
  end
end
local attempts, payload, _, reason = queue_grave(id)
if attempts then
  return {id, payload, attempts, 'dead', redis.call('ZSCORE', KEYS[7], id), reason, false}
end
return out
