-- include: queue_count.lua queue_rate.lua queue_group_count.lua
-- flags: allow-oom
-- List up to ARGV[1] tasks due by server time, lowest score first, skipping
-- the first ARGV[3], and remove them when ARGV[2] is '1' (pop) rather than
-- '0' (top).
-- Popped tasks count as acked: the seed's pop is its consumer's only step.
-- A paused or throttled queue (queue_pause.lua) pops nothing, and a queue
-- with a rate (queue_rate.lua) pops what it allows; top still shows its
-- tasks.
-- KEYS[1] queue zset; KEYS[2] stats hash. ARGV[4] the consumer key prefix:
-- popped tasks of a grouped queue come off their groups' counts
-- (queue_group_count.lua; the tags hash and the groups zset are
-- '<prefix>tags' and '<prefix>groups', in the declared keys' slot).
-- Returns a flat list: id, score, id, score, ...
-- (The reads of the pause flag and the queue check their keys' types:
-- need_call.)
local now = queue_now()
local want = ARGV[1]
local rateStep, rateTat, tokens
if ARGV[2] == '1' then
  local held = need_call('hash', 'HMGET', KEYS[2], 'paused', 'throttled', 'rate', 'rateTat')
  if held[1] or (tonumber(held[2]) or 0) > now * 1000 then return {} end
  local rateMs
  rateStep, rateTat, tokens, rateMs = queue_rate(held[3], held[4], now)
  if rateMs then return {} end
  if tokens then want = math.min(tonumber(want), tokens) end
end
local due = need_call('zset', 'ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now), 'WITHSCORES', 'LIMIT', ARGV[3], want)
-- The due tasks are the lowest ranks, so one range removal takes them all.
if ARGV[2] == '1' and #due > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due / 2 - 1)
  if ARGV[4] then
    local ids = {}
    for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
    group_count_taken(ARGV[4], ARGV[4] .. 'groups', KEYS[2], ARGV[4] .. 'tags', ids)
  end
  queue_count(KEYS[2], now, 'acked', #due / 2)
  if rateStep then
    redis.call('HSET', KEYS[2], 'rateTat', string.format('%.17g', rateTat + #due / 2 * rateStep))
  end
end
return due
