-- Start a sale: the stock holds ARGV[1] units (for ARGV[2] ms; 0: no
-- expiry), and the buyers and takes of an earlier sale are forgotten.
-- KEYS[1] stock; KEYS[2] buyers hash; KEYS[3] takes hash; a shard's KEYS[4]
-- journal and KEYS[5] moves received (stock_move_out.lua, stock_move_in.lua).
redis.call('DEL', unpack(KEYS, 2))
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
