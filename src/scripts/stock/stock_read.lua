-- flags: allow-oom no-writes
-- A stock's reads, each count checked as the stock's scripts check it: a
-- key written by hand fails naming it (need.lua), never as a reply the
-- extension cannot read.
-- KEYS[1] stock; KEYS[2] buyers hash. ARGV[1] 'left': the units left
-- (false: no stock); 'bought': the units buyer ARGV[2] took (0: none);
-- 'buyers': every buyer and its units, flat.
if ARGV[1] == 'left' then
  local left = need_call('string', 'GET', KEYS[1])
  return left and need_units(KEYS[1], left)
end
if ARGV[1] == 'bought' then
  local units = need_call('hash', 'HGET', KEYS[2], ARGV[2])
  return units and need_units(KEYS[2], units) or 0
end
local all = need_call('hash', 'HGETALL', KEYS[2])
for i = 2, #all, 2 do all[i] = need_units(KEYS[2], all[i]) end
return all
