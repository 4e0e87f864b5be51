-- include: queue_tags.lua
-- Each group's queued tasks, counted while the queue is grouped
-- (queue_task.lua), in a hash beside the hint lists: '<p>group-count'
-- (p: the consumer key prefix; a field per group, '' for the tasks
-- without one; a key the scripts name, in the declared keys' slot by
-- construction, as the hints' lists). Every script that queues a task of a
-- grouped queue or takes one out adds or takes it off here. A group whose
-- count falls to 0 leaves at once: its hint list (stale hints only) and its
-- place in the turn (`groups`, the groups zset) go, and with the group ''
-- the stats hash's mark of the tasks queued before the queue had groups
-- (`stats`).

-- Adds n (negative: takes off) to the count of group g.
local function group_count(p, groups, stats, g, n)
  if n == 0 then return end
  local key = p .. 'group-count'
  local left = redis.pcall('HINCRBY', key, g, string.format('%d', n))
  -- (A key of another type, written by hand, counts nothing.)
  if type(left) ~= 'number' or left > 0 then return end
  -- (Keys of another type, written by hand, are left as they are: the
  -- seed's pop and dequeue name them without checking them.)
  redis.call('HDEL', key, g)
  redis.pcall('DEL', p .. 'group:' .. g)
  redis.pcall('ZREM', groups, g)
  if g == '' then redis.pcall('HDEL', stats, 'unhinted') end
end

-- Takes the tasks ids (a list), just taken out of the queue, off their
-- groups' counts, when the queue counts them (its count hash exists): their
-- groups from the tags hash (`tags`: a task's stored tags, the group after
-- a '\29': queue_tags.lua).
local function group_count_taken(p, groups, stats, tags, ids)
  if #ids == 0 or redis.call('EXISTS', p .. 'group-count') == 0 then return end
  local stored = redis.pcall('HMGET', tags, unpack(ids))
  if type(stored) ~= 'table' or stored.err then stored = {} end
  local per = {}
  for i = 1, #ids do
    local t = stored[i]
    local g = tags_group(t) or ''
    per[g] = (per[g] or 0) + 1
  end
  for g, n in pairs(per) do group_count(p, groups, stats, g, -n) end
end
