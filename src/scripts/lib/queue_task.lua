-- include: queue_line.lua queue_count.lua queue_add.lua queue_record.lua queue_group_count.lua flow_end.lua
-- What the scripts that move a queue's tasks share. They all take the same
-- keys, in one hash slot:
-- KEYS[1] queue zset (due time per id, the seed's); KEYS[2] payloads hash;
-- KEYS[3] attempts hash; KEYS[4] leased zset (lease end per id);
-- KEYS[5] lease tokens hash; KEYS[6] reruns hash; KEYS[7] dead zset (time
-- of death per id); KEYS[8] dead letters hash; KEYS[9] consumer line list;
-- KEYS[10] stats hash; KEYS[11] failures hash (why the task's last attempt
-- failed); KEYS[12] dead letters' failures hash (why each died); KEYS[13]
-- tags hash (the tags a producer gave the task, and its group); KEYS[14]
-- the groups zset (queue_hint); and the scripts that end attempts (ack,
-- nack, reserve) KEYS[15] the tasks each worker acked (queue_workers.lua),
-- KEYS[16] the recent attempts list and KEYS[17] the leased tasks per
-- group (queue_counting); and with them the keys of workflows
-- (queue_flow_end): KEYS[18] the links hash (a child's id -> its parent),
-- KEYS[19] the ended hash (the children that ended, for their parents) and
-- KEYS[20] the child results hash (a released parent's id -> its
-- children's results).
--
-- An id is queued, or leased, or neither; payloads, attempts and tags are
-- those of that task. An id enqueued while it is leased waits in the reruns
-- hash (a record of its due time, tags and payload: queue_record.lua)
-- until the lease ends, so it never runs twice at once. A dead letter
-- keeps its own attempts, tags and payload in the dead letters hash (a
-- record as a rerun's, its attempts for the due time): the same id may be
-- queued or leased again beside it. Why an attempt failed (a nack's
-- reason, or 'lease ran out') is the task's until it ends, and goes with it
-- to the dead letters; a task without attempts has none (a failure left
-- behind by the seed's pop is not read).
--
-- Every script reads and checks first and writes last (need.lua):
-- queue_need() checks the keys it will write before its first write.

local QUEUE_TYPES = {'zset', 'hash', 'hash', 'zset', 'hash', 'hash', 'zset', 'hash', 'list', 'hash', 'hash', 'hash', 'hash', 'zset', 'hash', 'list', 'hash', 'hash', 'hash', 'hash'}

-- Checks the types of the keys KEYS[i], i in ... (need.lua).
local function queue_need(...)
  for _, i in ipairs({...}) do
    need_type(KEYS[i], QUEUE_TYPES[i])
  end
end

-- A consumer's term as the script takes it: its own value, or '~<value>',
-- its default, which the term a producer stored with the queue (`stored`,
-- a field of the stats hash: lease::set_terms) replaces.
local function queue_term(arg, stored)
  if string.sub(arg, 1, 1) ~= '~' then return tonumber(arg) end
  return tonumber(stored) or tonumber(string.sub(arg, 2))
end

-- Whether KEYS[i] exists, checking its type as queue_need does.
local function queue_has(i)
  return need_exists(KEYS[i], QUEUE_TYPES[i])
end

-- The scores of ids (a list) in the zset KEYS[i] (queue_zscores).
local function queue_scores(i, ids)
  return queue_zscores(KEYS[i], ids)
end

-- Groups. A task enqueued with a group has it in its stored tags
-- (queue_tags.lua), so the group goes wherever the tags go (reruns, dead
-- letters, moves, recent attempts), and so does the W3C trace context of
-- the span that enqueued the task, when telemetry is on
-- (src/telemetry/queue.rs).
--
-- reserve() takes the tasks of a grouped queue in turn across
-- its groups (queue_reserve.lua): each group's queued tasks are hinted in
-- a list of their own, '<consumer key prefix>group:<group>' (ids in the
-- order they were queued; a key the script names, in the declared keys'
-- slot by construction, as line.lua's), and KEYS[14] holds the groups,
-- scored by their last turn (0: none yet). A hint is advice, the queue
-- zset the truth: reserve() checks each hint against it (a hint of a task
-- removed, popped or leased since is dropped there, one of a task not due
-- yet goes to the list's end), and takes what the hints do not give from
-- the queue itself, so a task without a hint is never lost. An id may be
-- hinted twice (enqueued again with another due time): the queue has one
-- task of it, taken once. In a grouped queue (KEYS[14] exists) a task
-- without a group is in the group ''.
--
-- A run's consumer key prefix and whether the queue is grouped are kept in
-- need_run.groups (need.lua): the scripts that may hint set them first
-- (queue_groups).

-- Sets the consumer key prefix p of this run's hints, and reads whether
-- the queue is grouped (KEYS[14] exists; its type checked): each script
-- that may hint calls it before its first write.
local function queue_groups(p)
  local grouped = queue_has(14)
  need_run.groups = {p = p, grouped = grouped,
    counting = grouped and redis.call('EXISTS', p .. 'group-count') == 1}
end

-- Adds n to the queued tasks of group g, when the queue counts them
-- (queue_group_count.lua; a queue grouped by a release before it does not).
local function queue_counted(g, n)
  if need_run.groups.counting then group_count(need_run.groups.p, KEYS[14], KEYS[10], g, n) end
end

-- The queue becomes grouped now: from now on it counts each group's queued
-- tasks, those it holds already (n, all without a group) in the group ''.
local function queue_start_counting(n)
  need_run.groups.counting = true
  redis.pcall('DEL', need_run.groups.p .. 'group-count')
  if n > 0 then redis.pcall('HSET', need_run.groups.p .. 'group-count', '', string.format('%d', n)) end
end

-- Whether the queue is grouped (queue_groups read it).
local function queue_grouped()
  return need_run.groups.grouped
end

-- The key of the hints of group (queue_groups set the prefix).
local function queue_group_key(group)
  return need_run.groups.p .. 'group:' .. group
end

-- The tasks a queue holds when it becomes grouped have no hint (a task
-- without a group has none in a queue without groups): they are hinted to
-- the group '', as a task without a group enqueued since is, the earliest
-- first, QUEUE_UNHINTED a step, up to the latest of them. The first step
-- is the enqueue's that groups the queue; each reserve takes the next one
-- (queue_reserve.lua) while the stats hash's 'unhinted' says where the
-- next starts. So they take the group ''s turns, however busy the groups
-- are. (Tasks taken out between two steps may make a step pass over a
-- task due at the same time as the last one hinted: unhinted, it is taken
-- all the same when its group's hints run out, queue_reserve.lua.)
local QUEUE_UNHINTED = 1000

-- One step (above): hints QUEUE_UNHINTED of the tasks due from fromText
-- (the first `skip` due then were hinted already) up to untilText, but
-- those of a group; notes where the next step starts ('unhinted': '<due>
-- <skip> <until>'), or that the steps are done.
local function queue_unhinted_step(fromText, skip, untilText)
  local chunk = redis.call('ZRANGEBYSCORE', KEYS[1], fromText, untilText,
    'WITHSCORES', 'LIMIT', string.format('%d', skip), QUEUE_UNHINTED)
  local ids = {}
  for i = 1, #chunk, 2 do ids[#ids + 1] = chunk[i] end
  local tags = #ids > 0 and queue_has(13) and redis.call('HMGET', KEYS[13], unpack(ids)) or {}
  local hinted = {}
  for i, id in ipairs(ids) do
    if not tags_group(tags[i]) then hinted[#hinted + 1] = id end
  end
  if #hinted > 0 then
    redis.pcall('RPUSH', queue_group_key(''), unpack(hinted))
    redis.call('ZADD', KEYS[14], 'NX', '0', '')
  end
  if #ids < QUEUE_UNHINTED then
    redis.call('HDEL', KEYS[10], 'unhinted')
    return
  end
  -- (The next step starts at the last due time, past those hinted then.)
  local last, at = chunk[#chunk], 0
  for i = #chunk, 2, -2 do
    if chunk[i] ~= last then break end
    at = at + 1
  end
  if last == fromText then at = at + skip end
  redis.call('HSET', KEYS[10], 'unhinted', last .. ' ' .. string.format('%d', at) .. ' ' .. untilText)
end

-- The latest due time of the queue's tasks but id (false: none).
local function queue_latest_but(id)
  local top = redis.call('ZREVRANGE', KEYS[1], 0, 1, 'WITHSCORES')
  for i = 1, #top, 2 do
    if top[i] ~= id then return top[i + 1] end
  end
  return false
end

-- Hints id, just queued, to its group (from its stored tags); none when
-- neither it nor the queue is grouped. A hint key of another type
-- (written by hand) takes no hint: reserve() finds the task anyway.
local function queue_hint(id, tags)
  local group = tags_group(tags)
  if not group then
    if not queue_grouped() then return end
    group = ''
  end
  local latest = not queue_grouped() and queue_latest_but(id)
  if not queue_grouped() then queue_start_counting(redis.call('ZCARD', KEYS[1]) - 1) end
  redis.pcall('RPUSH', queue_group_key(group), id)
  redis.call('ZADD', KEYS[14], 'NX', '0', group)
  need_run.groups.grouped = true
  queue_counted(group, 1)
  -- (Grouped now: the tasks it held before.)
  if latest then queue_unhinted_step('-inf', 0, latest) end
end

-- Group limits (queue_flow.lua): a grouped queue may hold each group but
-- the group '' to a number of leased tasks (the stats hash's field
-- 'groupConcurrency'), to a rate ('groupRate', as 'rate' in
-- queue_rate.lua) and for a time (a group's throttle). While it has a
-- group concurrency, KEYS[17] counts each group's leased tasks (a field
-- per group that has some, by the group the task's stored tags name):
-- reserve() adds those it leases, every lease end takes them off
-- (queue_settle, queue_ack). A group's rate and throttle keep their state
-- in keys named from the consumer key prefix, as hints are:
-- '<p>group-rate:<group>' (the bucket's arrival time; gone once the
-- bucket is full again) and '<p>group-held:<group>' (the server time the
-- throttle ends, in ms; gone then). The stats hash's 'groupHeld' is the
-- latest end a group's throttle was given, so reserve() looks for them
-- only while one may last.
local QUEUE_GROUP_RATE, QUEUE_GROUP_HELD = 'group-rate:', 'group-held:'

-- The tasks leased when a group concurrency is set are counted in steps
-- (queue_flow.lua), each its own script: while the steps go through the
-- leased zset, a task of a group counted (by a step, or by the reserve
-- that leased it since) has a mark in KEYS[17], the field '\0<id>' (no
-- group holds a control byte), and its lease's end takes it off its
-- group's count only when it has one; the steps then take the marks
-- away. The stats hash's 'groupConcurrency' says where they are:
-- '<limit>', '<limit> s<cursor>' (going through the leased tasks: ZSCAN)
-- or '<limit> u<cursor>' (taking the marks away: HSCAN).
local QUEUE_MARK = '\0'

-- The group concurrency, and where its counting steps are ('s', 'u' or
-- ''; the cursor), from the stats hash's 'groupConcurrency' as read.
local function queue_concurrency(value)
  local limit, phase, cursor = string.match(value or '', '^(%d+) ?(%a?)(%d*)$')
  return tonumber(limit), phase or '', cursor
end

-- Reads whether this run counts leased tasks per group, from the stats
-- hash's 'groupConcurrency' as read (false: unset), checking KEYS[17]'s
-- type when it does: each script that ends leases calls it before its
-- first write.
local function queue_counting(value)
  local limit, phase = queue_concurrency(value)
  need_run.counting = limit and limit > 0 and limit or false
  need_run.marks = need_run.counting and phase ~= '' and phase
  if need_run.counting then queue_need(17) end
end

-- Takes the n tasks ids[1..n], whose stored tags are tags[1..n] (false:
-- none), off their groups' leased counts, when counted (queue_counting):
-- their leases end. Returns whether one of those groups was at its
-- concurrency (so a task of it may go now).
local function queue_unlease(ids, tags, n)
  local limit = need_run.counting
  if not limit then return false end
  local per, freed = {}, false
  for i = 1, n do
    local g = tags_group(tags[i])
    if g and g ~= '' then
      -- (While the steps count: only a task counted, which has a mark.)
      local counted = not need_run.marks or redis.call('HDEL', KEYS[17], QUEUE_MARK .. ids[i]) == 1
        or need_run.marks == 'u'
      if counted then per[g] = (per[g] or 0) + 1 end
    end
  end
  for g, k in pairs(per) do
    local left = redis.call('HINCRBY', KEYS[17], g, string.format('%d', -k))
    if left <= 0 then redis.call('HDEL', KEYS[17], g) end
    freed = freed or left + k >= limit
  end
  return freed
end

-- Whether a task due at due takes the place of one of its id due at old,
-- under policy (keep | replace | earliest | latest).
local function queue_wins(policy, due, old)
  return policy == 'replace'
    or (policy == 'earliest' and due < old)
    or (policy == 'latest' and due > old)
end

-- Sets field of hash to value, or removes it when value is false.
local function queue_hset_or_del(hash, field, value)
  if value then
    redis.call('HSET', hash, field, value)
  else
    redis.call('HDEL', hash, field)
  end
end

-- Queues id (neither queued nor leased) due at dueText as a new task: its
-- payload and tags (or none), no attempts.
local function queue_add(id, dueText, payload, tags)
  queue_add_to(KEYS[1], KEYS[2], KEYS[3], id, dueText, payload)
  queue_hset_or_del(KEYS[13], id, tags)
  queue_hint(id, tags)
end

-- Enqueues id while it is leased: it runs after the lease ends. The policy
-- decides against a rerun already waiting, as against a queued task.
-- Returns 1 (added), 2 (updated) or 0 (ignored).
local function queue_rerun(id, due, dueText, payload, policy, tags)
  local old = redis.call('HGET', KEYS[6], id)
  local status = 1
  if old then
    if not queue_wins(policy, due, tonumber((queue_task_fields(old))) or 0) then
      return 0
    end
    status = 2
  end
  redis.call('HSET', KEYS[6], id, queue_record(dueText, tags or false, payload or false))
  return status
end

-- Deletes what the tasks ids (a list) leave behind when they end or are
-- removed: their payloads, attempts, last failures and tags, one command
-- per key.
local function queue_forget(ids)
  redis.call('HDEL', KEYS[2], unpack(ids))
  redis.call('HDEL', KEYS[3], unpack(ids))
  redis.call('HDEL', KEYS[11], unpack(ids))
  redis.call('HDEL', KEYS[13], unpack(ids))
  if KEYS[20] then redis.call('HDEL', KEYS[20], unpack(ids)) end
end

-- Workflows (flow.rs, flow_add.lua): a child's link to its parent is its
-- record in KEYS[18] (queue_record: the parent queue's name, partition
-- and partition count, the parent's id, its flow's token and the child's
-- name for it, '<queue>/<id>'). When the child ends (acked, a dead letter,
-- or removed) the link goes and a record of the end takes its place in
-- KEYS[19] (the link's fields, then the outcome and the child's result or
-- why it died), which the caller hands to the parent's slot
-- (flow_settle.lua) and then forgets (flow_read.lua): a step that is
-- idempotent, so whoever finds the record may run it again.
-- Whether the queue has links, checking the types of KEYS[18] and
-- KEYS[19] (each script that ends tasks calls it before its first write).
local function queue_linked()
  if need_run.linked == nil then
    need_run.linked = KEYS[18] ~= nil and need_exists(KEYS[18], 'hash')
    if need_run.linked then
      need_type(KEYS[19], 'hash')
      -- The parents' hashes are theirs: a wrong type there fails the
      -- parents' own step (flow_settle.lua), never this one.
      if need_run.parents then
        for k = 21, 22 do
          local t = redis.call('TYPE', KEYS[k])['ok']
          if t ~= 'none' and t ~= 'hash' then need_run.parents = nil end
          need_read(KEYS[k])
        end
      end
    end
  end
  return need_run.linked
end

-- The queue (or partition) of parents whose hashes are KEYS[21] (waiting
-- parents) and KEYS[22] (their children's ends), in this slot: the acks
-- of its children count their ends in place (queue_flow_end), the caller
-- having guessed it (name, part and parts as the links name it).
local function queue_parents(name, part, parts)
  if name ~= '' then need_run.parents = {name, part, parts} end
end

-- The ends of the tasks ids (a list) that are children: outcome ('acked',
-- 'dead' or 'removed') and values[i] (their results, or why they died; false:
-- none). An acked child of the parents in KEYS[21] and KEYS[22]
-- (queue_parents) is counted there at once, unless it is the end that
-- releases its parent. Any other end is relayed to the caller
-- (queue_relayed), which hands it on at once: ('ended', the child's id),
-- then ('', field) for the record as stored and each of its 8 fields, the
-- value as '' or '1' .. value.
local function queue_flow_end(ids, outcome, values)
  if not queue_linked() or #ids == 0 then return end
  local links = redis.call('HMGET', KEYS[18], unpack(ids))
  local here, gone = need_run.parents, {}
  for i, id in ipairs(ids) do
    local link = links[i]
    if link then
      local name, part, parts, parent, token, child = queue_fields(link)
      gone[#gone + 1] = id
      local value = values[i] or false
      if child and here and outcome == 'acked' and name == here[1] and part == here[2]
          and parts == here[3] then
        local verdict = flow_end(KEYS[21], KEYS[22], parent, token, child, outcome, value, false)
        if verdict == 'waits' or verdict == 'stale' then child = false end
      end
      if child then
        local record = queue_record(name, part, parts, parent, token, child, outcome, value)
        redis.call('HSET', KEYS[19], id, record)
        need_run.ended = true
        queue_relay('ended', id)
        for _, field in ipairs({record, name, part, parts, parent, token, child, outcome,
            value and ('1' .. value) or ''}) do
          queue_relay('', field)
        end
      end
    end
  end
  if #gone > 0 then redis.call('HDEL', KEYS[18], unpack(gone)) end
end

-- What waits for the caller: 1 when children ended here wait for their
-- parents' step (this run's, or an earlier run's whose caller went before
-- it was done), plus 2 when flows across Cluster slots are being made from
-- this queue (KEYS[21], given on a Cluster: their records, flow_stage.lua),
-- for the caller to finish any that stalled.
local function queue_ended()
  local n = 0
  if need_run.ended or (KEYS[19] and redis.call('EXISTS', KEYS[19]) == 1) then n = 1 end
  if KEYS[21] and redis.call('EXISTS', KEYS[21]) == 1 then n = n + 2 end
  return n
end

-- Ends the lease of id (its token checked, or run out): the task is done
-- ('done'), due again at atText ('retry'), or a dead letter since atText
-- ('dead'); reason (or false) says why a retried or dead task failed. A
-- rerun enqueued meanwhile then takes the task's place in the queue (it is
-- the newer task: it replaces a retry, and starts without attempts or
-- failure). rerun: the task's rerun as the caller read it (false: none),
-- or nil to read it here. Returns the due time of what was queued, or nil,
-- and whether the task's group was at its concurrency (queue_unlease).
local function queue_settle(id, outcome, atText, reason, rerun)
  local freed = need_run.counting and queue_unlease({id}, {redis.call('HGET', KEYS[13], id)}, 1)
  redis.call('ZREM', KEYS[4], id)
  redis.call('HDEL', KEYS[5], id)
  if outcome == 'dead' then
    local attempts = tonumber(redis.call('HGET', KEYS[3], id)) or 0
    redis.call('ZADD', KEYS[7], atText, id)
    redis.call('HSET', KEYS[8], id, queue_record(string.format('%d', attempts),
      redis.call('HGET', KEYS[13], id), redis.call('HGET', KEYS[2], id)))
    queue_hset_or_del(KEYS[12], id, reason)
    queue_flow_end({id}, 'dead', {reason})
  end
  if rerun == nil then rerun = redis.call('HGET', KEYS[6], id) end
  if rerun then
    redis.call('HDEL', KEYS[6], id)
    redis.call('HDEL', KEYS[11], id)
    local dueText, tags, payload = queue_task_fields(rerun)
    queue_add(id, dueText, payload, tags)
    return tonumber(dueText) or 0, freed
  end
  if outcome == 'retry' then
    redis.call('ZADD', KEYS[1], atText, id)
    queue_hset_or_del(KEYS[11], id, reason)
    queue_hint(id, redis.call('HGET', KEYS[13], id))
    return tonumber(atText), freed
  end
  queue_forget({id})
  return nil, freed
end

-- Removes the task waiting under id: queued (due now or later), or
-- enqueued again while it runs (its rerun). A leased task stays with its
-- worker. Returns 1 when there was one, else 0.
local function queue_drop(id)
  -- (Its group's hint stays: reserve() drops it when it comes to it. Its
  -- group's count goes down: the caller called queue_groups.)
  if redis.call('ZREM', KEYS[1], id) == 1 then
    if need_run.groups.counting then queue_counted(tags_group(redis.call('HGET', KEYS[13], id)) or '', -1) end
    queue_forget({id})
    -- (A child removed ends for its parent, when the caller passed the
    -- keys of workflows: a move carries its tasks on instead.)
    queue_flow_end({id}, 'removed', {})
    return 1
  end
  return redis.call('HDEL', KEYS[6], id)
end

-- The dead letter of id, if it is one: its attempts, payload (or false),
-- whether its fields are the task's own (below), why it died (or false)
-- and its tags (or false).
-- A dead letter of a release before the dead letters hash kept them in the
-- task's own fields; they are its while the id is neither queued nor leased.
local function queue_grave(id)
  if not redis.call('ZSCORE', KEYS[7], id) then return nil end
  local grave = redis.call('HGET', KEYS[8], id)
  if grave then
    local attempts, tags, payload = queue_task_fields(grave)
    return tonumber(attempts) or 0, payload, false, redis.call('HGET', KEYS[12], id), tags
  end
  if redis.call('ZSCORE', KEYS[1], id) or redis.call('ZSCORE', KEYS[4], id) then
    return 0, false, false, false, false
  end
  return tonumber(redis.call('HGET', KEYS[3], id)) or 0, redis.call('HGET', KEYS[2], id), true, false, false
end

-- Before id is queued anew: an old dead letter's fields (see queue_grave)
-- move to the dead letters hash, so the new task does not take them.
local function queue_keep_grave(id)
  local attempts, payload, old = queue_grave(id)
  if old then
    redis.call('HSET', KEYS[8], id, queue_record(string.format('%d', attempts), false, payload or false))
  end
end

-- Removes the dead letter of id (old: its fields are the task's own, see
-- queue_grave).
local function queue_unbury(id, old)
  redis.call('ZREM', KEYS[7], id)
  redis.call('HDEL', KEYS[8], id)
  redis.call('HDEL', KEYS[12], id)
  if old then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
  end
end

-- Wakes consumers for a task queued due at due (seconds): one when it is
-- due by now, else the first in line sets its timer by it.
local function queue_wake_for(due, now, p, ms)
  if due <= now then
    queue_wake(KEYS[9], p, 1, false, ms)
  else
    queue_wake(KEYS[9], p, 0, true, ms)
  end
end

-- Wakes the waiting consumers as a resume does: one per task due now, and
-- the first in line for the tasks due later.
local function queue_wake_due(now, p, ms)
  local ready = redis.call('ZCOUNT', KEYS[1], '-inf', string.format('%.17g', now))
  queue_wake(KEYS[9], p, ready, redis.call('ZCARD', KEYS[1]) > ready, ms)
end

-- The recent attempts (KEYS[16], a list, newest first): a record for each
-- attempt that ended with an ack, a nack, a bury or a lease that ran out
-- (queue_recent_record). The list keeps the queue's last `recentKeep`
-- records (stats hash; default 100, 0: none kept), only as many of the
-- newest as fit in `recentBytes` bytes when that is set (the records'
-- bytes, counted in the field `recentSize` while it is), and goes when
-- none was added for `recentMs` ms (default an hour); a reader shows none
-- older.
local QUEUE_RECENT_KEEP, QUEUE_RECENT_MS = 100, 3600000
local QUEUE_RECENT_BYTES_MAX = 2 ^ 40

-- The queue's terms for its recent attempts, from the stats hash's fields
-- recentKeep, recentMs and recentBytes as read (false: not set): how many
-- are kept (0: none), for how long, in ms, and the most bytes their
-- records take (0: no bound).
local function queue_recent_terms(keep, ms, bytes)
  keep, ms, bytes = tonumber(keep) or QUEUE_RECENT_KEEP, tonumber(ms) or QUEUE_RECENT_MS, tonumber(bytes) or 0
  -- (Whole numbers in range whatever a hand wrote there.)
  keep = keep == keep and math.floor(math.max(0, math.min(keep, 100000))) or 0
  ms = ms == ms and math.floor(math.max(1, math.min(ms, 31536000000))) or QUEUE_RECENT_MS
  bytes = bytes == bytes and math.floor(math.max(0, math.min(bytes, QUEUE_RECENT_BYTES_MAX))) or 0
  return keep, ms, bytes
end

-- The record (queue_record.lua) of an attempt of id that ended at ms
-- (server time, as text) with outcome: {ms, outcome, its lease token
-- ('<process token>:<rank>.<attempts>@<reserve ms>+<ms it had been due>',
-- queue_reserve.lua) or false, id, its stored tags or false, why it
-- failed or false}. The token goes in whole, unparsed: the reader takes
-- from it the process id and what follows the process's part, and shows
-- nothing else of it.
local function queue_recent_record(ms, outcome, id, token, reason, tags)
  return queue_record(ms, outcome, token or false, id, tags or false, reason or false)
end

-- Adds records (a list, oldest first) to the recent attempts, keeping the
-- last keep of them for ms, within bytes (0: no bound; queue_recent_terms).
-- The key's type is checked before the caller's first write
-- (queue_need(16)).
local function queue_recent(records, keep, ms, bytes)
  if keep <= 0 or #records == 0 then return end
  local n = redis.call('LPUSH', KEYS[16], unpack(records))
  if bytes > 0 then
    -- (A list of only these records was gone: its count starts again.)
    local size = n > #records and tonumber(redis.call('HGET', KEYS[10], 'recentSize')) or 0
    for _, record in ipairs(records) do size = size + #record end
    while n > 0 and (n > keep or size > bytes) do
      size = size - #redis.call('RPOP', KEYS[16])
      n = n - 1
    end
    redis.call('HSET', KEYS[10], 'recentSize', string.format('%d', math.max(size, 0)))
  else
    redis.call('LTRIM', KEYS[16], 0, keep - 1)
  end
  if n > 0 then redis.call('PEXPIRE', KEYS[16], string.format('%d', ms)) end
end

-- Finishes the tasks whose lease is still the caller's (ids and lease
-- tokens in ARGV, from index `from` on: id, token, id, token, ...) at
-- server time now (nil: read when needed): a worker whose lease ran out
-- and was handed to another cannot ack. A rerun enqueued while a task ran
-- is queued now (queue_settle), waking a consumer (consumer key prefix p,
-- wake-ups waiting ms for their consumer). KEYS[15]: the tasks each worker
-- acked (queue_workers.lua), counted for `worker`. Each finished attempt
-- is recorded (queue_recent) under the terms recent ({keep, ms}, as the
-- caller read them, and the caller called queue_counting; nil: read here).
-- A group at its concurrency that an ack frees wakes a consumer. Returns
-- the ids finished, as a set, whether a rerun was queued, and whether a
-- group at its concurrency was freed.
local function queue_ack(from, now, p, ms, worker, recent, results)
  local ids, tokens = {}, {}
  for i = from, #ARGV, 2 do
    ids[#ids + 1] = ARGV[i]
    tokens[#tokens + 1] = ARGV[i + 1]
  end
  local mine, mineTokens, finished = {}, {}, {}
  if #ids == 0 then return finished end
  local held = redis.call('HMGET', KEYS[5], unpack(ids))
  for i, id in ipairs(ids) do
    if not finished[id] and held[i] == tokens[i] then
      finished[id] = true
      mine[#mine + 1] = id
      mineTokens[#mine] = tokens[i]
    end
  end
  if #mine == 0 then return finished end
  need_read(KEYS[5])
  -- The reruns, read before any write: only a rerun queues a task (the
  -- queue's and the line's types need checking only then).
  local reruns = redis.call('HMGET', KEYS[6], unpack(mine))
  local any = false
  for i = 1, #mine do any = any or reruns[i] ~= false end
  need_read(KEYS[6])
  if not recent then
    local terms = need_call('hash', 'HMGET', KEYS[10], 'recentKeep', 'recentMs', 'groupConcurrency', 'recentBytes')
    recent = {queue_recent_terms(terms[1], terms[2], terms[4])}
    queue_counting(terms[3])
  end
  local records = {}
  now = now or queue_now()
  -- The tasks' tags (tags[i]: mine[i]'s), read only from a queue whose
  -- producers gave some, in one command: for the records (only the last
  -- `keep` would stay) and, all of them, for the groups' leased counts.
  local first = need_run.counting and 1 or math.max(1, #mine - recent[1] + 1)
  local tags = {}
  if (recent[1] > 0 or need_run.counting) and queue_has(13) then
    local got = redis.call('HMGET', KEYS[13], unpack(mine, first))
    for i = first, #mine do tags[i] = got[i - first + 1] end
  end
  if recent[1] > 0 then
    local ended = string.format('%.0f', math.floor(now * 1000))
    local from = math.max(1, #mine - recent[1] + 1)
    for i = from, #mine do
      records[i - from + 1] = queue_recent_record(ended, 'acked', mine[i], mineTokens[i], false, tags[i])
    end
    queue_need(16)
  end
  queue_need(2, 3, 4, 10, 11, 13)
  if need_run.counting then queue_need(9) end
  if any then
    queue_need(1, 9)
    -- A rerun queued is hinted to its group.
    queue_groups(p)
  end
  queue_linked()
  -- The first write, and so the check of its key's type (need_call).
  need_call(QUEUE_TYPES[15], 'HINCRBY', KEYS[15], worker, string.format('%d', #mine))
  -- A task without a rerun ends with its fields: one command per key for
  -- all of them (queue_settle's 'done').
  local done, doneTags, freed = {}, {}, false
  for i, id in ipairs(mine) do
    if reruns[i] then
      local due, open = queue_settle(id, 'done', nil, nil, reruns[i])
      freed = freed or open
      if due then queue_wake_for(due, now, p, ms) end
    else
      done[#done + 1] = id
      doneTags[#done] = tags[i]
    end
  end
  if #done > 0 then
    freed = queue_unlease(done, doneTags, #done) or freed
    redis.call('ZREM', KEYS[4], unpack(done))
    redis.call('HDEL', KEYS[5], unpack(done))
    queue_forget(done)
  end
  local values = {}
  if results then
    for i, id in ipairs(mine) do values[i] = results[id] end
  end
  queue_flow_end(mine, 'acked', values)
  queue_recent(records, recent[1], recent[2], recent[3])
  queue_count(KEYS[10], now, 'acked', #mine)
  if freed then queue_wake(KEYS[9], p, 1, false, ms) end
  return finished, any, freed
end
