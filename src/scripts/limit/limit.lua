-- include: limit_policy.lua
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
now = tonumber(t[1]) * 1000000 + tonumber(t[2])
cost = tonumber(ARGV[1])
local take = ARGV[2] == '1'

-- One token bucket, the most common call: the loop below for it alone,
-- without the loop's tables and closures (an eighth of the call's time).
if #KEYS == 2 and ARGV[3] == 't' then
  local ok, remaining, retry, reset, after = bucket_decide(KEYS[1], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
  if ok and take then
    bucket_write(KEYS[1], after)
  elseif ok then
    remaining = remaining + cost
  end
  return {ok and 0 or 1, math.max(0, math.floor(remaining + 1e-6)), math.ceil(retry), math.ceil(reset), now}
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
