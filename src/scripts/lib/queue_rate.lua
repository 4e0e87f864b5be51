-- A queue's rate (lease::set_rate: the stats hash's 'rate', '<limit> <per
-- seconds> <burst>'): a token bucket (GCRA, its theoretical arrival time in
-- 'rateTat') that hands out up to burst tasks at once and limit per period,
-- to reserve() and the drop-in's pop alike.

-- The bucket of `rate` and `tat` (the two fields' values) at server time
-- `now`: nil without a rate; else the seconds per task, the arrival time to
-- go on from, and how many tasks it allows now (at least 1) or, when none,
-- nil and the ms until the next.
local function queue_rate(rate, tat, now)
  local limit, per, burst = string.match(rate or '', '^(%d+) (%S+) (%d+)$')
  if not (limit and tonumber(per)) then return nil end
  local step = tonumber(per) / tonumber(limit)
  local room = tonumber(burst) * step
  tat = math.max(tonumber(tat) or now, now)
  local tokens = math.floor((room - (tat - now)) / step + 1e-9)
  if tokens < 1 then
    return step, tat, nil, math.max(1, math.ceil((tat - room + step - now) * 1000))
  end
  return step, tat, tokens
end
