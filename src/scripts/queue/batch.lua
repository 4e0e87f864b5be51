-- One step of a batch of jobs (src/batch.rs): what Laravel keeps in a
-- row of its job_batches table, kept here with the counts changed in one
-- step, where the database locks the row.
-- KEYS[1] every batch of the name: a sorted set of its ids, all of score
-- 0, so in the order of the ids (time-ordered UUIDs: oldest first)
-- KEYS[2] the finished batches by when they finished (ms)
-- KEYS[3] the unfinished batches by when they were made (ms)
-- KEYS[4] the cancelled batches by when they were made (ms)
-- KEYS[5] the batch's record: a hash of name, options, total, pending,
-- failed, created, cancelled, finished (ms; absent: not yet) and seq (how
-- many jobs failed a first time)
-- KEYS[6] the batch's failed jobs: job id -> seq of its first failure
-- ARGV[1] 'create' | 'read' | 'add' | 'done' | 'failed' | 'finish' |
-- 'cancel' | 'delete' | 'prune'; ARGV[2] the batch's id; then
--   create: ARGV[3] its name, ARGV[4] its options
--   add: ARGV[3] how many jobs (>= 0)
--   done, failed: ARGV[3] the job's id
--   prune: ARGV[3] 'finished' | 'unfinished' | 'cancelled', ARGV[4] ms:
--   deletes the batch when it is one of those, finished (or made, for the
--   other two) before then
-- Returns {1, name, options, total, pending, failed, created, cancelled,
-- finished ('' when not), and for read and create the failed job ids in
-- the order they first failed...} after each step (a deleted batch: its
-- record before), {0} when there is no batch of that id (or, for create,
-- there is one already). Only read lists the failed jobs: a step that
-- counts one costs the same however many failed before.

local all, finished, open, cancelled, record, failures = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local op, id = ARGV[1], ARGV[2]
local FIELDS = {'name', 'options', 'total', 'pending', 'failed', 'created', 'cancelled', 'finished'}

need_type(all, 'zset')
need_type(finished, 'zset')
need_type(open, 'zset')
need_type(cancelled, 'zset')
need_type(failures, 'zset')
local exists = need_exists(record, 'hash')

local function reply()
  local out = {1}
  for i, v in ipairs(redis.call('HMGET', record, unpack(FIELDS))) do out[i + 1] = v or '' end
  if op == 'read' then
    for _, job in ipairs(redis.call('ZRANGE', failures, 0, -1)) do out[#out + 1] = job end
  end
  return out
end

local t = redis.call('TIME')
local now = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))

if op == 'create' then
  if exists then return {0} end
  redis.call('HSET', record, 'name', ARGV[3], 'options', ARGV[4], 'total', 0, 'pending', 0,
    'failed', 0, 'seq', 0, 'created', now)
  redis.call('ZADD', all, 0, id)
  redis.call('ZADD', open, now, id)
  return reply()
end
if not exists then return {0} end

if op == 'read' then return reply() end

local created = redis.call('HGET', record, 'created')
local function forget()
  redis.call('DEL', record, failures)
  redis.call('ZREM', all, id)
  redis.call('ZREM', finished, id)
  redis.call('ZREM', open, id)
  redis.call('ZREM', cancelled, id)
end
local function finish()
  redis.call('HSET', record, 'finished', now)
  redis.call('ZREM', open, id)
  redis.call('ZADD', finished, now, id)
end

if op == 'add' then
  -- As Laravel's: a finished batch given jobs is unfinished again.
  redis.call('HINCRBY', record, 'total', ARGV[3])
  redis.call('HINCRBY', record, 'pending', ARGV[3])
  redis.call('HDEL', record, 'finished')
  redis.call('ZREM', finished, id)
  redis.call('ZADD', open, created, id)
elseif op == 'done' then
  -- A job that failed before and now succeeded is no failed job any more;
  -- the count of failures stays, as Laravel's does.
  redis.call('HINCRBY', record, 'pending', -1)
  redis.call('ZREM', failures, ARGV[3])
elseif op == 'failed' then
  redis.call('HINCRBY', record, 'failed', 1)
  if not redis.call('ZSCORE', failures, ARGV[3]) then
    redis.call('ZADD', failures, redis.call('HINCRBY', record, 'seq', 1), ARGV[3])
  end
elseif op == 'finish' then
  finish()
elseif op == 'cancel' then
  redis.call('HSET', record, 'cancelled', now)
  redis.call('ZADD', cancelled, created, id)
  finish()
elseif op == 'delete' then
  local was = reply()
  forget()
  return was
elseif op == 'prune' then
  local at = redis.call('HGET', record, ARGV[3] == 'finished' and 'finished' or 'created')
  local state = redis.call('HGET', record, ARGV[3] == 'cancelled' and 'cancelled' or 'finished')
  local due = at and tonumber(at) < tonumber(ARGV[4])
  if ARGV[3] == 'unfinished' then due = due and not state else due = due and state end
  if not due then return {0} end
  local was = reply()
  forget()
  return was
end
return reply()
