-- include: queue_task.lua
-- flags: allow-oom
-- Give a leased task back, only if the caller's lease is still the task's:
-- due again after ARGV[3] seconds, or to the dead letters once it used up
-- its attempts (queue_settle).
-- KEYS: see queue_task.lua (KEYS[16]: the attempt is recorded there,
-- unless it is a release).
-- ARGV[1] id; ARGV[2] lease token; ARGV[3] delay in seconds;
-- ARGV[4] maximum attempts (0: no limit, as queue_term takes it; 'bury':
-- to the dead letters now, whatever its attempts; 'release': back without
-- spending the attempt, its last failure kept); ARGV[5] consumer key prefix;
-- ARGV[6] how long a wake-up waits for its consumer, in ms; ARGV[7] why
-- the attempt failed ('': not said).
-- Returns 'requeued' (due again), 'dead', or 'not leased' when the lease is
-- not the caller's.
local id = ARGV[1]
if redis.call('HGET', KEYS[5], id) ~= ARGV[2] then
  return 'not leased'
end
local stats = need_call('hash', 'HMGET', KEYS[10], 'maxAttempts', 'recentKeep', 'recentMs', 'groupConcurrency', 'recentBytes')
local keep, ms, bytes = queue_recent_terms(stats[2], stats[3], stats[5])
if ARGV[4] == 'release' then keep = 0 end
queue_need(1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13)
queue_groups(ARGV[5])
queue_counting(stats[4])
if keep > 0 then queue_need(16) end
queue_linked()
local now = queue_now()
local max = 0
if ARGV[4] ~= 'bury' and ARGV[4] ~= 'release' then
  max = queue_term(ARGV[4], stats[1]) or 0
end
local attempts = tonumber(redis.call('HGET', KEYS[3], id)) or 0
local reason = ARGV[7] ~= '' and ARGV[7]
if ARGV[4] == 'release' then
  -- Not a failure: the reserve that leased it is taken back.
  if attempts > 1 then
    redis.call('HSET', KEYS[3], id, string.format('%d', attempts - 1))
  else
    redis.call('HDEL', KEYS[3], id)
  end
  reason = redis.call('HGET', KEYS[11], id)
end
local dead = ARGV[4] == 'bury' or (max > 0 and attempts >= max)
local tags = keep > 0 and redis.call('HGET', KEYS[13], id)
local due, freed
if dead then
  due, freed = queue_settle(id, 'dead', string.format('%.17g', now), reason)
  queue_count(KEYS[10], now, 'dead', 1)
else
  due, freed = queue_settle(id, 'retry', string.format('%.17g', now + tonumber(ARGV[3])), reason)
  if ARGV[4] ~= 'release' then queue_count(KEYS[10], now, 'nacked', 1) end
end
-- (A group the task freed may give another task now.)
if freed and not (due and due <= now) then queue_wake(KEYS[9], ARGV[5], 1, false, ARGV[6]) end
if due then queue_wake_for(due, now, ARGV[5], ARGV[6]) end
queue_recent({queue_recent_record(string.format('%.0f', math.floor(now * 1000)), dead and 'dead' or 'nacked',
  id, ARGV[2], reason, tags)}, keep, ms, bytes)
if dead then return queue_relayed('dead') end
return queue_relayed('requeued')
