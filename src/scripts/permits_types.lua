-- flags: allow-oom no-writes
-- Run after a script of permits (semaphores, read-write locks) failed with
-- a command's own WRONGTYPE error, which names no key, with the same keys:
-- the holders and their counts, then the fencing counter and the line, or
-- the line alone. Fails naming the first of them that holds another type
-- than redislock keeps there (need.lua), or returns 0 when none does.
local PERMITS_TYPES = {'zset', 'hash', 'string', 'list'}
if #KEYS == 3 then PERMITS_TYPES[3] = 'list' end
for i = 1, #KEYS do need_type(KEYS[i], PERMITS_TYPES[i]) end
return 0
