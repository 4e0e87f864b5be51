-- include: queue_task.lua
-- flags: allow-oom
-- Set a grouped queue's limits per group (queue_task.lua): the tasks each
-- group may have leased at once, the rate each group's tasks are reserved
-- at, or a throttle of one group. Every change that may let a group take
-- tasks sooner wakes the waiting consumers as a resume does.
-- KEYS: see queue_task.lua (KEYS[17]: each group's leased tasks).
-- ARGV[1] 'concurrency' | 'count' | 'rate' | 'throttle'; ARGV[2] consumer key prefix;
-- ARGV[3] how long a wake-up waits for its consumer, in ms; ARGV[4] the
-- concurrency (0: none), the rate ('<limit> <per seconds> <burst>'; '':
-- none), or the throttle's seconds from now (0 ending it); ARGV[5] the
-- throttled group.
-- 'count' is the next step of counting the tasks leased when a group
-- concurrency was set (queue_task.lua), COUNT_STEP tasks or marks.
-- Returns the ms a group's throttle has left (0: none); for 'concurrency'
-- and 'count', 2 while counting steps are left, else 1; else 1.
queue_need(1, 4, 9, 10, 13, 17)
local now = queue_now()
local msNow = math.floor(now * 1000)
local op, p = ARGV[1], ARGV[2]

local function wake() queue_wake_due(now, p, ARGV[3]) end

local COUNT_STEP = 500

if op == 'concurrency' then
  local limit = tonumber(ARGV[4])
  local was, phase, cursor = queue_concurrency(redis.call('HGET', KEYS[10], 'groupConcurrency'))
  local counting = false
  if limit == 0 then
    redis.call('HDEL', KEYS[10], 'groupConcurrency')
    redis.call('DEL', KEYS[17])
  elseif not was then
    -- Counting starts (in steps: 'count'), from no count.
    redis.call('DEL', KEYS[17])
    redis.call('HSET', KEYS[10], 'groupConcurrency', string.format('%d s0', limit))
    counting = true
  else
    -- (The steps go on where they are.)
    redis.call('HSET', KEYS[10], 'groupConcurrency', string.format('%d', limit) .. (phase ~= '' and ' ' .. phase .. cursor or ''))
    counting = phase ~= ''
  end
  if not limit or limit == 0 or (was and limit > was) then wake() end
  return counting and 2 or 1
end

if op == 'count' then
  local limit, phase, cursor = queue_concurrency(redis.call('HGET', KEYS[10], 'groupConcurrency'))
  if phase == '' then return 1 end
  local next
  if phase == 's' then
    -- The leased tasks of groups not counted yet (no mark) count now.
    local scan = redis.call('ZSCAN', KEYS[4], cursor, 'COUNT', COUNT_STEP)
    local ids = {}
    for i = 1, #scan[2], 2 do ids[#ids + 1] = scan[2][i] end
    local tags = #ids > 0 and redis.call('HMGET', KEYS[13], unpack(ids)) or {}
    local per = {}
    for i, id in ipairs(ids) do
      local g = tags_group(tags[i])
      if g and g ~= '' and redis.call('HSETNX', KEYS[17], QUEUE_MARK .. id, '1') == 1 then
        per[g] = (per[g] or 0) + 1
      end
    end
    for g, n in pairs(per) do redis.call('HINCRBY', KEYS[17], g, string.format('%d', n)) end
    next = scan[1] == '0' and 'u0' or 's' .. scan[1]
  else
    -- Every leased task is counted: the marks go.
    local scan = redis.call('HSCAN', KEYS[17], cursor, 'MATCH', QUEUE_MARK .. '*', 'COUNT', COUNT_STEP)
    local marks = {}
    for i = 1, #scan[2], 2 do marks[#marks + 1] = scan[2][i] end
    if #marks > 0 then redis.call('HDEL', KEYS[17], unpack(marks)) end
    next = scan[1] ~= '0' and 'u' .. scan[1]
  end
  redis.call('HSET', KEYS[10], 'groupConcurrency', string.format('%d', limit) .. (next and ' ' .. next or ''))
  return next and 2 or 1
end

if op == 'rate' then
  if ARGV[4] == '' then
    -- (The buckets' keys go by themselves once full.)
    redis.call('HDEL', KEYS[10], 'groupRate')
  else
    redis.call('HSET', KEYS[10], 'groupRate', ARGV[4])
  end
  wake()
  return 1
end

-- A group's throttle: the longer one wins, as the queue's
-- (queue_pause.lua).
local key = p .. QUEUE_GROUP_HELD .. ARGV[5]
local seconds = tonumber(ARGV[4])
local was = tonumber(redis.pcall('GET', key))
if seconds > 0 then
  local untilMs = math.ceil((now + seconds) * 1000)
  if was and was > untilMs then return was - msNow end
  redis.call('SET', key, string.format('%.0f', untilMs), 'PX', string.format('%d', untilMs - msNow))
  local latest = tonumber(redis.call('HGET', KEYS[10], 'groupHeld'))
  if not latest or latest < untilMs then
    redis.call('HSET', KEYS[10], 'groupHeld', string.format('%.0f', untilMs))
  end
  return untilMs - msNow
end
redis.call('DEL', key)
if was and was > msNow then wake() end
return 0
