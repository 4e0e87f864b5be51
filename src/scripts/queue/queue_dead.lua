-- include: queue_task.lua
-- flags: allow-oom
-- The dead letters: list them, retry them (due now, attempts reset), or
-- purge them. Bounded: at most ARGV[2] per call. A retried dead letter is
-- enqueued as enqueue() does under 'keep': a task of the same id queued
-- since is newer and stays as it is; one leased gets it as its rerun
-- (queue_task.lua).
-- KEYS: see queue_task.lua.
-- ARGV[1] 'list' | 'retry' | 'purge'; ARGV[2] most tasks; ARGV[3] consumer
-- key prefix; ARGV[4] how long a wake-up waits for its consumer, in ms;
-- ARGV[5] the queue's maximum length, queued plus leased (0: none): retry
-- stops at the dead letter that would pass it; ARGV[6..] the ids (none:
-- the oldest dead first).
-- list returns {id, payload or false, attempts, time of death, why it
-- died or false, its tags or false, ...};
-- purge returns how many dead letters it took; retry returns {how many,
-- the queue's length when it stopped at the maximum length, else -1}.
local ids = {}
if #ARGV > 5 then
  local seen = {}
  for i = 6, #ARGV do
    if not seen[ARGV[i]] and redis.call('ZSCORE', KEYS[7], ARGV[i]) then
      ids[#ids + 1] = ARGV[i]
    end
    seen[ARGV[i]] = true
  end
else
  ids = redis.call('ZRANGE', KEYS[7], 0, tonumber(ARGV[2]) - 1)
end
local op = ARGV[1]
if op == 'list' then
  local out = {}
  for _, id in ipairs(ids) do
    local attempts, payload, _, reason, tags = queue_grave(id)
    out[#out + 1] = id
    out[#out + 1] = payload
    out[#out + 1] = attempts
    out[#out + 1] = redis.call('ZSCORE', KEYS[7], id)
    out[#out + 1] = reason
    out[#out + 1] = tags
  end
  return out
end
if #ids == 0 then
  if op == 'retry' then return {0, -1} end
  return 0
end
queue_need(1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13)
queue_groups(ARGV[3])
local now = queue_now()
local nowText = string.format('%.17g', now)
local max = tonumber(ARGV[5])
local length = -1
-- Retried dead letters that queue a task (not reruns of a leased id, not
-- ids queued since) take room; the first that finds none stops the retry.
local room = math.huge
if op == 'retry' and max > 0 then
  length = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[4])
  room = max - length
end
local queued, taken = 0, 0
for _, id in ipairs(ids) do
  local leased = op == 'retry' and redis.call('ZSCORE', KEYS[4], id)
  local adds = op == 'retry' and not leased and not redis.call('ZSCORE', KEYS[1], id)
  if adds and queued >= room then break end
  local _, payload, old, _, tags = queue_grave(id)
  queue_unbury(id, old)
  taken = taken + 1
  if leased then
    queue_rerun(id, now, nowText, payload, 'keep', tags)
  elseif adds then
    queue_add(id, nowText, payload, tags)
    queued = queued + 1
  end
end
if op == 'retry' then
  queue_count(KEYS[10], now, 'retried', taken)
  queue_wake(KEYS[9], ARGV[3], queued, false, ARGV[4])
  if taken < #ids then return queue_relayed({taken, length + queued}) end
  return queue_relayed({taken, -1})
end
return taken
