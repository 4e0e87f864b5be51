-- include: queue_task.lua
-- Enqueue tasks due at server time + delay. An id already queued is kept,
-- or replaced, or takes the earlier or later due time (the policy); a task
-- added or replaced takes its payload (or loses an old one). An id that is
-- leased is not queued beside its running task: it waits as a rerun until
-- the lease ends (queue_task.lua), under the same policy. One waiting
-- consumer is woken per task due now; tasks due later wake the first in line.
-- KEYS: see queue_task.lua.
-- ARGV[1] delay in seconds; ARGV[2] policy: keep | replace | earliest | latest;
-- ARGV[3] maximum length, queued plus leased (0: none);
-- ARGV[4] '' when ARGV[9..] are ids only, else one flag per task ('1': it
-- has a payload) and ARGV[9..] are id, payload pairs;
-- ARGV[5] '1' for a status per task, '0' for how many were added;
-- ARGV[6] consumer key prefix; ARGV[7] how long a wake-up waits for its
-- consumer, in ms; ARGV[8] the tasks' tags, space-separated, and their
-- group ('<tags>\29<group>', queue_tags.lua; '': none): a task added or
-- replaced takes them (or loses old ones), as its payload, and is hinted
-- to its group (queue_hint).
-- Returns {done, status per task (0 ignored, 1 added, 2 updated)} or
-- {done, added}, done being 2 when the caller is to register the queue
-- (queue_count_enqueued) and 1 otherwise; {0, length} when the batch would
-- take the queue past its maximum length (then nothing is changed). For
-- {1, added} it replies added alone (a number the server replies faster
-- than a table). Wake-ups of consumers who wait elsewhere come first, for
-- the caller to push (queue_relayed, queue_line.lua).
local now = queue_now()
local due = now + tonumber(ARGV[1])
local dueText = string.format('%.17g', due)
local policy = ARGV[2]
local max = tonumber(ARGV[3])
local flags = ARGV[4]
local statuses = ARGV[5] == '1'
local tags = ARGV[8] ~= '' and ARGV[8]
local step = 1
if flags ~= '' then step = 2 end
local first = 9
local function wake(n)
  if tonumber(ARGV[1]) > 0 then
    queue_wake(KEYS[9], ARGV[6], 0, n > 0, ARGV[7])
  else
    queue_wake(KEYS[9], ARGV[6], n, false, ARGV[7])
  end
end
-- Counts the added tasks; the reply without statuses.
local function counted(added)
  if queue_count_enqueued(KEYS[10], now, added) then
    return {2, added}
  end
  return added
end
local n = (#ARGV - first + 1) / step
-- Nothing an added id could inherit or run beside: no payloads, attempts,
-- leases or tags, and no groups to hint. One EXISTS for those five and the
-- consumers' line: a queue of the seed's API has none of them, and a line
-- that exists (a list exists while it holds somebody) is read for its
-- length, the check of its type (need_call).
local present = redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4], KEYS[13], KEYS[14], KEYS[9])
local waiting = present > 0 and need_call(QUEUE_TYPES[9], 'LLEN', KEYS[9]) > 0
local bare = present == (waiting and 1 or 0)

-- The seed's enqueue: one ZADD NX per 500 ids, in reverse (queue_add.lua).
-- The ids are counted first, all of them, as the check of the stats
-- hash's type (its first write), then the ZADD checks the queue's; a
-- queue of another type takes the count back before the call fails, and
-- ids already queued are taken back after it (one more HINCRBY, only then).
if bare and not statuses and policy == 'keep' and flags == '' and max == 0 and not tags then
  local period = math.floor(now / 10)
  local field = 'enqueued:' .. period
  local sum = queue_incr(KEYS[10], field, n)
  local function uncount(k)
    if sum == n and k == n then
      redis.call('HDEL', KEYS[10], field)
    elseif k > 0 then
      redis.call('HINCRBY', KEYS[10], field, -k)
    end
  end
  local added = 0
  local args = {}
  for from = first, #ARGV, 500 do
    local k = 0
    for i = math.min(from + 499, #ARGV), from, -1 do
      args[k + 1] = dueText
      args[k + 2] = ARGV[i]
      k = k + 2
    end
    local reply = redis.pcall('ZADD', KEYS[1], 'NX', unpack(args, 1, k))
    if type(reply) == 'table' then
      uncount(n)
      need_type(KEYS[1], QUEUE_TYPES[1])
      error(reply)
    end
    added = added + reply
  end
  uncount(n - added)
  if waiting then wake(added) end
  if sum == n and added > 0 then
    queue_fold(KEYS[10], 'enqueued', period)
    if queue_unregistered(KEYS[10]) then return queue_relayed({2, added}) end
  end
  return queue_relayed(added)
end
-- A read of the stats hash is the check of its type (a read answers a
-- number faster than TYPE its table).
need_call(QUEUE_TYPES[10], 'HEXISTS', KEYS[10], 'registered')

-- Reads first: which of the task keys exist (a key that does not holds no
-- field of any id), checking the type of each that does, and the ids' due
-- times and lease ends, one command each (queue_scores).
local hasPayloads, hasAttempts, hasLeased, hasTags = false, false, false, false
if bare then
  need_read(KEYS[2]) need_read(KEYS[3]) need_read(KEYS[4]) need_read(KEYS[13]) need_read(KEYS[14])
  need_run.groups = {p = ARGV[6], grouped = false}
else
  hasPayloads = queue_has(2)
  hasAttempts = queue_has(3)
  hasLeased = queue_has(4)
  hasTags = queue_has(13)
  queue_groups(ARGV[6])
  if hasLeased then queue_need(6) end
end
-- The group the tasks are hinted to (false: none), and the latest due
-- time of the tasks the queue had before it had groups (false: none).
local group = tags_group(tags) or (queue_grouped() and '')
local grouping = group and not queue_grouped()
local hadTasks = grouping and (redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or false)
local hadCount = hadTasks and redis.call('ZCARD', KEYS[1]) or 0
local hasDead = queue_has(7)
if hasDead then queue_need(8, 12) end
local ids, payloads = {}, {}
for i = 1, n do
  ids[i] = ARGV[first + (i - 1) * step]
  payloads[i] = step == 2 and string.sub(flags, i, i) == '1' and ARGV[first + 1 + (i - 1) * step]
end
local queued = queue_scores(1, ids)
local leased = {}
if hasLeased then leased = queue_scores(4, ids) end

-- Growth: ids neither queued nor leased (a rerun replaces its running task).
if max > 0 then
  local adding = 0
  local seen = {}
  for i, id in ipairs(ids) do
    if not seen[id] and not queued[i] and not leased[i] then
      adding = adding + 1
    end
    seen[id] = true
  end
  local length = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[4])
  if adding > 0 and length + adding > max then
    return {0, length}
  end
end

-- What each id's task becomes, decided in order (an id may come twice in a
-- seed batch: the later one meets the task the earlier one left), then
-- written in one command per key, in reverse (queue_add.lua): the last
-- occurrence that queued an id gives its payload. A leased id waits as a
-- rerun instead.
local out = {0}
local added = 0
local woken = 0
local last, fresh = {}, {}
-- The tasks queued before this call that take the new tags (their group
-- may change: queue_group_count.lua).
local updated = {}
for i, id in ipairs(ids) do
  local status = 0
  if leased[i] then
    status = queue_rerun(id, due, dueText, payloads[i], policy, tags)
  else
    local old = last[id] and due or tonumber(queued[i])
    if not old then
      status = 1
      if hasDead then queue_keep_grave(id) end
      fresh[id] = true
    elseif queue_wins(policy, due, old) then
      status = 2
      if not last[id] and not fresh[id] then updated[#updated + 1] = id end
    end
    if status > 0 then
      last[id] = i
      woken = woken + 1
    end
  end
  if status == 1 then
    added = added + 1
  end
  out[i + 1] = status
end
if woken > 0 then
  -- The groups of the tasks updated, before their tags change.
  local before = group and need_run.groups.counting and #updated > 0 and hasTags
    and redis.call('HMGET', KEYS[13], unpack(updated)) or {}
  local scores, set, unset, forget, tagged = {}, {}, {}, {}, {}
  for i = #ids, 1, -1 do
    local id = ids[i]
    if last[id] == i then
      scores[#scores + 1] = dueText
      scores[#scores + 1] = id
      if payloads[i] then
        set[#set + 1] = id
        set[#set + 1] = payloads[i]
      elseif hasPayloads then
        unset[#unset + 1] = id
      end
      if hasAttempts and fresh[id] then forget[#forget + 1] = id end
      if tags then
        tagged[#tagged + 1] = id
        tagged[#tagged + 1] = tags
      elseif hasTags then
        tagged[#tagged + 1] = id
      end
    end
  end
  redis.call('ZADD', KEYS[1], unpack(scores))
  if #set > 0 then redis.call('HSET', KEYS[2], unpack(set)) end
  if #unset > 0 then redis.call('HDEL', KEYS[2], unpack(unset)) end
  if #forget > 0 then redis.call('HDEL', KEYS[3], unpack(forget)) end
  if #tagged > 0 then redis.call(tags and 'HSET' or 'HDEL', KEYS[13], unpack(tagged)) end
  if group then
    -- (In the order they came: scores holds them in reverse.)
    local hinted = {}
    for i = #scores, 2, -2 do hinted[#hinted + 1] = scores[i] end
    redis.pcall('RPUSH', queue_group_key(group), unpack(hinted))
    redis.call('ZADD', KEYS[14], 'NX', '0', group)
    if grouping then queue_start_counting(hadCount) end
    -- Counted: the tasks added, and those updated that change group.
    local fresh_n = 0
    for _ in pairs(fresh) do fresh_n = fresh_n + 1 end
    queue_counted(group, fresh_n)
    for i = 1, #updated do
      local was = before[i] ~= nil and (tags_group(before[i]) or '') or group
      if was ~= group then
        queue_counted(was, -1)
        queue_counted(group, 1)
      end
    end
    -- A queue grouped now: the tasks it had, without a group, are hinted
    -- to the group '' (queue_task.lua).
    if hadTasks then queue_unhinted_step('-inf', 0, hadTasks) end
  end
end
if waiting then wake(woken) end
if not statuses then
  return queue_relayed(counted(added))
end
out[1] = queue_count_enqueued(KEYS[10], now, added) and 2 or 1
return queue_relayed(out)
