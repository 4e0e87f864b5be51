-- include: queue_task.lua
-- flags: allow-oom
-- Remove up to ARGV[1] of the tasks waiting in the queue (queue_drop in
-- queue_task.lua): the queued ones first, then the reruns of leased ones,
-- scanned from the HSCAN cursor ARGV[2]. Leased tasks stay with their
-- workers.
-- KEYS: see queue_task.lua (with the keys of workflows, a child removed
-- ends for its parent: queue_drop). ARGV[3] the consumer key prefix (its groups'
-- counts: queue_group_count.lua).
-- Returns {how many were removed, the cursor to go on from ('': done)}.
queue_need(1, 2, 3, 6, 10, 11, 13)
queue_groups(ARGV[3])
queue_linked()
local most = tonumber(ARGV[1])
local removed = 0
local ids = redis.call('ZRANGE', KEYS[1], 0, most - 1)
for _, id in ipairs(ids) do
  removed = removed + queue_drop(id)
end
if #ids == most then return queue_relayed({removed, ARGV[2]}) end
local scan = redis.call('HSCAN', KEYS[6], ARGV[2], 'COUNT', most - #ids)
for i = 1, #scan[2], 2 do
  removed = removed + redis.call('HDEL', KEYS[6], scan[2][i])
end
if scan[1] == '0' then return queue_relayed({removed, ''}) end
return queue_relayed({removed, scan[1]})
