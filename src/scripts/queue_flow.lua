-- include: queue_task.lua
-- flags: allow-oom
-- Set a grouped queue's limits per group (queue_task.lua): the tasks each
-- group may have leased at once, the rate each group's tasks are reserved
-- at, or a throttle of one group. Every change that may let a group take
-- tasks sooner wakes the waiting consumers as a resume does.
-- KEYS: see queue_task.lua (KEYS[17]: each group's leased tasks).
-- ARGV[1] 'concurrency' | 'rate' | 'throttle'; ARGV[2] consumer key prefix;
-- ARGV[3] how long a wake-up waits for its consumer, in ms; ARGV[4] the
-- concurrency (0: none), the rate ('<limit> <per seconds> <burst>'; '':
-- none), or the throttle's seconds from now (0 ending it); ARGV[5] the
-- throttled group.
-- Returns the ms a group's throttle has left (0: none); else 1.
queue_need(1, 4, 9, 10, 13, 17)
local now = queue_now()
local msNow = math.floor(now * 1000)
local op, p = ARGV[1], ARGV[2]

local function wake() queue_wake_due(now, p, ARGV[3]) end

if op == 'concurrency' then
  local limit = tonumber(ARGV[4])
  local was = tonumber(redis.call('HGET', KEYS[10], 'groupConcurrency'))
  if limit == 0 then
    redis.call('HDEL', KEYS[10], 'groupConcurrency')
    redis.call('DEL', KEYS[17])
  else
    redis.call('HSET', KEYS[10], 'groupConcurrency', string.format('%d', limit))
    if not was then
      -- Counting starts: the tasks leased now, by their groups.
      redis.call('DEL', KEYS[17])
      local leased = redis.call('ZRANGE', KEYS[4], 0, -1)
      for from = 1, #leased, 1000 do
        local chunk = {unpack(leased, from, math.min(from + 999, #leased))}
        local tags = redis.call('HMGET', KEYS[13], unpack(chunk))
        local per = {}
        for i = 1, #chunk do
          local g = queue_group_of(tags[i])
          if g and g ~= '' then per[g] = (per[g] or 0) + 1 end
        end
        for g, n in pairs(per) do redis.call('HINCRBY', KEYS[17], g, string.format('%d', n)) end
      end
    end
  end
  if not limit or limit == 0 or (was and limit > was) then wake() end
  return 1
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
