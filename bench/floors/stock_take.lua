-- The least Stock::take with a per-buyer limit that keeps its promise:
-- never oversold, a buyer never past the limit, in one step.
-- Leaves out: idempotency keys, the order task, a stock of a whole number
-- checked before the write (text written by hand), the sold-out reason.
-- KEYS[1] units; KEYS[2] per-buyer hash; ARGV[1] units; ARGV[2] buyer;
-- ARGV[3] per-buyer limit. Returns the units left, or -1 when refused.
local want = tonumber(ARGV[1])
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
if left < want then return -1 end
local bought = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
if bought + want > tonumber(ARGV[3]) then return -1 end
redis.call('HINCRBY', KEYS[2], ARGV[2], want)
return redis.call('DECRBY', KEYS[1], want)
