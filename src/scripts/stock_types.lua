-- flags: allow-oom no-writes
-- Run after a stock's script failed with a command's own WRONGTYPE error,
-- which names no key, with the same keys: the stock, its buyers and its
-- takes, then for a take with its order the orders queue's keys
-- (stock_order.lua). Fails naming the first of them that holds another
-- type than redislock keeps there (need.lua), or returns 0 when none does.
local STOCK_TYPES = {'string', 'hash', 'hash', 'zset', 'hash', 'hash', 'zset', 'list', 'hash'}
for i = 1, #KEYS do need_type(KEYS[i], STOCK_TYPES[i]) end
return 0
