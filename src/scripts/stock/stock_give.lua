-- flags: allow-oom
-- Give units back to a stock (an order cancelled, or a restock), taking
-- them off the buyer's count when a buyer gives them back.
-- KEYS[1] stock; KEYS[2] buyers hash. ARGV[1] units; ARGV[2] buyer ('': none);
-- ARGV[3] the most units a stock holds.
-- Returns {'done', units left}; {'no stock', 0} when the stock does not
-- exist (never set, expired, deleted); {'too many', units the buyer has}
-- when the buyer has fewer; {'full', units left} when it would take the
-- stock past the most (then nothing is changed).
local raw = redis.call('GET', KEYS[1])
if not raw then return {'no stock', 0} end
local left = need_units(KEYS[1], raw)
local n, buyer = tonumber(ARGV[1]), ARGV[2]
if buyer ~= '' then need_type(KEYS[2], 'hash') end
if left + n > tonumber(ARGV[3]) then return {'full', left} end
if buyer ~= '' then
  local had = tonumber(redis.call('HGET', KEYS[2], buyer)) or 0
  if had < n then return {'too many', had} end
  if had == n then
    redis.call('HDEL', KEYS[2], buyer)
  else
    redis.call('HSET', KEYS[2], buyer, had - n)
  end
end
return {'done', redis.call('INCRBY', KEYS[1], n)}
