-- include: queue_task.lua
-- A queue's recent attempts (queue_recent in queue_task.lua): read them, or
-- set how many are kept and for how long.
-- KEYS: see queue_task.lua (KEYS[10] the stats hash, KEYS[16] the list).
-- ARGV[1] 'list': ARGV[2] most records, ARGV[3] an id ('': any), ARGV[4]
-- a tag ('': any); returns
-- {server time in ms, {ms, outcome, lease token or false, id, stored tags
-- or false, reason or false}, ...} (queue_recent_record), newest first,
-- none older than the queue's time.
-- ARGV[1] 'keep': ARGV[2] how many (0: none), ARGV[3] for how long, in ms,
-- ARGV[4] the most bytes of records (0: no bound); the records past them go
-- now. Returns 1.
local stats = need_call('hash', 'HMGET', KEYS[10], 'recentKeep', 'recentMs')
local now = math.floor(queue_now() * 1000)
if ARGV[1] == 'keep' then
  queue_need(16)
  local keep, ms, bytes = queue_recent_terms(ARGV[2], ARGV[3], ARGV[4])
  redis.call('HSET', KEYS[10], 'recentKeep', string.format('%d', keep), 'recentMs', string.format('%d', ms))
  redis.call('HDEL', KEYS[10], 'recentBytes', 'recentSize')
  if bytes > 0 and keep > 0 then
    -- The newest records that fit, and their bytes counted from here on.
    local size = 0
    for i, record in ipairs(redis.call('LRANGE', KEYS[16], 0, keep - 1)) do
      if size + #record > bytes then
        keep = i - 1
        break
      end
      size = size + #record
    end
    redis.call('HSET', KEYS[10], 'recentBytes', string.format('%d', bytes), 'recentSize', string.format('%d', size))
  end
  if keep == 0 then
    redis.call('DEL', KEYS[16])
  else
    redis.call('LTRIM', KEYS[16], 0, keep - 1)
    redis.call('PEXPIRE', KEYS[16], string.format('%d', ms))
  end
  return 1
end
-- A record's fields (queue_recent_record), or nil when it is none. One a
-- release before queue_record wrote is text: '<ms> <outcome> <token or
-- -> <id bytes>[/<tags bytes>] <id>[<tags>][<reason>]', or '... * <id>'.
local function fields(record)
  local at, outcome, token, id, tags, reason = queue_fields(record)
  if at then return at, outcome, token, id, tags, reason end
  local length, tagged, from
  at, outcome, token, length, tagged, from = string.match(record, '^(%d+) (%S+) (%S+) ([%d*]+)/?(%d*) ()')
  if not at then return nil end
  if token == '-' then token = false end
  if length == '*' then return at, outcome, token, string.sub(record, from), false, false end
  local last = from + tonumber(length) - 1
  local stop = last + (tonumber(tagged) or 0)
  if stop > #record then return nil end
  tags = tagged ~= '' and string.sub(record, last + 1, stop)
  return at, outcome, token, string.sub(record, from, last), tags, stop < #record and string.sub(record, stop + 1)
end

local keep, ms = queue_recent_terms(stats[1], stats[2])
local most, id, tag = tonumber(ARGV[2]), ARGV[3], ' ' .. ARGV[4] .. ' '
local out = {now}
if keep == 0 then return out end
-- Without an id or tag, the first `most` are all it can show.
local any = id == '' and ARGV[4] == ''
local records = need_call('list', 'LRANGE', KEYS[16], 0, (any and math.min(keep, most) or keep) - 1)
for _, record in ipairs(records) do
  local at, outcome, token, of, tags, reason = fields(record)
  local t = tonumber(at)
  -- Newest first: the first one too old ends the list (one not of this
  -- shape, written by hand, is passed over).
  if t and t < now - ms then break end
  if t and type(of) == 'string' and (id == '' or of == id)
    and (tag == '  ' or (type(tags) == 'string' and string.find(' ' .. tags_words(tags) .. ' ', tag, 1, true))) then
    out[#out + 1] = {at, outcome, token, of, tags, reason}
    if #out > most then break end
  end
end
return out
