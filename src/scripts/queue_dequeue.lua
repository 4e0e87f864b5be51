-- Remove a task only if its score is still the one the caller saw: a task
-- enqueued again since has another score and stays.
-- KEYS[1] queue zset; ARGV[1] task id; ARGV[2] score. Returns 1 or 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
