-- include: stock.lua
-- Move units out of one shard of a sharded stock toward the shard a take
-- runs in (docs/decisions/0006-sharded-stock.md): the first step of a
-- move, written in this shard's journal so that a move a crash cut short
-- is finished by whoever reads the journal next.
-- KEYS[1] this shard's units; KEYS[2] its journal (hash: move id ->
-- '<target shard> <units> <ms written>').
-- ARGV[1] units wanted; ARGV[2] the move's id; ARGV[3] the target shard;
-- ARGV[4] age in ms after which a journal entry counts as cut short.
-- Moves ARGV[1] units, or half of what the shard holds if that is more
-- (a drained shard then asks again later, not at each take), or all it
-- holds if that is less; nothing when ARGV[1] is 0. Returns {units moved,
-- {id, target, units, ... of each entry at least ARGV[4] ms old}}.
local units, journal = KEYS[1], KEYS[2]
need_type(journal, 'hash')
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local cut = {}
local entries = redis.call('HGETALL', journal)
for i = 1, #entries, 2 do
  local target, n, at = string.match(entries[i + 1], '^(%d+) (%d+) (%d+)$')
  if at and now - tonumber(at) >= tonumber(ARGV[4]) then
    cut[#cut + 1] = entries[i]
    cut[#cut + 1] = tonumber(target)
    cut[#cut + 1] = tonumber(n)
  end
end
local want = tonumber(ARGV[1])
local raw = redis.call('GET', units)
local left = raw and need_units(units, raw) or 0
local moved = want > 0 and math.min(left, math.max(want, math.ceil(left / 2))) or 0
if moved > 0 then
  redis.call('DECRBY', units, moved)
  redis.call('HSET', journal, ARGV[2], string.format('%s %d %d', ARGV[3], moved, now))
  stock_expire_with(units, journal)
end
return {moved, cut}
