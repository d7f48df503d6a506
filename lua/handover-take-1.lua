#!lua
--[[
  handover-take-1: read and remove a handover marker in one step (the new owner of a chat applies
  its fallback exactly once).

  KEYS[1] handover marker hash

  Returns the marker's fields as a flat array (empty when there was none)
]]
local all = redis.call('HGETALL', KEYS[1])
if #all > 0 then redis.call('DEL', KEYS[1]) end
return all
