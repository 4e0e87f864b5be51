-- Finish a leased task, only if the caller's lease is still the task's: a
-- worker whose lease ran out and was handed to another cannot ack.
-- KEYS[1] queue zset; KEYS[2] payloads hash; KEYS[3] attempts hash;
-- KEYS[4] leased zset; KEYS[5] lease tokens hash.
-- ARGV[1] id; ARGV[2] lease token. Returns 1, or 0 when the lease is not
-- the caller's.
if redis.call('HGET', KEYS[5], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
-- Enqueued again while leased: that new run keeps its payload.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return 1
