-- A slot of work that runs once (src/once.rs), beyond the claim of a slot
-- nobody has, which is one SET NX PX: taking over a run that did not
-- finish, saying it is done, and reading the record.
-- KEYS[1] the slot's key: '<keep ms> <runs> <done at ms or -> <token>'
-- (runs: how many callers claimed it, more than one when a run that did
-- not finish was taken over), expiring keep ms after its last claim, so
-- its claim time is the server's clock less what it has lived.
-- ARGV[1] 'claim' | 'done' | 'release' | 'read'; ARGV[2] the caller's token; ARGV[3]
-- ms after which a run that did not finish may be claimed again (0:
-- never); ARGV[4] ms the record is kept.
-- Returns {1: claimed, done() or released by its runner; 0: not; -1: no record,
-- claimed at, done at (-1: not done), runs, runner's token}.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = KEYS[1]
local raw = need_call('string', 'GET', key)
local keep, count, done, token, at
if raw then
  keep, count, done, token = string.match(raw, '^(%d+) (%d+) ([%d-]+) (%S+)$')
  if not keep then
    need_fail(key, 'holds "' .. string.gsub(string.sub(raw, 1, 40), '%c', '?')
      .. '", where redislock keeps a run')
  end
  keep, count, done = tonumber(keep), tonumber(count), tonumber(done) or -1
  local left = redis.call('PTTL', key)
  at = left >= 0 and now - (keep - left) or now
end
local function record(won)
  if not raw then return {-1, -1, -1, 0, ''} end
  return {won, at, done, count, token}
end

if ARGV[1] == 'read' then return record(0) end
if ARGV[1] == 'done' then
  if not raw or token ~= ARGV[2] or done >= 0 then return record(0) end
  done = now
  redis.call('SET', key, string.format('%.0f %d %.0f %s', keep, count, done, token), 'KEEPTTL')
  return record(1)
end

if ARGV[1] == 'release' then
  if not raw or token ~= ARGV[2] or done >= 0 then return record(0) end
  redis.call('DEL', key)
  return record(1)
end

local retry = tonumber(ARGV[3])
if raw and (done >= 0 or retry <= 0 or now - at < retry) then return record(0) end
raw, keep, at, done, count, token = true, tonumber(ARGV[4]), now, -1, (count or 0) + 1, ARGV[2]
redis.call('SET', key, string.format('%.0f %d - %s', keep, count, token), 'PX', ARGV[4])
return record(1)
