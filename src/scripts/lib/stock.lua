-- Taking units of a stock, on the server in one step: never below zero,
-- never past a buyer's limit, never twice for one idempotency key.
-- stock_take.lua takes; stock_order.lua also enqueues the order task in the
-- same step (the units are taken if and only if the task exists). Each
-- script defines only the helpers it runs: a plain take does not pay for
-- the queue's.
-- KEYS[1] stock (units left); KEYS[2] buyers hash (buyer -> units taken);
-- KEYS[3] takes hash (idempotency key -> units left after that take).
-- ARGV[1] units; ARGV[2] buyer ('': none); ARGV[3] units per buyer at most
-- (0: no limit); ARGV[4] idempotency key ('': none).
-- Returns left, a number, when it took (a reply the server builds faster
-- than a table); {'before', left} taken before under this key;
-- {'sold out', left} not enough left; {'limit', units the buyer has} over
-- the buyer's limit; or what the order's check refuses with.

-- The records beside the stock expire with it: a hash that a new field may
-- just have created (k) takes the stock's expiry.
local function stock_expire_with(stock, k)
  local ttl = redis.call('PTTL', stock)
  if ttl > 0 and redis.call('PTTL', k) == -1 then redis.call('PEXPIRE', k, ttl) end
end

-- Takes the units. With an order (stock_order.lua), check() runs after the
-- stock's checks and before any write (a refusal is returned as it is), and
-- write() before the decrement, returning what the take replies in place
-- of 'taken' (then {that, left}). The units go to the commands as the
-- caller's text: a Lua number would be formatted again.
local function stock_take(check, write)
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
  if buyer ~= '' then
    -- Read with or without a limit: the HINCRBY below must not fail after
    -- the decrement (a record holding text fails here, naming the hash).
    local had = redis.call('HGET', buyers, buyer)
    had = had and need_units(buyers, had) or 0
    if limit > 0 and had + n > limit then return {'limit', had} end
    need_read(buyers)
  end
  if check then
    local refused = check()
    if refused then return refused end
  end
  if buyer ~= '' then need_type(buyers, 'hash') end
  if key ~= '' then need_type(takes, 'hash') end
  local done = write and write() or 'taken'
  left = redis.call('DECRBY', stock, ARGV[1])
  if buyer ~= '' and redis.call('HINCRBY', buyers, buyer, ARGV[1]) == n then
    stock_expire_with(stock, buyers)
  end
  if key ~= '' then
    redis.call('HSET', takes, key, left)
    stock_expire_with(stock, takes)
  end
  if done == 'taken' then return left end
  return {done, left}
end
