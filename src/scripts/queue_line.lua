-- include: line.lua
-- What the queue scripts share (after line.lua): waking consumers.

-- Wakes the consumers waiting in the queue's line for n tasks that are due
-- now: one consumer per task, first come first served. Tasks due later
-- (later = true, n = 0) wake only the first in line, without taking it out
-- of the line, so that it sets its timer by them. ms: how long a wake-up
-- waits for a consumer that died after it was chosen.
local function queue_wake(line, p, n, later, ms)
  for _ = 1, math.min(n, 1000) do
    local member = line_next(line, p)
    if not member then return end
    line_wake_up(p, member, '1', ms)
  end
  if later and n == 0 then
    local first = redis.call('LINDEX', line, 0)
    if first then line_wake_up(p, first, '0', ms) end
  end
end
