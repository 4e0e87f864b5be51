-- include: queue_count.lua queue_group_count.lua
-- flags: allow-oom
-- Remove a task only if its score is still the one the caller saw: a task
-- enqueued again since has another score and stays. A removed task counts
-- as acked (the seed's consumer dequeues what it finished).
-- KEYS[1] queue zset; KEYS[2] stats hash; ARGV[1] task id; ARGV[2] score;
-- ARGV[3] the consumer key prefix (as queue_due.lua's ARGV[4]).
-- Returns 1 or 0. (Reading the score checks the queue's type: need_call.)
local score = need_call('zset', 'ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  need_type(KEYS[2], 'hash')
  local removed = redis.call('ZREM', KEYS[1], ARGV[1])
  if ARGV[3] then group_count_taken(ARGV[3], ARGV[3] .. 'groups', KEYS[2], ARGV[3] .. 'tags', {ARGV[1]}) end
  queue_count(KEYS[2], queue_now(), 'acked', removed)
  return removed
end
return 0
