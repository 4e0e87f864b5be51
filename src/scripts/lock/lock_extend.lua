-- flags: allow-oom
-- Set a new lease only if the lock still holds the caller's token.
-- KEYS[1] lock key; ARGV[1] owner token; ARGV[2] lease in ms ('0': no
-- expiry; below 0: none, the key is deleted at once, as Redis' PEXPIRE
-- does). Returns 1 or 0.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then
  redis.call('PERSIST', KEYS[1])
  return 1
end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
