-- include: queue_task.lua
-- flags: allow-oom
-- Finish leased tasks (queue_ack in queue_task.lua).
-- KEYS: see queue_task.lua.
-- ARGV[1] consumer key prefix; ARGV[2] how long a wake-up waits for its
-- consumer, in ms; ARGV[3] the acking process's id; ARGV[4], ARGV[5] and
-- ARGV[6] the name, partition and partition count of a queue of parents
-- whose hashes are KEYS[21] and KEYS[22] ('': none; queue_parents);
-- ARGV[7] how many results follow (k); ARGV[8 .. 7 + 2k] id, result, ... (a
-- child's result, kept for its parent: queue_flow_end); then id, lease
-- token, id, lease token, ...
-- Returns how many were finished (queue_relayed: children that ended are
-- told with it).
queue_parents(ARGV[4], ARGV[5], ARGV[6])
local k = tonumber(ARGV[7])
local results = nil
if k > 0 then
  results = {}
  for i = 8, 7 + 2 * k, 2 do results[ARGV[i]] = ARGV[i + 1] end
end
local n = 0
for _ in pairs(queue_ack(8 + 2 * k, nil, ARGV[1], ARGV[2], ARGV[3], nil, results)) do n = n + 1 end
return queue_relayed(n)
