-- flags: allow-oom no-writes
-- Run after a script (or a plain command) failed with a command's own
-- WRONGTYPE error, which names no key, with the same keys and, as ARGV[i],
-- the type redislock keeps in KEYS[i] (Invocation::types_checked). Fails
-- naming the first key that holds another type (need.lua), or returns 0
-- when none does.
for i = 1, #KEYS do need_type(KEYS[i], ARGV[i]) end
return 0
