-- include: lock_line.lua
-- Take several locks at once, or none: each must be free with nobody in
-- its line (arrivals never overtake waiters).
-- KEYS: per lock, its key, fencing counter and waiter line (3 keys each).
-- ARGV[1] lease in ms; ARGV[2] how long the fencing counters outlive the
-- lease in ms ('': no fencing tokens); ARGV[3..] one owner token per lock.
-- Returns {1, fencing token per lock} when all were taken, else {0}.
local lease, keep = ARGV[1], ARGV[2]
local n = #KEYS / 3
for i = 0, n - 1 do
  if redis.call('EXISTS', KEYS[i * 3 + 1]) == 1 or redis.call('LLEN', KEYS[i * 3 + 3]) > 0 then
    return {0}
  end
end
local out = {1}
for i = 0, n - 1 do
  redis.call('SET', KEYS[i * 3 + 1], ARGV[3 + i], 'PX', lease)
  out[#out + 1] = lock_fence(KEYS[i * 3 + 2], keep, lease, false)
end
return out
