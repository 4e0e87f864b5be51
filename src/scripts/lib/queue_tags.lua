-- The one reader of a task's stored tags in Lua (its writer and the Rust
-- reader are src/queue/mod.rs's Tags): '<tags>[\29<group>][\30<trace>]',
-- the tags space-separated, a group after a '\29' and the W3C trace
-- context of the span that enqueued the task after a '\30' (control
-- bytes, which no tag, group or trace holds). A part added after these
-- must come behind a new control byte that both readers skip.

-- The tags of stored (a string), without the group and trace after them.
local function tags_words(stored)
  return string.match(stored, '^[^\29\30]*')
end

-- The group of stored (false or a string; false: none).
local function tags_group(stored)
  return stored and string.match(stored, '\29([^\30]*)') or false
end
