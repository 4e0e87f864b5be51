-- include: queue_task.lua
-- flags: allow-oom
-- Finish leased tasks (queue_ack in queue_task.lua).
-- KEYS: see queue_task.lua, and KEYS[15] the tasks each worker acked
-- (queue_workers.lua).
-- ARGV[1] consumer key prefix; ARGV[2] how long a wake-up waits for its
-- consumer, in ms; ARGV[3] the acking process's id; ARGV[4..] id, lease
-- token, id, lease token, ...
-- Returns how many were finished.
local n = 0
for _ in pairs(queue_ack(4, nil, ARGV[1], ARGV[2], ARGV[3])) do n = n + 1 end
return n
