-- include: lock_line.lua
-- Take several locks at once, or none: each must be free with nobody in
-- its line (arrivals never overtake waiters).
-- KEYS: per lock, its key, fencing counter and waiter line (3 keys each).
-- ARGV[1] lease in ms; ARGV[2] how long the fencing counters outlive the
-- lease in ms ('': no fencing tokens); ARGV[3..] one owner token per lock.
-- Returns {1, fencing token per lock} when all were taken, else {0}.
-- Every key is checked before the first write: a key of another type
-- fails the call naming it (need.lua), with nothing taken, where a lock of
-- another type would otherwise be 'not taken' for ever.
local lease, keep = ARGV[1], ARGV[2]
local n = #KEYS / 3
for i = 0, n - 1 do
  if keep ~= '' then need_type(KEYS[i * 3 + 2], 'string') end
  if need_exists(KEYS[i * 3 + 1], 'string') or need_call('list', 'LLEN', KEYS[i * 3 + 3]) > 0 then
    return {0}
  end
end
local out = {1}
for i = 0, n - 1 do
  redis.call('SET', KEYS[i * 3 + 1], ARGV[3 + i], 'PX', lease)
  out[#out + 1] = lock_fence(KEYS[i * 3 + 2], keep, lease, false)
end
return out
