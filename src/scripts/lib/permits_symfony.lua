-- Included after permits_line.lua: the holders are in the format of
-- Symfony's RedisStore (see permits_line.lua).
permits_symfony = true
