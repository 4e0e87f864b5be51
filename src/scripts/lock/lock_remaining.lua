-- flags: allow-oom
-- How long the lock's lease still runs, if it still holds the caller's token.
-- KEYS[1] lock key; ARGV[1] owner token.
-- Returns ms left (-1: no expiry), or -2 when the token is not there.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PTTL', KEYS[1])
end
return -2
