-- include: stock.lua queue_line.lua queue_count.lua queue_add.lua queue_group_count.lua
-- Take units of a stock and enqueue the order task in the same step: the
-- units are taken if and only if the task exists.
-- KEYS[1..3] and ARGV[1..4] as stock.lua's; KEYS[4] queue zset, KEYS[5]
-- payloads hash, KEYS[6] attempts hash, KEYS[7] leased zset, KEYS[8]
-- consumer line, KEYS[9] stats hash; ARGV[5] task id, ARGV[6] '1' when
-- ARGV[7] is its payload, ARGV[8] consumer key prefix, ARGV[9] how long a
-- wake-up waits, in ms.
-- Returns what stock.lua returns, with {'taken, register', left} when the
-- caller is to register the order queue (queue_count_enqueued), and {'task
-- exists', 0} when the order task id is already queued or leased.
local task = ARGV[5]
-- What the check reads for the write: whether the id has a payload or
-- attempts left by an earlier task, and how many consumers wait.
local hadPayload, hadAttempts, waiting

-- Refuses a task id already queued or leased. The reads that follow check
-- their keys' types too (need_call); the stats hash's check is the count,
-- the take's first write (order_write).
local function order_check()
  if redis.call('ZSCORE', KEYS[4], task) or redis.call('ZSCORE', KEYS[7], task) then
    return {'task exists', 0}
  end
  hadPayload = need_call('hash', 'HEXISTS', KEYS[5], task) == 1
  hadAttempts = need_call('hash', 'HEXISTS', KEYS[6], task) == 1
  waiting = need_call('list', 'LLEN', KEYS[8])
end

-- Enqueues the task, due now, and wakes a consumer if one waits.
local function order_write()
  local now = queue_now()
  -- The count first: the take's first write, it checks the stats hash.
  local register = queue_count_enqueued(KEYS[9], now, 1)
  -- Neither queued nor leased (checked above): a new task.
  queue_add_to(KEYS[4], KEYS[5], KEYS[6], task, string.format('%.17g', now),
    ARGV[6] == '1' and ARGV[7], hadPayload, hadAttempts)
  -- In a grouped queue, a task of the group '' (queue_group_count.lua;
  -- its hint and turn named from the consumer key prefix, as there).
  local p = ARGV[8]
  if redis.call('EXISTS', p .. 'group-count') == 1 then
    redis.pcall('RPUSH', p .. 'group:', task)
    redis.pcall('ZADD', p .. 'groups', 'NX', '0', '')
    group_count(p, p .. 'groups', KEYS[9], '', 1)
  end
  if waiting > 0 then queue_wake(KEYS[8], ARGV[8], 1, false, ARGV[9]) end
  if register then return 'taken, register' end
  return 'taken'
end

return stock_take(order_check, order_write)
