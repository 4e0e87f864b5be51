-- What enqueuing a new task takes, wherever the queue's keys sit in KEYS
-- (a queue's own scripts, or a stock's take that enqueues its order).

-- Queues id (neither queued nor leased) in the queue whose due times,
-- payloads and attempts are the keys queue, payloads and attempts, due at
-- dueText, as a new task: its payload (false: none), no attempts.
local function queue_add_to(queue, payloads, attempts, id, dueText, payload)
  redis.call('ZADD', queue, dueText, id)
  if payload then
    redis.call('HSET', payloads, id, payload)
  else
    redis.call('HDEL', payloads, id)
  end
  redis.call('HDEL', attempts, id)
end
