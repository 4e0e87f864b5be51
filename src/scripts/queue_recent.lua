-- include: queue_task.lua
-- A queue's recent attempts (queue_recent in queue_task.lua): read them, or
-- set how many are kept and for how long.
-- KEYS: see queue_task.lua (KEYS[10] the stats hash, KEYS[16] the list).
-- ARGV[1] 'list': ARGV[2] most records, ARGV[3] an id ('': any), ARGV[4]
-- a tag ('': any); returns
-- {server time in ms, record, ...}, newest first, none older than the
-- queue's time.
-- ARGV[1] 'keep': ARGV[2] how many (0: none), ARGV[3] for how long, in ms;
-- the records past them go now. Returns 1.
local stats = need_call('hash', 'HMGET', KEYS[10], 'recentKeep', 'recentMs')
local now = math.floor(queue_now() * 1000)
if ARGV[1] == 'keep' then
  queue_need(16)
  local keep, ms = queue_recent_terms(ARGV[2], ARGV[3])
  redis.call('HSET', KEYS[10], 'recentKeep', string.format('%d', keep), 'recentMs', string.format('%d', ms))
  if keep == 0 then
    redis.call('DEL', KEYS[16])
  else
    redis.call('LTRIM', KEYS[16], 0, keep - 1)
    redis.call('PEXPIRE', KEYS[16], string.format('%d', ms))
  end
  return 1
end
local keep, ms = queue_recent_terms(stats[1], stats[2])
local most, id, tag = tonumber(ARGV[2]), ARGV[3], ' ' .. ARGV[4] .. ' '
local any = id == '' and ARGV[4] == ''
local out = {now}
if keep == 0 then return out end
-- Without an id or tag, the first `most` are all it can show.
local records = need_call('list', 'LRANGE', KEYS[16], 0, (any and math.min(keep, most) or keep) - 1)
for _, record in ipairs(records) do
  local at, length, tagged, from = string.match(record, '^(%d+) %S+ %S+ ([%d*]+)/?(%d*) ()')
  at = tonumber(at)
  -- Newest first: the first one too old ends the list (one not of this
  -- shape, written by hand, is passed over).
  if at and at < now - ms then break end
  local last = length == '*' and -1 or from + (tonumber(length) or -1) - 1
  -- (The tags without the group after them: queue_task.lua.)
  local tags = tagged ~= '' and ' ' .. string.match(string.sub(record, last + 1, last + tonumber(tagged)), '^[^\29]*') .. ' '
  if at and (id == '' or string.sub(record, from, last) == id)
    and (tag == '  ' or (tags and string.find(tags, tag, 1, true))) then
    out[#out + 1] = record
    if #out > most then break end
  end
end
return out
