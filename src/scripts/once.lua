-- Work that runs once per slot (src/once.rs): the first caller of a
-- (name, slot) claims it, every other caller is told who did.
-- KEYS[1] runs hash: slot -> '<claimed at> <done at or -> <runs> <token>'
-- (ms of the server's clock; runs: how many callers claimed it, more than
-- one when a run that did not finish was taken over); KEYS[2] slots zset:
-- slot -> when it was claimed, to forget the oldest.
-- ARGV[1] 'claim' | 'done' | 'read'; ARGV[2] the slot ('': from the
-- server's clock, the start of the current period of ARGV[3] ms, in Unix
-- seconds); ARGV[4] the caller's token; ARGV[5] ms after which a run that
-- did not finish may be claimed again (0: never); ARGV[6] ms a slot's
-- record is kept.
-- Returns {1: claimed, or done() by its runner; 0: not; -1: no record,
-- the slot, claimed at, done at (-1: not done), runs, runner's token}.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot = ARGV[2]
if slot == '' then
  local every = tonumber(ARGV[3])
  slot = string.format('%.0f', math.floor(now / every) * every / 1000)
end
local runs, slots = KEYS[1], KEYS[2]

local raw = need_call('hash', 'HGET', runs, slot)
local at, done, count, token
if raw then
  at, done, count, token = string.match(raw, '^(%d+) ([%d-]+) (%d+) (%S+)$')
  if not at then
    need_fail(runs, 'holds "' .. string.gsub(string.sub(raw, 1, 40), '%c', '?')
      .. '" for a slot, where redislock keeps a run')
  end
  at, done, count = tonumber(at), tonumber(done) or -1, tonumber(count)
end
local function record(won)
  if not raw then return {-1, slot, -1, -1, 0, ''} end
  return {won, slot, at, done, count, token}
end

if ARGV[1] == 'read' then return record(0) end
if ARGV[1] == 'done' then
  if not raw or token ~= ARGV[4] or done >= 0 then return record(0) end
  done = now
  redis.call('HSET', runs, slot, string.format('%.0f %.0f %d %s', at, done, count, token))
  return record(1)
end

local retry = tonumber(ARGV[5])
if raw and (done >= 0 or retry <= 0 or now - at < retry) then return record(0) end
need_type(slots, 'zset')
local keep = tonumber(ARGV[6])
-- The oldest records past their keeping go, a few per claim.
local old = redis.call('ZRANGEBYSCORE', slots, '-inf', string.format('%.0f', now - keep), 'LIMIT', 0, 20)
if #old > 0 then
  redis.call('HDEL', runs, unpack(old))
  redis.call('ZREM', slots, unpack(old))
end
raw, at, done, count, token = true, now, -1, (count or 0) + 1, ARGV[4]
redis.call('HSET', runs, slot, string.format('%.0f - %d %s', at, count, token))
redis.call('ZADD', slots, string.format('%.0f', at), slot)
redis.call('PEXPIRE', runs, keep)
redis.call('PEXPIRE', slots, keep)
return record(1)
