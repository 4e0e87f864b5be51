-- A queue's counts at one instant of server time.
-- KEYS[1] queue zset; KEYS[2] leased zset; KEYS[3] dead zset.
-- Returns {ready (due), delayed, leased, dead, age of the oldest due task in
-- ms (-1: none due)}.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local nowText = string.format('%.17g', now)
local queued = redis.call('ZCARD', KEYS[1])
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', nowText)
local age = -1
if ready > 0 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  age = math.floor((now - tonumber(first[2])) * 1000)
end
return {ready, queued - ready, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), age}
