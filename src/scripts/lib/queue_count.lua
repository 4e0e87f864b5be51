-- What the queue scripts share for counting (prepended to the scripts that
-- move tasks), in the queue's stats hash: per counter and 10 s period of
-- server time, its count in '<counter>:<period>', and in '<counter>' the
-- counts of the periods that have left the last 60 (10 minutes). A
-- counter's total is the sum of its fields. A count is one HINCRBY; a
-- counter's first count in a period also folds its periods older than the
-- last 60 into its total (one HGETALL of at most a few hundred fields, at
-- most once per 10 s), so the hash stays bounded.
local QUEUE_COUNTERS = {'enqueued', 'acked', 'nacked', 'retried', 'dead', 'expired'}

-- Adds n (a whole number) to the field of stats, and returns the sum. A
-- count comes after the script's writes, so it never fails: a field
-- written by hand that holds no whole number starts again from n (a stats
-- hash of another type is checked before the first write: queue_put's
-- read, queue_need).
local function queue_incr(stats, field, n)
  local text = string.format('%d', n)
  local sum = redis.pcall('HINCRBY', stats, field, text)
  if type(sum) == 'table' then
    need_type(stats, 'hash')
    redis.call('HSET', stats, field, text)
    return n
  end
  return sum
end

-- Folds the counter's periods older than the last 60 before period into
-- its total (at a counter's first count in a period).
local function queue_fold(stats, counter, period)
  local prefix = counter .. ':'
  local flat = redis.call('HGETALL', stats)
  local old, sum = {}, 0
  for i = 1, #flat, 2 do
    local p = string.sub(flat[i], 1, #prefix) == prefix and tonumber(string.sub(flat[i], #prefix + 1))
    if p and p <= period - 60 then
      old[#old + 1] = flat[i]
      sum = sum + (tonumber(flat[i + 1]) or 0)
    end
  end
  if #old > 0 then
    queue_incr(stats, counter, sum)
    redis.call('HDEL', stats, unpack(old))
  end
end

-- Adds n to the counter at server time now (seconds). Returns true when
-- this was the counter's first count in the period.
local function queue_count(stats, now, counter, n)
  if n <= 0 then return false end
  local period = math.floor(now / 10)
  local field = string.format('%s:%d', counter, period)
  if queue_incr(stats, field, n) ~= n then
    return false
  end
  queue_fold(stats, counter, period)
  return true
end

-- Whether the queue was never registered (and is marked registered now).
local function queue_unregistered(stats)
  return redis.call('HSETNX', stats, 'registered', '1') == 1
end

-- Counts n enqueued tasks. True when the queue has never been registered:
-- the caller adds it to the registry (a script on a Cluster cannot reach
-- it). Checked at most once per period, so the count stays one command.
local function queue_count_enqueued(stats, now, n)
  return queue_count(stats, now, 'enqueued', n) and queue_unregistered(stats)
end

-- The server's clock in seconds.
local function queue_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end

