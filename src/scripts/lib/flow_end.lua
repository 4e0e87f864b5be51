-- include: queue_record.lua
-- A child's end counted in its parent's record (flow_add.lua's layout),
-- shared by the parent's step (flow_settle.lua) and the ack that counts
-- an end in place when its parent's hashes are in the script
-- (queue_task.lua's queue_flow_end).

-- The end (outcome, value or false) of the child `name` of the parent id
-- of the flow `token`, in the hashes flows (waiting parents) and children
-- (their children's ends, and under the field token the count of those
-- not ended yet): 'stale' when it does not count (no waiting parent of
-- that flow, or counted before); 'waits' when counted and the parent
-- waits for more; 'go' (run it) or 'bury' (to the dead letters) when it
-- ends the wait, with the parent's record's fields: counted only when
-- `release` (the caller then releases the parent), else untouched. The
-- parent's record (all its children's names) is read only when a child
-- failed or the wait ends, and never written here.
local function flow_end(flows, children, id, token, name, outcome, value, release)
  local field = token .. '\0' .. name
  local now = redis.call('HMGET', children, field, token)
  if now[1] ~= '' then return 'stale' end
  local left = tonumber(now[2])
  local fields = nil
  local function read()
    local record = redis.call('HGET', flows, id)
    fields = record and {queue_fields(record)} or {}
    return fields[1] == token
  end
  -- (A parent of a release before the count had it in its record.)
  if (not left or outcome ~= 'acked') and not read() then return 'stale' end
  left = (left or tonumber(fields[3])) - 1
  local failed = outcome ~= 'acked'
  local verdict = 'waits'
  if failed and fields[2] == 'fail' then
    verdict = 'bury'
  elseif left <= 0 or (failed and fields[2] == 'continue') then
    verdict = 'go'
  end
  if verdict ~= 'waits' and not release then return verdict end
  if verdict == 'waits' then
    redis.call('HSET', children, field, queue_record(outcome, value), token, string.format('%d', left))
    return verdict
  end
  redis.call('HSET', children, field, queue_record(outcome, value))
  redis.call('HDEL', children, token)
  if not fields then read() end
  return verdict, fields
end
