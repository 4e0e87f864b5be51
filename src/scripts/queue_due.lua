-- List up to ARGV[1] tasks due by server time, lowest score first, skipping
-- the first ARGV[3], and remove them when ARGV[2] is '1' (pop) rather than
-- '0' (top).
-- KEYS[1] queue zset. Returns a flat list: id, score, id, score, ...
local t = redis.call('TIME')
local now = string.format('%.17g', tonumber(t[1]) + tonumber(t[2]) / 1000000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', ARGV[3], ARGV[1])
-- The due tasks are the lowest ranks, so one range removal takes them all.
if ARGV[2] == '1' and #due > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due / 2 - 1)
end
return due
