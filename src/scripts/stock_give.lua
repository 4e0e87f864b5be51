-- Give units back to a stock (an order cancelled, or a restock), taking
-- them off the buyer's count when a buyer gives them back.
-- KEYS[1] stock; KEYS[2] buyers hash. ARGV[1] units; ARGV[2] buyer ('': none).
-- Returns {1, units left}; {0, 0} when the stock does not exist (never set,
-- expired, deleted); {-1, units the buyer has} when the buyer has fewer.
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
local n, buyer = tonumber(ARGV[1]), ARGV[2]
if buyer ~= '' then
  local had = tonumber(redis.call('HGET', KEYS[2], buyer)) or 0
  if had < n then return {-1, had} end
  if had == n then
    redis.call('HDEL', KEYS[2], buyer)
  else
    redis.call('HSET', KEYS[2], buyer, had - n)
  end
end
return {1, redis.call('INCRBY', KEYS[1], n)}
