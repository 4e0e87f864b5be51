-- The least RedisQueue::enqueue that keeps its promise: the task is due by
-- the server's clock (not each client's), an id already queued keeps its
-- due time, and the enqueue is counted for the queue's metrics (enqueued
-- per 10 s period).
-- Leaves out: an id that is running (leased) waiting as a rerun instead of
-- being queued beside itself, waking a consumer blocked in reserve(),
-- keys of the wrong type failing by name before any write, registering
-- the queue for the CLI and the dashboard.
-- KEYS[1] queue; KEYS[2] stats hash; ARGV[1] delay in s; ARGV[2] id.
-- Returns how many were added.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local added = redis.call('ZADD', KEYS[1], 'NX', string.format('%.17g', now + tonumber(ARGV[1])), ARGV[2])
if added > 0 then redis.call('HINCRBY', KEYS[2], 'enqueued:' .. math.floor(now / 10), added) end
return added
