-- What enqueuing a new task takes, wherever the queue's keys sit in KEYS
-- (a queue's own scripts, or a stock's take that enqueues its order).
--
-- A batch of members goes to ZADD in reverse: the members of one score
-- come in ascending order (ZRANGEBYSCORE's, or a caller's ids), and a
-- small sorted set (a listpack, up to 128 members by default) inserts a
-- member after walking past every smaller one, parsing each one's score.
-- In ascending order 100 members cost about 4x what they cost in reverse.

-- The scores of ids (a list) in the zset key, in their order (false: not
-- in it): one ZMSCORE, or a ZSCORE each on a server without it (before
-- Redis 6.2). Checks key's type.
local function queue_zscores(key, ids)
  if #ids == 0 then return {} end
  local scores = redis.pcall('ZMSCORE', key, unpack(ids))
  if type(scores) == 'table' and scores.err then
    need_type(key, 'zset')
    scores = {}
    for j, id in ipairs(ids) do scores[j] = redis.call('ZSCORE', key, id) end
  end
  need_read(key)
  return scores
end

-- Runs command on key with the arguments in list, a thousand at a time.
local function queue_each(command, key, list)
  for from = 1, #list, 1000 do
    redis.call(command, key, unpack(list, from, math.min(#list, from + 999)))
  end
end

-- A batch of new tasks to queue in one command per key
-- (queue_add_batch), from now (the server's time, in seconds).
local function queue_batch(now)
  return {now = now, due = {}, payloads = {}, bare = {}, ids = {}, ready = 0, later = false}
end

-- Adds id to the batch b: due delayText seconds after b.now, with its
-- payload (false: none).
local function queue_batch_add(b, id, delayText, payload)
  local at = b.now + tonumber(delayText)
  b.due[#b.due + 1] = id
  b.due[#b.due + 1] = string.format('%.17g', at)
  b.ids[#b.ids + 1] = id
  if payload then
    b.payloads[#b.payloads + 1] = id
    b.payloads[#b.payloads + 1] = payload
  else
    b.bare[#b.bare + 1] = id
  end
  if at <= b.now then b.ready = b.ready + 1 else b.later = true end
end

-- Queues the batch b's tasks (neither queued nor leased) in the queue
-- whose due times, payloads and attempts are the keys queue, payloads and
-- attempts (members in reverse, as above).
local function queue_add_batch(b, queue, payloads, attempts)
  local reversed = {}
  for x = #b.due, 1, -1 do reversed[#reversed + 1] = b.due[x] end
  queue_each('ZADD', queue, reversed)
  queue_each('HSET', payloads, b.payloads)
  queue_each('HDEL', payloads, b.bare)
  queue_each('HDEL', attempts, b.ids)
end

-- Queues id (neither queued nor leased) in the queue whose due times,
-- payloads and attempts are the keys queue, payloads and attempts, due at
-- dueText, as a new task: its payload (false: none), no attempts. hadPayload
-- and hadAttempts: whether id has a payload or attempts there (false: it
-- has none, nothing to remove; nil: not known).
local function queue_add_to(queue, payloads, attempts, id, dueText, payload, hadPayload, hadAttempts)
  redis.call('ZADD', queue, dueText, id)
  if payload then
    redis.call('HSET', payloads, id, payload)
  elseif hadPayload ~= false then
    redis.call('HDEL', payloads, id)
  end
  if hadAttempts ~= false then redis.call('HDEL', attempts, id) end
end
