-- Rate limits, decided on the server's clock in one step (src/limit.rs):
-- one limit, or several all or none (nothing is consumed unless every one
-- of them allows).
-- Per limit i, KEYS[2i-1] is its state and KEYS[2i] its second key:
--   token bucket (GCRA): a string, the bucket's theoretical arrival time
--     in microseconds of the server's clock, expiring when the bucket is
--     full again (KEYS[2i] is not used);
--   fixed window: a string, the window's count, expiring with the window
--     (KEYS[2i] is not used);
--   sliding window: a sorted set of the admissions in the window (score:
--     their time in microseconds; member '<seq>:<cost>'), and KEYS[2i] a
--     hash: 'n' the cost they admitted, 's' the last seq. Both expire when
--     the window has been empty for its length.
-- ARGV[1] the cost; ARGV[2] '1': consume when every limit allows, '0':
-- only tell (peek: writes nothing). Then per limit four arguments: policy
-- ('t' token bucket, 'f' fixed window, 's' sliding window), limit, period
-- (microseconds), burst (the token bucket's capacity).
-- Returns {refused: the first limit that refuses (0: allowed), remaining,
-- retry after, reset after (microseconds), now (microseconds)}.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cost = tonumber(ARGV[1])
local take = ARGV[2] == '1'

-- The number a state key holds (written by these scripts: '%.17g'),
-- failing naming the key when it holds something else.
local function stored(key, raw)
  local n = tonumber(raw)
  if not n or n ~= n or n == math.huge or n == -math.huge then
    need_fail(key, 'holds "' .. string.gsub(string.sub(raw, 1, 40), '%c', '?')
      .. '", where redislock keeps a number')
  end
  return n
end

local function ms(us)
  return math.max(1, math.ceil(us / 1000))
end

-- Each policy answers {ok, remaining, retry, reset, write}: write (a
-- function) runs when every limit allows, tidy (housekeeping that consumes
-- nothing) when the decision consumes, either way.

local function bucket(key, limit, per, burst)
  local step = per / limit
  local raw = need_call('string', 'GET', key)
  local tat = raw and stored(key, raw) or now
  if tat < now then tat = now end
  local after = tat + cost * step
  local at = after - burst * step
  if at > now then
    return {ok = false, remaining = (burst * step - (tat - now)) / step,
      retry = at - now, reset = tat - now}
  end
  return {ok = true, remaining = (burst * step - (after - now)) / step,
    retry = 0, reset = after - now,
    write = function()
      redis.call('SET', key, string.format('%.17g', after), 'PX', ms(after - now))
    end}
end

local function fixed(key, limit, per)
  local raw = need_call('string', 'GET', key)
  local count = raw and need_units(key, raw) or 0
  local ttl = raw and redis.call('PTTL', key) or -2
  -- A count without an expiry (written by hand) gets the window's.
  local tidy = ttl == -1 and function() redis.call('PEXPIRE', key, ms(per)) end or nil
  -- PTTL counts whole milliseconds, down: the count is gone 1 ms later
  -- at the latest.
  local reset = ttl >= 0 and (ttl + 1) * 1000 or per
  if count + cost > limit then
    return {ok = false, remaining = limit - count, retry = reset, reset = reset, tidy = tidy}
  end
  return {ok = true, remaining = limit - count - cost, retry = 0, reset = reset, tidy = tidy,
    write = function()
      if raw then
        redis.call('INCRBY', key, cost)
      else
        redis.call('SET', key, cost, 'PX', ms(per))
      end
    end}
end

local function member_cost(member)
  return tonumber(string.match(member, ':(%d+)$')) or 1
end

local function sliding(key, counts, limit, per)
  -- An admission at s counts while s > now - per.
  local edge = string.format('%.17g', now - per)
  local gone = need_call('zset', 'ZRANGEBYSCORE', key, '-inf', edge)
  local freed = 0
  for _, m in ipairs(gone) do freed = freed + member_cost(m) end
  local n = need_call('hash', 'HGET', counts, 'n')
  local total = math.max(0, (n and need_units(counts, n) or 0) - freed)
  local tidy = #gone > 0 and function()
    redis.call('ZREMRANGEBYSCORE', key, '-inf', edge)
    redis.call('HSET', counts, 'n', total)
  end or nil
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local reset = 0
  if newest[2] and tonumber(newest[2]) > now - per then
    reset = tonumber(newest[2]) + per - now
  end
  if total + cost > limit then
    -- The oldest admissions still in the window, until enough of the cost
    -- has left it (each member costs at least 1: no more than this many).
    local short = total + cost - limit
    local live = redis.call('ZRANGE', key, #gone, #gone + short - 1, 'WITHSCORES')
    local retry, left = per, 0
    for i = 1, #live, 2 do
      left = left + member_cost(live[i])
      if left >= short then
        retry = tonumber(live[i + 1]) + per - now
        break
      end
    end
    return {ok = false, remaining = limit - total, retry = retry, reset = reset, tidy = tidy}
  end
  return {ok = true, remaining = limit - total - cost, retry = 0, reset = per, tidy = tidy,
    write = function()
      local seq = redis.call('HINCRBY', counts, 's', 1)
      redis.call('ZADD', key, string.format('%.17g', now), seq .. ':' .. cost)
      redis.call('HSET', counts, 'n', total + cost)
      redis.call('PEXPIRE', key, ms(per))
      redis.call('PEXPIRE', counts, ms(per))
    end}
end

local decided = {}
local refused, retry, reset = 0, 0, 0
for i = 1, #KEYS / 2 do
  local a = 2 + (i - 1) * 4
  local policy, limit, per = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local d
  if policy == 't' then
    d = bucket(KEYS[2 * i - 1], limit, per, tonumber(ARGV[a + 4]))
  elseif policy == 'f' then
    d = fixed(KEYS[2 * i - 1], limit, per)
  else
    d = sliding(KEYS[2 * i - 1], KEYS[2 * i], limit, per)
  end
  decided[i] = d
  if not d.ok and refused == 0 then refused = i end
  retry = math.max(retry, d.retry)
  reset = math.max(reset, d.reset)
end
local consumed = take and refused == 0
local remaining = math.huge
for _, d in ipairs(decided) do
  if take then
    if d.tidy then d.tidy() end
    if consumed then d.write() end
  end
  -- What is left now: an allowing limit's remaining counts the cost taken,
  -- which a peek or a refusal did not take.
  remaining = math.min(remaining, (d.ok and not consumed) and d.remaining + cost or d.remaining)
end
-- Tokens come whole: a bucket's fraction of one is not one yet (1e-6:
-- what the arithmetic of whole numbers in doubles can miss).
return {refused, math.max(0, math.floor(remaining + 1e-6)), math.ceil(retry),
  math.ceil(reset), now}
