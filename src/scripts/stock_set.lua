-- Start a sale: the stock holds ARGV[1] units (for ARGV[2] ms; 0: no
-- expiry), and the buyers and takes of an earlier sale are forgotten.
-- KEYS[1] stock; KEYS[2] buyers hash; KEYS[3] takes hash.
redis.call('DEL', KEYS[2], KEYS[3])
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
