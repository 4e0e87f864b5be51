-- include: permits_line.lua
-- flags: allow-oom
-- Give permits back if their lease still runs, and hand them to the
-- waiters at the head of the line that fit.
-- KEYS as permits_acquire.lua. ARGV[1] owner token; ARGV[2] how long the
-- fencing counter outlives the lease in ms ('': none); ARGV[3] waiter key
-- prefix; ARGV[4] how long a place in line is kept, in ms; ARGV[5] 'force'
-- to release every holder's permits (an operator's forced release).
-- Returns 1 if released, 0 if the token (or, forced, anybody) held nothing
-- (any more).
-- (permits_used reads and checks first; its holders are then all live.)
local now = permits_now()
local used = permits_used(KEYS[1], KEYS[2], KEYS[4], now, KEYS[3], ARGV[2])
if permits_old_lock(KEYS[1]) then
  if ARGV[5] ~= 'force' then return 0 end
  redis.call('DEL', KEYS[1])
  used = 0
elseif ARGV[5] == 'force' then
  local holders = redis.call('ZRANGE', KEYS[1], 0, -1)
  if #holders == 0 then return 0 end
  for _, h in ipairs(holders) do permits_drop(KEYS[1], KEYS[2], h) end
  used = 0
else
  if not permits_ends(KEYS[1], ARGV[1]) then return 0 end
  used = used - (permits_count(KEYS[1], KEYS[2], ARGV[1]) or 0)
  permits_drop(KEYS[1], KEYS[2], ARGV[1])
end
permits_grant(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[3], tonumber(ARGV[4]), used, now)
return 1
