-- include: queue_task.lua
-- flags: allow-oom
-- Look at tasks without taking them: the queued ones, earliest due first,
-- the leased ones, earliest lease end first, one task by id, wherever it
-- is, or the tasks with a tag.
-- KEYS: see queue_task.lua.
-- ARGV[1] 'list' or 'leased' (ARGV[2]: how many at most) or 'find'
-- (ARGV[2]: the id) or 'tagged' (ARGV[2]: the tag; ARGV[3]: where the scan
-- is, 'live:<cursor>' in the tags hash or 'dead:<cursor>' in the dead
-- letters hash, 'live:0' to begin; ARGV[4]: about how many fields to scan)
-- or 'groups' (ARGV[2]: how many at most; ARGV[3]: the consumer key prefix).
-- Returns {id, payload or false, attempts, state, time, why its last
-- attempt failed or false, its lease token or false, its tags or false,
-- ...}: state 'queued' (time: due), 'leased' (time: the lease's end) or
-- 'dead' (time: of death), in seconds on the server clock as strings;
-- 'tagged' returns {where to scan next ('': done), those}; 'groups' the
-- groups in the order reserve() serves them (queue_task.lua), then those
-- whose tasks are all leased (when counted), {{group, its hinted tasks, its
-- leased tasks (false: not counted), the ms its throttle has left}, ...}.
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
  out[#out + 1] = redis.call('HGET', KEYS[13], id)
end
local function addDead(id)
  local attempts, payload, _, reason, tags = queue_grave(id)
  if not attempts then return end
  for _, v in ipairs({id, payload, attempts, 'dead', redis.call('ZSCORE', KEYS[7], id), reason, false, tags}) do
    out[#out + 1] = v
  end
end
-- Adds the task under id: queued or leased (false when neither).
local function addLive(id)
  for _, place in ipairs({{KEYS[1], 'queued'}, {KEYS[4], 'leased'}}) do
    local at = redis.call('ZSCORE', place[1], id)
    if at then
      add(id, place[2], at)
      return true
    end
  end
  return false
end
if ARGV[1] == 'list' or ARGV[1] == 'leased' then
  local place, state = KEYS[1], 'queued'
  if ARGV[1] == 'leased' then place, state = KEYS[4], 'leased' end
  local tasks = redis.call('ZRANGE', place, 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
  for i = 1, #tasks, 2 do add(tasks[i], state, tasks[i + 1]) end
  return out
end
if ARGV[1] == 'groups' then
  local stats = redis.call('HMGET', KEYS[10], 'groupConcurrency', 'groupHeld')
  local counted = queue_concurrency(stats[1])
  local msNow = math.floor(queue_now() * 1000)
  local held = (tonumber(stats[2]) or 0) > msNow
  local most = tonumber(ARGV[2])
  local listed = {}
  -- (Counted since the queue became grouped, else its hints: a queue
  -- grouped by a release before the counts.)
  local counts = redis.call('EXISTS', ARGV[3] .. 'group-count') == 1
  local function add(g)
    listed[g] = true
    local queued = counts and (tonumber(redis.pcall('HGET', ARGV[3] .. 'group-count', g)) or 0)
      or redis.pcall('LLEN', ARGV[3] .. 'group:' .. g)
    -- Its leased tasks, when counted (a group concurrency), and the ms its
    -- throttle has left.
    local leased = counted and g ~= '' and (tonumber(redis.call('HGET', KEYS[17], g)) or 0) or false
    local untilMs = held and tonumber(redis.pcall('GET', ARGV[3] .. QUEUE_GROUP_HELD .. g))
    out[#out + 1] = {g, type(queued) == 'number' and queued or 0, leased,
      untilMs and untilMs > msNow and untilMs - msNow or 0}
  end
  for _, g in ipairs(need_call('zset', 'ZRANGE', KEYS[14], 0, most - 1)) do add(g) end
  -- Then, when counted, the groups whose tasks are all leased (none queued:
  -- no turn), after the others.
  local cursor = '0'
  while counted and #out < most do
    local scan = need_call('hash', 'HSCAN', KEYS[17], cursor, 'COUNT', most)
    for i = 1, #scan[2], 2 do
      -- (Not a counting step's mark: queue_task.lua.)
      local g = scan[2][i]
      if #out < most and not listed[g] and string.sub(g, 1, 1) ~= QUEUE_MARK then add(g) end
    end
    cursor = scan[1]
    if cursor == '0' then break end
  end
  return out
end
if ARGV[1] == 'tagged' then
  local tag = ' ' .. ARGV[2] .. ' '
  local where, cursor = string.match(ARGV[3], '^(%a+):(%d+)$')
  local dead = where == 'dead'
  local scan = need_call('hash', 'HSCAN', dead and KEYS[8] or KEYS[13], cursor or '0', 'COUNT', ARGV[4])
  for i = 1, #scan[2], 2 do
    local id, value = scan[2][i], scan[2][i + 1]
    -- A dead letter's tags follow its attempts (queue_tags.lua reads
    -- them).
    if dead then value = select(2, queue_task_fields(value)) or '' end
    value = tags_words(value)
    if string.find(' ' .. value .. ' ', tag, 1, true) then
      if dead then addDead(id) else addLive(id) end
    end
  end
  local next = ''
  if scan[1] ~= '0' then
    next = (dead and 'dead:' or 'live:') .. scan[1]
  elseif not dead then
    next = 'dead:0'
  end
  return {next, out}
end
if not addLive(ARGV[2]) then addDead(ARGV[2]) end
return out
