-- What enqueuing a new task takes, wherever the queue's keys sit in KEYS
-- (a queue's own scripts, or a stock's take that enqueues its order).

-- Queues id (neither queued nor leased) in the queue whose due times,
-- payloads and attempts are the keys queue, payloads and attempts, due at
-- dueText, as a new task: its payload (false: none), no attempts. hadPayload
-- and hadAttempts: whether id has a payload or attempts there (false: it
-- has none, nothing to remove; nil: not known).
local function queue_add_to(queue, payloads, attempts, id, dueText, payload, hadPayload, hadAttempts)
  redis.call('ZADD', queue, dueText, id)
  if payload then
    redis.call('HSET', payloads, id, payload)
  elseif hadPayload ~= false then
    redis.call('HDEL', payloads, id)
  end
  if hadAttempts ~= false then redis.call('HDEL', attempts, id) end
end
