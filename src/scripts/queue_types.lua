-- include: queue_task.lua
-- flags: allow-oom no-writes
-- Run after a script that moves tasks failed with a command's own WRONGTYPE
-- error, which names no key, with the same keys: fails naming the first of
-- them that holds another type than the queue keeps there (need.lua), or
-- returns 0 when none does.
for i = 1, #KEYS do
  if QUEUE_TYPES[i] then need_type(KEYS[i], QUEUE_TYPES[i]) end
end
return 0
