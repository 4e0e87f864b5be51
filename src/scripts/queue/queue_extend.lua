-- include: queue_task.lua
-- flags: allow-oom
-- Prolong a lease, only if it is still the caller's.
-- KEYS: see queue_task.lua.
-- ARGV[1] id; ARGV[2] lease token; ARGV[3] new lease in seconds from now.
-- Returns 1, or 0 when the lease is not the caller's.
if redis.call('HGET', KEYS[5], ARGV[1]) ~= ARGV[2] then
  return 0
end
queue_need(4)
redis.call('ZADD', KEYS[4], 'XX', string.format('%.17g', queue_now() + tonumber(ARGV[3])), ARGV[1])
return 1
