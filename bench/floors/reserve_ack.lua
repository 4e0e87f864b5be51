-- The least leased queue that keeps RedisLock\Queue's promise for
-- enqueue, reserve and ack: tasks due by the server's clock, a reserved
-- task leased until a time on that clock (a worker that dies leaves it
-- due again), an ack that only the lease's holder can make, the payload
-- kept beside the task, each step counted for the metrics.
-- Leaves out: attempts and dead letters, reruns of a running id, pause,
-- rates, groups, tags, recent attempts, waking blocked consumers, the
-- worker's record, keys of the wrong type failing by name.
-- KEYS[1] queue; KEYS[2] leased; KEYS[3] payloads; KEYS[4] stats.
-- ARGV[1] 'enqueue' | 'reserve' | 'ack'.
--   enqueue: ARGV[2..] id, payload per task: returns how many were added.
--   reserve: ARGV[2] count, ARGV[3] lease in s: returns id, lease end,
--            payload per task.
--   ack: ARGV[2..] id, lease end as reserved, per task: returns how many
--        were acked.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local period = math.floor(now / 10)
local op = ARGV[1]
if op == 'enqueue' then
  local added = redis.call('ZADD', KEYS[1], 'NX', string.format('%.17g', now), ARGV[2])
  -- ARGV[2..]: id, payload pairs.
  local scores, set = {}, {}
  local due = string.format('%.17g', now)
  for i = #ARGV - 1, 2, -2 do
    scores[#scores + 1] = due
    scores[#scores + 1] = ARGV[i]
    set[#set + 1] = ARGV[i]
    set[#set + 1] = ARGV[i + 1]
  end
  local added = redis.call('ZADD', KEYS[1], 'NX', unpack(scores))
  redis.call('HSET', KEYS[3], unpack(set))
  redis.call('HINCRBY', KEYS[4], 'enqueued:' .. period, added)
  return added
elseif op == 'reserve' then
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now), 'LIMIT', 0, ARGV[2])
  if #due == 0 then return {} end
  local ends = string.format('%.17g', now + tonumber(ARGV[3]))
  local payloads = redis.call('HMGET', KEYS[3], unpack(due))
  local leases, out = {}, {}
  for i, id in ipairs(due) do
    leases[#leases + 1] = ends
    leases[#leases + 1] = id
    out[#out + 1] = id
    out[#out + 1] = ends
    out[#out + 1] = payloads[i] or ''
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due - 1)
  redis.call('ZADD', KEYS[2], unpack(leases))
  return out
end
-- ack: ARGV[2], ARGV[3] pairs of id and lease end.
local done = {}
for i = 2, #ARGV, 2 do
  if tonumber(redis.call('ZSCORE', KEYS[2], ARGV[i])) == tonumber(ARGV[i + 1]) then
    done[#done + 1] = ARGV[i]
  end
end
if #done == 0 then return 0 end
redis.call('ZREM', KEYS[2], unpack(done))
redis.call('HDEL', KEYS[3], unpack(done))
redis.call('HINCRBY', KEYS[4], 'acked:' .. period, #done)
return #done
