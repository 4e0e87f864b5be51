-- include: queue_task.lua
-- Finish leased tasks, each only if the caller's lease is still the task's:
-- a worker whose lease ran out and was handed to another cannot ack. A
-- rerun enqueued while a task ran is queued now (queue_settle).
-- KEYS: see queue_task.lua, and KEYS[13] the tasks each worker acked
-- (queue_workers.lua).
-- ARGV[1] consumer key prefix; ARGV[2] how long a wake-up waits for its
-- consumer, in ms; ARGV[3] the acking process's id; ARGV[4..] id, lease
-- token, id, lease token, ...
-- Returns how many were finished.
local mine, seen = {}, {}
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  if not seen[id] and redis.call('HGET', KEYS[5], id) == ARGV[i + 1] then
    seen[id] = true
    mine[#mine + 1] = id
  end
end
if #mine == 0 then return 0 end
queue_need(1, 2, 3, 4, 6, 9, 10, 11, 13)
local now = queue_now()
for _, id in ipairs(mine) do
  local due = queue_settle(id, 'done')
  if due then queue_wake_for(due, now, ARGV[1], ARGV[2]) end
end
queue_count(KEYS[10], now, 'acked', #mine)
redis.call('HINCRBY', KEYS[13], ARGV[3], #mine)
return #mine
