-- The one layout of every stored value that holds several fields of a
-- task: a rerun ('<due>', tags, payload), a dead letter ('<attempts>',
-- tags, payload) and a recent attempt (queue_task.lua). Written by
-- queue_record and read by queue_fields only: MessagePack (the cmsgpack
-- every server's Lua has), the layout's version, then the fields, each a
-- string (any bytes: length-prefixed) or false (none). A value of a release
-- before it is text, which starts with a digit, never with the version's
-- byte: queue_task_fields reads those as that release did.

local QUEUE_RECORD = 1

-- The record of the fields given (strings, or false).
local function queue_record(...)
  return cmsgpack.pack(QUEUE_RECORD, ...)
end

local function queue_fields_of(ok, version, ...)
  if ok and version == QUEUE_RECORD then return ... end
  return nil
end

-- The fields of a record (queue_record), or nil when value is not one.
local function queue_fields(value)
  if string.byte(value) ~= QUEUE_RECORD then return nil end
  -- (A value written by hand that is no MessagePack is not a record.)
  return queue_fields_of(pcall(cmsgpack.unpack, value))
end

-- A rerun's or dead letter's fields: its head (due time or attempts, as
-- text), its stored tags (or false) and its payload (or false). A value of
-- a release before queue_record ('<head>[\t<tags>][ <payload>]', split at
-- its first space as that release did) is read too.
local function queue_task_fields(value)
  local head, tags, payload = queue_fields(value)
  if head then return head, tags, payload end
  local space = string.find(value, ' ', 1, true)
  if space then
    head, payload = string.sub(value, 1, space - 1), string.sub(value, space + 1)
  else
    head, payload = value, false
  end
  local tab = string.find(head, '\t', 1, true)
  if tab then return string.sub(head, 1, tab - 1), string.sub(head, tab + 1), payload end
  return head, false, payload
end
