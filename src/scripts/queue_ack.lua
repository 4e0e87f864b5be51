-- Finish leased tasks, each only if the caller's lease is still the task's:
-- a worker whose lease ran out and was handed to another cannot ack.
-- KEYS[1] queue zset; KEYS[2] payloads hash; KEYS[3] attempts hash;
-- KEYS[4] leased zset; KEYS[5] lease tokens hash; KEYS[6] stats hash.
-- ARGV: id, lease token, id, lease token, ...
-- Returns how many were finished.
local done = 0
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', KEYS[5], id) == ARGV[i + 1] then
    redis.call('ZREM', KEYS[4], id)
    redis.call('HDEL', KEYS[5], id)
    redis.call('HDEL', KEYS[3], id)
    -- Enqueued again while leased: that new run keeps its payload.
    if not redis.call('ZSCORE', KEYS[1], id) then
      redis.call('HDEL', KEYS[2], id)
    end
    done = done + 1
  end
end
queue_count(KEYS[6], queue_now(), 'acked', done)
return done
