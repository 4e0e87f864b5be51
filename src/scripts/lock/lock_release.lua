-- include: lock_line.lua
-- flags: allow-oom
-- Release a lock if it still holds the caller's token (or whoever holds it,
-- when forced): hand it straight to the next waiter in line, or delete it
-- when nobody waits.
-- KEYS[1] lock; KEYS[2] fencing counter; KEYS[3] waiter line.
-- ARGV[1] owner token; ARGV[2] how long the fencing counter outlives the
-- lease in ms ('': no fencing tokens); ARGV[3] waiter key prefix; ARGV[4]
-- how long a place in line is kept, in ms; ARGV[5] 'force' to release it
-- whatever token it holds (absent: only the caller's).
-- Returns 1 if released, else 0.
local holder = redis.call('GET', KEYS[1])
if not holder or (ARGV[5] ~= 'force' and holder ~= ARGV[1]) then return 0 end
if not lock_grant(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4]) then
  redis.call('DEL', KEYS[1])
end
return 1
