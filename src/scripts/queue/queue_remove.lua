-- include: queue_task.lua
-- flags: allow-oom
-- Remove the tasks waiting under the given ids (queue_drop in
-- queue_task.lua): queued ones, and reruns of leased ones. Leased tasks
-- stay with their workers.
-- KEYS: see queue_task.lua (with the keys of workflows, a child removed
-- ends for its parent: queue_drop).
-- ARGV[1] the consumer key prefix (its groups' counts: queue_group_count.lua);
-- ARGV[2..] the ids.
-- Returns how many tasks were removed.
queue_need(1, 2, 3, 6, 10, 11, 13)
queue_groups(ARGV[1])
queue_linked()
local removed = 0
for i = 2, #ARGV do
  removed = removed + queue_drop(ARGV[i])
end
return queue_relayed(removed)
