-- Delete the lock only if it still holds the caller's token, and wake the
-- waiters subscribed to the key's channel.
-- KEYS[1] lock key; ARGV[1] owner token. Returns 1 if deleted, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[1], '')
  return 1
end
return 0
