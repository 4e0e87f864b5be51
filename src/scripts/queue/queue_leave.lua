-- include: queue_line.lua
-- flags: allow-oom
-- A consumer stops waiting on a queue (its wait ran out, a signal, or it
-- got tasks from another queue it waited on): it leaves the line, and a
-- wake-up it got meanwhile goes on to the next consumer, so that the task
-- it was for is not left waiting.
-- KEYS[1] consumer line. ARGV[1] consumer key prefix; ARGV[2] the
-- consumer's token; ARGV[3] how long a wake-up waits for its consumer, ms.
line_leave(KEYS[1], ARGV[1], ARGV[2])
local wake = line_wake(ARGV[1], ARGV[2])
local got = redis.call('LPOP', wake)
if got then
  redis.call('DEL', wake)
  if got == '1' then
    queue_wake(KEYS[1], ARGV[1], 1, false, ARGV[3])
  else
    queue_wake(KEYS[1], ARGV[1], 0, true, ARGV[3])
  end
end
return 0
