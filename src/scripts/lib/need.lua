-- What every script that writes checks first: Redis does not undo a
-- script's writes when a later command fails, so a script reads and checks
-- everything before its first write, and an error leaves every key as it
-- was. The errors name the key (its first 200 bytes, control bytes as '?').

local function need_fail(key, what)
  local name = string.gsub(string.sub(key, 1, 200), '%c', '?')
  error({err = 'WRONGTYPE key ' .. name .. ' ' .. what})
end

-- The keys this run of the script checked (or read): a script writes only
-- the types it checks for, so a key is checked once per run.
local need_checked = {}

-- What a run of the script keeps for itself, new for every run: the
-- helpers a Redis function library defines once keep nothing from one
-- call to the next in their own tables (scripts.rs).
local need_run = {}

-- Records that a command of the type the script keeps in key read it
-- without error: it holds that type, or nothing.
local function need_read(key)
  need_checked[key] = true
end

-- Whether key exists; fails when it holds another type than want
-- (somebody wrote it by hand).
local function need_exists(key, want)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then
    need_fail(key, 'holds a ' .. t .. ', where redislock keeps a ' .. want)
  end
  need_checked[key] = true
  return t ~= 'none'
end

-- Fails when key holds another type than want (checked once per run).
local function need_type(key, want)
  if not need_checked[key] then need_exists(key, want) end
end

-- Sends a command whose first argument is key, as the check of key's type
-- (want) too: for a read, or a script's first write (a command that fails
-- writes nothing). A key of another type fails as need_type fails, naming
-- it; any other error is raised as it came. Returns the command's reply.
local function need_call(want, command, key, ...)
  local reply = redis.pcall(command, key, ...)
  if type(reply) == 'table' and reply.err then
    need_type(key, want)
    error(reply)
  end
  need_checked[key] = true
  return reply
end

-- The whole number that raw (key's value) holds, written as Redis' INCRBY
-- reads one (digits, a '-' before them, no leading zero, within 64 bits):
-- a count that passes here never fails the increment a script makes after
-- its checks ('7.0' is a whole number to Lua, not to INCRBY), and one
-- within 9e18 (Lua's numbers are exact below 2^53; past 9e18 the next
-- increment may overflow 64 bits). Fails when it holds something else.
local function need_units(key, raw)
  local n = tonumber(raw)
  local whole = n and (raw == '0' or string.match(raw, '^%-?[1-9]%d*$'))
  if not whole or math.abs(n) >= 9e18 then
    need_fail(key, 'holds "' .. string.gsub(string.sub(raw, 1, 40), '%c', '?') .. '", '
      .. (whole and 'too large a count' or 'not a whole number'))
  end
  return n
end
