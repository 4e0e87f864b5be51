-- The rate-limit policies of limit.lua, defined once where the scripts
-- run as Redis functions (a function defined in a script's body is made
-- anew by each call). A call sets now (microseconds of the server's
-- clock) and cost (the decision's cost) before it decides.
local now, cost

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

-- The token bucket's decision: allowed, remaining, retry, reset, and the
-- theoretical arrival time a decision that consumes stores (bucket_write).
local function bucket_decide(key, limit, per, burst)
  local step = per / limit
  local raw = need_call('string', 'GET', key)
  local tat = raw and stored(key, raw) or now
  if tat < now then tat = now end
  local after = tat + cost * step
  local at = after - burst * step
  if at > now then
    return false, (burst * step - (tat - now)) / step, at - now, tat - now, after
  end
  return true, (burst * step - (after - now)) / step, 0, after - now, after
end

local function bucket_write(key, after)
  redis.call('SET', key, string.format('%.17g', after), 'PX', ms(after - now))
end

local function bucket(key, limit, per, burst)
  local ok, remaining, retry, reset, after = bucket_decide(key, limit, per, burst)
  return {ok = ok, remaining = remaining, retry = retry, reset = reset,
    write = ok and function() bucket_write(key, after) end or nil}
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
