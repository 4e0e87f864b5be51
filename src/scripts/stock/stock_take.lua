-- include: stock.lua
-- Take units of a stock (stock.lua: the keys, arguments and replies).
return stock_take()
