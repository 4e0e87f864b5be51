-- flags: allow-oom
-- A leader's record beside its lock (src/lock/leader.rs): which term leads
-- and since when. KEYS[1] the lock (its value: the leader's owner token);
-- KEYS[2] the term hash ('term', 'since': ms of the server's clock).
-- ARGV[1] 'won' (ARGV[2] the term just won: recorded with the time now,
-- unless a later term is) | 'read'.
-- Returns {owner token or false, lease left in ms (-1: none), term or -1,
-- since in ms or -1}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lock, record = KEYS[1], KEYS[2]
local fields = need_call('hash', 'HMGET', record, 'term', 'since')
local term, since = tonumber(fields[1]), tonumber(fields[2])
if ARGV[1] == 'won' then
  local won = tonumber(ARGV[2])
  if not term or won > term then
    term, since = won, now
    redis.call('HSET', record, 'term', ARGV[2], 'since', string.format('%.0f', now))
  end
  redis.call('PEXPIRE', record, 86400000)
end
local owner = need_call('string', 'GET', lock)
local left = owner and redis.call('PTTL', lock) or -1
return {owner or false, left, term or -1, since or -1}
