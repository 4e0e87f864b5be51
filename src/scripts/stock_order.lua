-- include: stock.lua queue_line.lua queue_count.lua queue_add.lua
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

-- Refuses a task id already queued or leased; checks the keys it writes.
local function order_check()
  if redis.call('ZSCORE', KEYS[4], task) or redis.call('ZSCORE', KEYS[7], task) then
    return {'task exists', 0}
  end
  for i, t in pairs({[5] = 'hash', [6] = 'hash', [8] = 'list', [9] = 'hash'}) do
    need_type(KEYS[i], t)
  end
end

-- Enqueues the task, due now, and wakes a consumer.
local function order_write()
  local now = queue_now()
  -- Neither queued nor leased (checked above): a new task.
  queue_add_to(KEYS[4], KEYS[5], KEYS[6], task, string.format('%.17g', now),
    ARGV[6] == '1' and ARGV[7])
  queue_wake(KEYS[8], ARGV[8], 1, false, ARGV[9])
  if queue_count_enqueued(KEYS[9], now, 1) then return 'taken, register' end
  return 'taken'
end

return stock_take(order_check, order_write)
