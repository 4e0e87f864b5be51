-- include: queue_record.lua
-- Reads and forgets the records of workflows (flow.rs; queue_task.lua).
-- KEYS[1] the hash of the records.
-- ARGV[1] 'record': ARGV[2] a field; returns its record's fields (false:
-- none), or false when it has none.
-- ARGV[1] 'waiting': KEYS[1] the waiting parents (flows), KEYS[2] their
-- children (flow-children), ARGV[2] a parent; returns {its record's
-- fields, {outcome, value, ...}: each child's end, in order (false, false:
-- not yet)}, or false when it is not waiting.
-- ARGV[1] 'forget-carried': KEYS[1] a queue's links, KEYS[2] its
-- children's results, ARGV[2] a task, ARGV[3] its link, ARGV[4] its
-- children's results ('': none) as they were read before it moved;
-- deletes each that is still the one given; returns how many.
-- ARGV[1] 'ended': ARGV[2] an HSCAN cursor; returns {next cursor, child
-- id, its record as stored, the record's 8 fields, ...} (queue_task.lua's
-- queue_flow_end: parent queue, partition, partitions, parent id, token,
-- the child's name, outcome, value), up to about 100 children.
-- ARGV[1] 'forget': ARGV[2..] child id, record as stored, ...; removes each
-- record that is still the one given (a child may have ended again under
-- another flow since); returns how many.
local op = ARGV[1]
if op == 'record' then
  local value = need_call('hash', 'HGET', KEYS[1], ARGV[2])
  if not value then return false end
  return {queue_fields(value)}
end
if op == 'waiting' then
  local value = need_call('hash', 'HGET', KEYS[1], ARGV[2])
  if not value then return false end
  local fields = {queue_fields(value)}
  -- The count of children left, kept beside the record (flow_end.lua).
  fields[3] = need_call('hash', 'HGET', KEYS[2], fields[1]) or fields[3]
  local ends = {}
  for i = 7, #fields do
    local e = need_call('hash', 'HGET', KEYS[2], fields[1] .. '\0' .. fields[i])
    local outcome, result = false, false
    if e and e ~= '' then outcome, result = queue_fields(e) end
    ends[#ends + 1] = outcome or false
    ends[#ends + 1] = result or false
  end
  return {fields, ends}
end
if op == 'forget-carried' then
  local n = 0
  for k = 1, 2 do
    local given = ARGV[k + 2]
    if given ~= '' and need_call('hash', 'HGET', KEYS[k], ARGV[2]) == given then
      redis.call('HDEL', KEYS[k], ARGV[2])
      n = n + 1
    end
  end
  return n
end
if op == 'ended' then
  local page = need_call('hash', 'HSCAN', KEYS[1], ARGV[2], 'COUNT', 100)
  local out = {page[1]}
  for i = 1, #page[2], 2 do
    local fields = {queue_fields(page[2][i + 1])}
    if #fields >= 7 then
      out[#out + 1] = page[2][i]
      out[#out + 1] = page[2][i + 1]
      for f = 1, 8 do out[#out + 1] = fields[f] or false end
    end
  end
  return out
end
if op == 'forget' then
  local n = 0
  for i = 2, #ARGV, 2 do
    if need_call('hash', 'HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
      redis.call('HDEL', KEYS[1], ARGV[i])
      n = n + 1
    end
  end
  return n
end
return redis.error_reply('flow_read.lua: unknown op ' .. tostring(op))
