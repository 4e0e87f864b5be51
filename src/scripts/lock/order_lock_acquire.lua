-- Lock_Service::addLock: take the order lock with a fresh id from the shared
-- counter, in one step, so the id is spent only when the lock is taken.
-- KEYS[1] order lock key (absent: only a new id); KEYS[2] id counter;
-- ARGV[1] lease in ms.
-- Returns the new id, or 0 when the order is already locked. A counter
-- written by hand (another type, text) fails naming it (need.lua), and
-- nothing is changed.
local order, counter = KEYS[1], KEYS[2]
if #KEYS == 1 then order, counter = nil, KEYS[1] end
if order and redis.call('EXISTS', order) == 1 then
  return 0
end
local id = redis.pcall('INCR', counter)
if type(id) == 'table' then
  need_type(counter, 'string')
  need_units(counter, redis.call('GET', counter))
  error(id)
end
if order then redis.call('SET', order, id, 'PX', ARGV[1]) end
return id
