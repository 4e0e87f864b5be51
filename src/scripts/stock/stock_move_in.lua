-- include: stock.lua
-- The second step of moving units between shards of a sharded stock
-- (stock_move_out.lua): adds each move's units to this shard once, then
-- takes, as stock_take.lua does, when ARGV[5] is '1'.
-- KEYS[1..3] as stock_take.lua's (this shard's); KEYS[4] the moves this
-- shard received (sorted set: '<move id>:<source shard>' -> ms), each
-- kept ARGV[6] ms, so that a move finished twice adds once.
-- ARGV[1..4] as stock_take.lua's; ARGV[5] '1' to take, '0' only to add;
-- ARGV[6] ms to keep a received move; ARGV[7], ARGV[8], ...: a received
-- move and its units, in pairs.
-- Returns what stock_take.lua returns, or (ARGV[5] '0') the units left.
local units, received = KEYS[1], KEYS[4]
need_type(received, 'zset')
local raw = redis.call('GET', units)
if raw then need_units(units, raw) end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', received, '-inf', now - tonumber(ARGV[6]))
for i = 7, #ARGV, 2 do
  if not redis.call('ZSCORE', received, ARGV[i]) then
    redis.call('ZADD', received, now, ARGV[i])
    -- A stock deleted or expired meanwhile stays gone: its units with it.
    if raw then redis.call('INCRBY', units, ARGV[i + 1]) end
  end
end
if raw then stock_expire_with(units, received) end
if ARGV[5] == '1' then return stock_take() end
return tonumber(redis.call('GET', units) or 0)
