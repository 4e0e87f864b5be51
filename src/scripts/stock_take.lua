-- include: queue_line.lua queue_count.lua queue_add.lua
-- Take units of a stock, on the server in one step: never below zero,
-- never past a buyer's limit, never twice for one idempotency key, and,
-- with an order queue, the order task enqueued in the same step (the units
-- are taken if and only if the task exists).
-- KEYS[1] stock (units left); KEYS[2] buyers hash (buyer -> units taken);
-- KEYS[3] takes hash (idempotency key -> units left after that take);
-- with an order queue also KEYS[4] queue zset, KEYS[5] payloads hash,
-- KEYS[6] attempts hash, KEYS[7] leased zset, KEYS[8] consumer line,
-- KEYS[9] stats hash.
-- ARGV[1] units; ARGV[2] buyer ('': none); ARGV[3] units per buyer at most
-- (0: no limit); ARGV[4] idempotency key ('': none); with an order queue
-- also ARGV[5] task id, ARGV[6] '1' when ARGV[7] is its payload, ARGV[8]
-- consumer key prefix, ARGV[9] how long a wake-up waits, in ms.
-- Returns {'taken', left} ({'taken, register', left} when the caller is to
-- register the order queue: queue_count_enqueued); {'before', left} taken
-- before under this key; {'sold out', left} not enough left; {'limit',
-- units the buyer has} over the buyer's limit; {'task exists', 0} the order
-- task id is already queued or leased.
local stock, buyers, takes = KEYS[1], KEYS[2], KEYS[3]
local n, buyer, limit, key = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4]

if key ~= '' then
  local before = redis.call('HGET', takes, key)
  if before then return {'before', tonumber(before)} end
  need_read(takes)
end
local left = redis.call('GET', stock)
if not left then return {'sold out', 0} end
left = need_units(stock, left)
if left < n then return {'sold out', left} end
if buyer ~= '' and limit > 0 then
  local had = tonumber(redis.call('HGET', buyers, buyer)) or 0
  if had + n > limit then return {'limit', had} end
  need_read(buyers)
end
local done = 'taken'
if KEYS[4] then
  local task = ARGV[5]
  if redis.call('ZSCORE', KEYS[4], task) or redis.call('ZSCORE', KEYS[7], task) then
    return {'task exists', 0}
  end
  for i, t in pairs({[5] = 'hash', [6] = 'hash', [8] = 'list', [9] = 'hash'}) do
    need_type(KEYS[i], t)
  end
end
if buyer ~= '' then need_type(buyers, 'hash') end
if key ~= '' then need_type(takes, 'hash') end
if KEYS[4] then
  local now = queue_now()
  -- Neither queued nor leased (checked above): a new task.
  queue_add_to(KEYS[4], KEYS[5], KEYS[6], ARGV[5], string.format('%.17g', now),
    ARGV[6] == '1' and ARGV[7])
  queue_wake(KEYS[8], ARGV[8], 1, false, ARGV[9])
  if queue_count_enqueued(KEYS[9], now, 1) then done = 'taken, register' end
end
left = redis.call('DECRBY', stock, n)

-- The records beside the stock expire with it: a hash that a new field
-- may just have created takes the stock's expiry.
local function expireWithStock(k)
  local ttl = redis.call('PTTL', stock)
  if ttl > 0 and redis.call('PTTL', k) == -1 then redis.call('PEXPIRE', k, ttl) end
end
if buyer ~= '' and redis.call('HINCRBY', buyers, buyer, n) == n then
  expireWithStock(buyers)
end
if key ~= '' then
  redis.call('HSET', takes, key, left)
  expireWithStock(takes)
end
return {done, left}
