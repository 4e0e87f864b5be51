-- include: queue_task.lua queue_rate.lua
-- flags: allow-oom
-- Lease up to ARGV[1] due tasks (server time), earliest first (a grouped
-- queue's in turn across its groups first: queue_fair), within the
-- queue's rate and its groups' limits (queue_flow.lua); none while the
-- queue is paused or throttled (queue_pause.lua). Leases that ran out are settled
-- first, in a bounded batch: back to the queue, or to the dead letters once
-- the task used up its attempts (queue_settle).
-- KEYS: see queue_task.lua.
-- ARGV[1] count; ARGV[2] lease in seconds; ARGV[3] lease token prefix (a
-- task's token is it, the task's rank, '.', its attempts, '@', the server
-- time of the reserve in ms, '+' and how long the task had been due then,
-- in ms: what queue_recent_record reads); ARGV[4] maximum attempts (0: no limit); the lease and the
-- maximum attempts as queue_term takes them (the queue's stored terms
-- replace a consumer's defaults);
-- ARGV[5] most expired leases settled by this call; ARGV[6] consumer key
-- prefix; ARGV[7] the consumer's token; ARGV[8] how long a place in line is
-- kept, in ms; ARGV[9] how it waits: '' not at all, 'fresh' joining the
-- line at its end (first try, or just woken), 'keep' keeping its place;
-- ARGV[10] the process's id and ARGV[11..] id, lease token, ... of tasks
-- the consumer finished, acked first (queue_ack; KEYS[15] as there). Every
-- attempt that ends here is recorded (queue_recent; KEYS[16]); KEYS[17]
-- counts the groups' leased tasks (queue_counting).
-- Returns {ms until a task may be due, a lease ends or a throttle ends (-1:
-- nothing scheduled, paused, or not first in line; 0 when tasks follow), how many
-- tasks were acked, whether children that ended wait for their parents'
-- step (queue_ended), id, payload or false, attempts, token, ...}.
local now = queue_now()
local nowText = string.format('%.17g', now)
local p, me, place, mode = ARGV[6], ARGV[7], ARGV[8], ARGV[9]

local expired = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', nowText, 'LIMIT', '0', ARGV[5])
local stats = redis.call('HMGET', KEYS[10], 'paused', 'maxAttempts', 'lease', 'throttled', 'rate', 'rateTat', 'recentKeep', 'recentMs',
  'groupConcurrency', 'groupRate', 'groupHeld', 'unhinted', 'recentBytes')
local msNow = math.floor(now * 1000)
local recent = {queue_recent_terms(stats[7], stats[8], stats[13])}
local paused = stats[1] ~= false
-- A throttle (queue_pause.lua): ms it has left, or nil.
local throttled = tonumber(stats[4])
throttled = throttled and throttled > now * 1000 and math.ceil(throttled - now * 1000) or nil
-- The queue's rate (queue_rate.lua): without a token the queue is held
-- back like a throttle, until the next one.
local want = tonumber(ARGV[1])
local rateStep, rateTat, tokens, rateMs = queue_rate(stats[5], stats[6], now)
if rateMs then
  throttled = math.max(throttled or 0, rateMs)
elseif tokens then
  want = math.min(want, tokens)
end
local max = queue_term(ARGV[4], stats[2])
local lease = queue_term(ARGV[2], stats[3])
need_read(KEYS[4])
need_read(KEYS[10])
queue_groups(p)
queue_counting(stats[9])

-- The groups' limits (queue_task.lua) of a grouped queue that has some,
-- or while a group's throttle may last; nil else. Per pass over the due
-- tasks (dueNow, flow_start): each group's room as read (how many tasks it
-- may take: math.huge without a limit), how many it took, its rate's
-- bucket ({seconds per task, arrival time}), its leased count, and the ms
-- until a group held by its rate or throttle may take a task again.
local flow
if queue_grouped() then
  local held = tonumber(stats[11])
  held = held ~= nil and held > msNow
  if need_run.counting or stats[10] or held then
    flow = {concurrency = need_run.counting, rate = stats[10], held = held}
  end
end

local function flow_start()
  if flow then flow.room, flow.took, flow.bucket, flow.leased, flow.reopen, flow.marks = {}, {}, {}, {}, nil, {} end
end

-- Reads the leased counts of the groups gs (a list), in one command.
local function flow_counts(gs)
  if not (flow and flow.concurrency) or #gs == 0 then return end
  local counts = redis.call('HMGET', KEYS[17], unpack(gs))
  for i, g in ipairs(gs) do flow.leased[g] = tonumber(counts[i]) or 0 end
end

local function flow_reopen(ms)
  if not flow.reopen or ms < flow.reopen then flow.reopen = ms end
end

-- How many more tasks group g (false: none) may take in this pass.
local function flow_room(g)
  if not flow or not g or g == '' then return math.huge end
  local room = flow.room[g]
  if not room then
    room = math.huge
    if flow.concurrency then
      room = flow.concurrency - (flow.leased[g] or tonumber(redis.call('HGET', KEYS[17], g)) or 0)
    end
    if flow.held and room > 0 then
      local untilMs = tonumber(redis.pcall('GET', p .. QUEUE_GROUP_HELD .. g))
      if untilMs and untilMs > msNow then
        room = 0
        flow_reopen(untilMs - msNow)
      end
    end
    if flow.rate and room > 0 then
      local tat = redis.pcall('GET', p .. QUEUE_GROUP_RATE .. g)
      local step, from, tokens, ms = queue_rate(flow.rate, type(tat) == 'string' and tat, now)
      if step then
        flow.bucket[g] = {step, from}
        if ms then
          room = 0
          flow_reopen(ms)
        else
          room = math.min(room, tokens)
        end
      end
    end
    flow.room[g] = room
  end
  return room - (flow.took[g] or 0)
end

-- Group g (false: none) takes the task id.
local function flow_took(g, id)
  if flow and g and g ~= '' then
    flow.took[g] = (flow.took[g] or 0) + 1
    -- (Counted here while the counting steps go: queue_task.lua.)
    if need_run.marks == 's' then
      flow.marks[#flow.marks + 1] = QUEUE_MARK .. id
      flow.marks[#flow.marks + 1] = '1'
    end
  end
end

-- Writes what the groups took: their leased counts, their buckets.
local function flow_done()
  if not flow then return end
  if #flow.marks > 0 then redis.call('HSET', KEYS[17], unpack(flow.marks)) end
  for g, n in pairs(flow.took) do
    if flow.concurrency then redis.call('HINCRBY', KEYS[17], g, string.format('%d', n)) end
    local bucket = flow.bucket[g]
    if bucket then
      local tat = bucket[2] + n * bucket[1]
      redis.call('SET', p .. QUEUE_GROUP_RATE .. g, string.format('%.17g', tat),
        'PX', string.format('%d', math.max(1, math.ceil((tat - now) * 1000))))
    end
  end
end

-- How many groups and hints one reserve looks at, at most.
local GROUPS_SCAN, HINTS_SCAN = 100, 200

-- Up to `want` due tasks of a grouped queue (queue_task.lua), taken in
-- turn: one of each group that has one due, the group whose turn came
-- least recently first, round after round. The group '' (tasks enqueued
-- without one) takes, when none of its hints is due, one of the queue's
-- first due tasks that has no group (one without a hint: a hint lost).
-- The tasks queued before the queue had groups are hinted to it
-- (queue_unhinted_step in queue_task.lua). A group's hints are read
-- from the head of its list a few at a time (about its share of `want`)
-- and checked against the queue in one command. A group its limits hold
-- (flow_room) takes nothing at its turn; under limits, a hint counts only while the task
-- is still of its group (its tags read with the check). Reads only: returns the
-- ids, when each was due, what leasing them changes in the hints
-- (`hints`: per group's list how many hints from its head were used and
-- which of them go back to its end, each group's last turn, and the
-- groups that had one, whose lists may be empty now), and the ids taken.
local function queue_fair()
  local ids, at, taken = {}, {}, {}
  local hints = {used = {}, later = {}, turn = {}, looked = {}}
  local active = redis.call('ZRANGE', KEYS[14], 0, GROUPS_SCAN - 1)
  if #active == 0 then return ids, at, hints, taken end
  flow_counts(active)
  local share = math.ceil(want / #active) + 1
  local budget = HINTS_SCAN + want
  -- Per group: its key, the hints read from its head (ids, and due times:
  -- false when the queue does not hold the task), how many of them were
  -- used, and whether its list has no more to read.
  local groups = {}
  -- Reads the next hints of the groups sts (about a share each), and
  -- checks them all against the queue in one command.
  local function read(sts)
    local from, got = {}, {}
    for _, st in ipairs(sts) do
      local n = math.min(share, budget)
      local h = (not st.spent and n > 0) and redis.pcall('LRANGE', st.key, #st.ids, #st.ids + n - 1)
      if type(h) ~= 'table' or h.err or #h == 0 then
        st.spent = true
      else
        budget = budget - #h
        st.spent = #h < n
        from[#from + 1] = {st, #h}
        for _, id in ipairs(h) do got[#got + 1] = id end
      end
    end
    -- The queue says whether (and since when) each task is due.
    local dues = queue_scores(1, got)
    local tags = flow and #got > 0 and redis.call('HMGET', KEYS[13], unpack(got))
    local i = 0
    for _, f in ipairs(from) do
      local st = f[1]
      for _ = 1, f[2] do
        i = i + 1
        st.ids[#st.ids + 1] = got[i]
        st.dues[#st.dues + 1] = tonumber(dues[i]) or false
        -- (Of another group now: a stale hint.)
        if tags and (tags_group(tags[i]) or '') ~= st.group then st.dues[#st.dues] = false end
      end
    end
  end
  -- The next due task of group g, or nil; the hints passed on the way are
  -- used: dropped, or (a task due later) back to the list's end.
  local function take(g)
    local st = groups[g]
    while true do
      while st.used < #st.ids do
        st.used = st.used + 1
        local id, due = st.ids[st.used], st.dues[st.used]
        if due and due > now then
          local later = hints.later[st.key] or {}
          later[#later + 1] = id
          hints.later[st.key] = later
        elseif due and not taken[id] then
          return id, due
        end
      end
      if st.spent then break end
      read({st})
    end
    if g == '' then
      local flat = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowText, 'WITHSCORES', 'LIMIT', '0', #ids + 20)
      for i = 1, #flat, 2 do
        if not taken[flat[i]] and not tags_group(redis.call('HGET', KEYS[13], flat[i])) then
          -- (Its turns go on while the queue has such tasks due.)
          st.fallback = true
          return flat[i], tonumber(flat[i + 1])
        end
      end
    end
    return nil
  end
  local first = {}
  for _, g in ipairs(active) do
    groups[g] = {group = g, key = queue_group_key(g), ids = {}, dues = {}, used = 0}
    if #first < want and flow_room(g) > 0 then first[#first + 1] = groups[g] end
  end
  -- The first hints of the groups the first round takes from, in one
  -- check (the next, group by group, as they run out).
  read(first)
  local turns, n = 0, 0
  while n < want and #active > 0 do
    local still = {}
    for _, g in ipairs(active) do
      if n >= want then break end
      turns = turns + 1
      hints.turn[g] = turns
      -- (A group its limits hold takes nothing: its turn goes by all the
      -- same, so that the groups behind the first GROUPS_SCAN have theirs.)
      if not flow or flow_room(g) > 0 then
        local id, due = take(g)
        local st = groups[g]
        if not st.fallback then hints.looked[g] = st.key end
        if id then
          n = n + 1
          taken[id] = true
          ids[n] = id
          at[n] = due
          still[#still + 1] = g
          if flow then flow_took(g, id) end
        end
      end
    end
    active = still
  end
  for _, st in pairs(groups) do
    if st.used > 0 then hints.used[st.key] = st.used end
  end
  return ids, at, hints, taken
end

-- The due tasks' ids, when each was due (seconds), and the groups' hints
-- to change when they are leased (queue_fair; nil: none).
local dueAt, hints = {}, nil
local function dueNow()
  if paused or throttled then return {} end
  local ids, taken = {}, {}
  dueAt, hints = {}, nil
  flow_start()
  if queue_grouped() then ids, dueAt, hints, taken = queue_fair() end
  if #ids < want then
    -- The rest, earliest first, from the queue itself: tasks without a
    -- hint are never left out. (Under limits, each within its group's,
    -- looking past a few tasks of groups held.)
    local flat = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowText, 'WITHSCORES', 'LIMIT', '0',
      want + #ids + (flow and 100 or 0))
    local tags = {}
    if flow and #flat > 0 then
      local cand = {}
      for i = 1, #flat, 2 do cand[#cand + 1] = flat[i] end
      tags = redis.call('HMGET', KEYS[13], unpack(cand))
    end
    for i = 1, #flat, 2 do
      if #ids >= want then break end
      local id = flat[i]
      if not taken[id] then
        local g = flow and tags_group(tags[(i + 1) / 2])
        if not flow or flow_room(g) > 0 then
          ids[#ids + 1] = id
          dueAt[#dueAt + 1] = tonumber(flat[i + 1])
          if flow then flow_took(g, id) end
        end
      end
    end
  end
  return ids
end

-- Writes what queue_fair read: the hints used go from the head of their
-- lists, those of tasks due later back to the end (one or two commands per
-- group), the groups whose turn came go to the end of the turn, in the
-- order of their last turn, and a group left without hints leaves it.
local function queue_fair_done()
  if not hints then return end
  for key, used in pairs(hints.used) do redis.pcall('LTRIM', key, used, -1) end
  for key, later in pairs(hints.later) do redis.pcall('RPUSH', key, unpack(later)) end
  -- (Turns are counted: each goes after the last one given.)
  local last = tonumber(redis.call('ZRANGE', KEYS[14], -1, -1, 'WITHSCORES')[2]) or 0
  local scores = {}
  for g, turn in pairs(hints.turn) do
    scores[#scores + 1] = string.format('%.0f', last + turn)
    scores[#scores + 1] = g
  end
  if #scores > 0 then redis.call('ZADD', KEYS[14], 'XX', unpack(scores)) end
  for g, key in pairs(hints.looked) do
    if redis.pcall('LLEN', key) == 0 then redis.call('ZREM', KEYS[14], g) end
  end
  -- The next step of hinting the tasks the queue had before it had groups.
  local from, skip, upto = string.match(stats[12] or '', '^(%S+) (%d+) (%S+)$')
  if from then queue_unhinted_step(from, tonumber(skip), upto) end
end

-- The finished tasks are acked before anything else is written. The keys
-- this call reads or writes after the ack are checked or read before it:
-- every key when expired leases are settled; else the queue's due tasks and
-- the line's length are read first (an ack without a rerun leaves both as
-- they are; one with a rerun queues it, and they are read again).
local due, waiting
local function needAll()
  queue_need(1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
  if recent[1] > 0 then queue_need(16) end
  queue_linked()
end
if #ARGV > 10 then
  if #expired > 0 then
    needAll()
  else
    due = dueNow()
    waiting = need_call('list', 'LLEN', KEYS[9])
  end
end
local finished, requeued, freed = queue_ack(11, now, p, place, ARGV[10], recent)
local acked = 0
for _ in pairs(finished) do acked = acked + 1 end
if acked > 0 and #expired > 0 then
  local left = {}
  for _, id in ipairs(expired) do
    if not finished[id] then left[#left + 1] = id end
  end
  expired = left
end
if not due or requeued or freed then due, waiting = dueNow(), nil end
if #expired > 0 then
  needAll()
elseif #due > 0 then
  -- Leasing due tasks writes the queue, attempts and leased keys after
  -- reading them, and reads the line before its first write (a wrong type
  -- fails there, before any write); this one it writes unread.
  queue_need(5)
elseif mode ~= '' then
  queue_need(9)
end

local died, records = 0, {}
local leases = #expired > 0 and recent[1] > 0 and redis.call('HMGET', KEYS[5], unpack(expired))
local nowMs = string.format('%.0f', math.floor(now * 1000))
for i, id in ipairs(expired) do
  local attempts = tonumber(redis.call('HGET', KEYS[3], id)) or 0
  local outcome = 'expired'
  local tags = leases and redis.call('HGET', KEYS[13], id)
  if max > 0 and attempts >= max then
    queue_settle(id, 'dead', nowText, 'lease ran out')
    died = died + 1
    outcome = 'dead'
  else
    queue_settle(id, 'retry', nowText, 'lease ran out')
  end
  if leases then
    records[i] = queue_recent_record(nowMs, outcome, id, leases[i], 'lease ran out', tags)
  end
end
queue_recent(records, recent[1], recent[2], recent[3])
queue_count(KEYS[10], now, 'expired', #expired)
queue_count(KEYS[10], now, 'dead', died)
if #expired > 0 then due = dueNow() end

local out = {0, acked, queue_ended()}
if #due > 0 then
  local leaseEnd = string.format('%.17g', now + lease)
  -- (Not '%d': Lua's %d is a C long, 32 bits on a 32-bit server, and the
  -- ms since 1970 are past 2^31. Small whole numbers below take '%d', which
  -- formats faster than a number argument's '%.17g'.)
  local stamp = string.format('@%.0f', math.floor(now * 1000))
  local payloads = redis.call('HMGET', KEYS[2], unpack(due))
  waiting = waiting or need_call('list', 'LLEN', KEYS[9])
  local attempts = redis.call('HMGET', KEYS[3], unpack(due))
  local tokens, ends, counts = {}, {}, {}
  for i, id in ipairs(due) do
    local wait = math.min(math.max(0, (now - (dueAt[i] or now)) * 1000), 1e15)
    local n = (tonumber(attempts[i]) or 0) + 1
    local token = string.format('%s%d.%d%s+%.0f', ARGV[3], i, n, stamp, math.floor(wait))
    tokens[#tokens + 1] = id
    tokens[#tokens + 1] = token
    counts[#counts + 1] = id
    counts[#counts + 1] = string.format('%d', n)
    out[#out + 1] = id
    out[#out + 1] = payloads[i]
    out[#out + 1] = n
    out[#out + 1] = token
  end
  -- The lease ends, in reverse (queue_add.lua says why): due tasks come
  -- in order, those taken in turn across groups are sorted first.
  local order = due
  if hints then
    order = {unpack(due)}
    table.sort(order)
  end
  for i, id in ipairs(order) do
    ends[2 * (#order - i) + 1] = leaseEnd
    ends[2 * (#order - i) + 2] = id
  end
  redis.call('ZREM', KEYS[1], unpack(due))
  queue_fair_done()
  flow_done()
  -- (Off their groups' counts: queue_group_count.lua.)
  if need_run.groups.counting then group_count_taken(p, KEYS[14], KEYS[10], KEYS[13], due) end
  redis.call('HSET', KEYS[5], unpack(tokens))
  redis.call('ZADD', KEYS[4], unpack(ends))
  redis.call('HSET', KEYS[3], unpack(counts))
  if rateStep then
    redis.call('HSET', KEYS[10], 'rateTat', string.format('%.17g', rateTat + #due * rateStep))
  end
  if mode == 'keep' then waiting = waiting - line_leave(KEYS[9], p, me) end
  -- Due tasks left over (this consumer took fewer than an enqueue woke it
  -- for, or expired leases came back): one more waiter each.
  if waiting > 0 then
    local left = redis.call('ZCOUNT', KEYS[1], '-inf', nowText)
    queue_wake(KEYS[9], p, left, false, place)
  end
  return out
end
-- Nothing to lease: the hints found stale are mended or dropped all the same.
queue_fair_done()
if mode ~= '' and not line_keep(KEYS[9], p, me, place, mode == 'fresh') then
  -- Not first in line: the first one keeps the timer.
  return {-1, acked, queue_ended()}
end
if paused then
  -- Woken by the resume (or looking again every RECHECK).
  return {-1, acked, queue_ended()}
end
if throttled then
  -- Looking again when the throttle ends (or woken when it is ended).
  return {throttled, acked, queue_ended()}
end
do
  -- (Under limits, the due tasks left are held by their groups': a group
  -- held by its rate or throttle looks again when it ends, one at its
  -- concurrency is woken by a lease's end.)
  local soonest = flow and flow.reopen or -1
  for _, key in ipairs({KEYS[1], KEYS[4]}) do
    local first
    if flow and key == KEYS[1] then
      first = redis.call('ZRANGEBYSCORE', key, '(' .. nowText, '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
    else
      first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    end
    if first[2] then
      local ms = math.max(1, math.ceil((tonumber(first[2]) - now) * 1000))
      if soonest < 0 or ms < soonest then
        soonest = ms
      end
    end
  end
  out[1] = soonest
end
return out
