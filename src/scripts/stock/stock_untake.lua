-- flags: allow-oom
-- Undo a take that fewer replicas acknowledged than asked (Stock::take
-- with replicas): its units go back to the stock, off the buyer's count,
-- and its idempotency key is forgotten, so that a retry takes anew.
-- KEYS[1] stock; KEYS[2] buyers hash; KEYS[3] takes hash.
-- ARGV[1] units; ARGV[2] buyer ('': none); ARGV[3] idempotency key ('':
-- none). Returns the units left (0 when the stock is gone: nothing to
-- give back to).
local n, buyer, key = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local raw = redis.call('GET', KEYS[1])
if raw then need_units(KEYS[1], raw) end
if buyer ~= '' then
  local had = redis.call('HGET', KEYS[2], buyer)
  had = had and need_units(KEYS[2], had) or 0
  if had <= n then
    redis.call('HDEL', KEYS[2], buyer)
  else
    redis.call('HINCRBY', KEYS[2], buyer, -n)
  end
end
if key ~= '' then redis.call('HDEL', KEYS[3], key) end
if not raw then return 0 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
