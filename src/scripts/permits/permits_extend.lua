-- include: permits_line.lua
-- flags: allow-oom
-- Set a new lease on a holder's permits if its lease still runs.
-- KEYS[1] holders zset; KEYS[2] permits per holder. ARGV[1] owner token;
-- ARGV[2] lease in ms. Returns 1 or 0.
local now = permits_now()
local ends = permits_ends(KEYS[1], ARGV[1])
if not ends or ends <= now then return 0 end
permits_renew(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), now)
return 1
