-- The least RedisQueue::pop that keeps its promise: the earliest due tasks
-- by the server's clock, removed in the same step as they are read (no
-- two consumers get one task), counted as acked for the metrics.
-- Leaves out: pause, throttle and rate (one HMGET of the stats hash),
-- group counts, keys of the wrong type failing by name.
-- KEYS[1] queue; KEYS[2] stats hash; ARGV[1] count.
-- Returns id, score, id, score, ...
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now), 'WITHSCORES', 'LIMIT', 0, ARGV[1])
if #due > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due / 2 - 1)
  redis.call('HINCRBY', KEYS[2], 'acked:' .. math.floor(now / 10), #due / 2)
end
return due
