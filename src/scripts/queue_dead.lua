-- The dead letters: list them, retry them (due now, attempts reset), or
-- purge them (with their payloads). Bounded: at most ARGV[2] per call.
-- KEYS[1] queue zset; KEYS[2] payloads hash; KEYS[3] attempts hash;
-- KEYS[4] dead zset; KEYS[5] consumer line; KEYS[6] stats hash.
-- ARGV[1] 'list' | 'retry' | 'purge'; ARGV[2] most tasks; ARGV[3] consumer
-- key prefix; ARGV[4] how long a wake-up waits for its consumer, in ms;
-- ARGV[5..] the ids (none: the oldest dead first).
-- list returns {id, payload or false, attempts, time of death, ...};
-- retry and purge return how many they moved or removed.
local ids = {}
if #ARGV > 4 then
  for i = 5, #ARGV do
    if redis.call('ZSCORE', KEYS[4], ARGV[i]) then
      ids[#ids + 1] = ARGV[i]
    end
  end
else
  ids = redis.call('ZRANGE', KEYS[4], 0, tonumber(ARGV[2]) - 1)
end
local op = ARGV[1]
if op == 'list' then
  local out = {}
  for _, id in ipairs(ids) do
    out[#out + 1] = id
    out[#out + 1] = redis.call('HGET', KEYS[2], id)
    out[#out + 1] = tonumber(redis.call('HGET', KEYS[3], id)) or 0
    out[#out + 1] = redis.call('ZSCORE', KEYS[4], id)
  end
  return out
end
local now = queue_now()
local nowText = string.format('%.17g', now)
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[4], id)
  redis.call('HDEL', KEYS[3], id)
  if op == 'retry' then
    redis.call('ZADD', KEYS[1], 'NX', nowText, id)
  else
    redis.call('HDEL', KEYS[2], id)
  end
end
if op == 'retry' then
  queue_count(KEYS[6], now, 'retried', #ids)
  queue_wake(KEYS[5], ARGV[3], #ids, false, ARGV[4])
end
return #ids
