-- flags: allow-oom no-writes
-- Run after a lock's script (or the plain first try) failed with a
-- command's own WRONGTYPE error, which names no key, with the same keys:
-- a lock, its fencing counter (an order lock's id counter) and its line,
-- again for each further lock (lock_many.lua). Fails naming the first of
-- them that holds another type than redislock keeps there (need.lua), or
-- returns 0 when none does.
local LOCK_TYPES = {'string', 'string', 'list'}
for i = 1, #KEYS do need_type(KEYS[i], LOCK_TYPES[(i - 1) % 3 + 1]) end
return 0
