-- Add task ids due at server time + delay; an id already queued keeps its
-- score (the seed's behaviour).
-- KEYS[1] queue zset; ARGV[1] delay in seconds; ARGV[2..] task ids.
-- Returns how many ids were added.
local t = redis.call('TIME')
local due = string.format('%.17g', tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1]))
local added = 0
for i = 2, #ARGV do
  added = added + redis.call('ZADD', KEYS[1], 'NX', due, ARGV[i])
end
return added
