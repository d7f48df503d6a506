#!lua
--[[
  handover-take-1: read and remove a handover marker in one step (the new owner of a chat applies
  its fallback exactly once) — unless it was written by the incarnation named in ARGV[1]: a replica
  that takes its own marker back (its conversation is still in its memory) leaves it in place.

  KEYS[1] handover marker hash
  ARGV[1] incarnation whose marker is left in place ('' = take whoever wrote it)

  Returns {} when there was none; else { 1 taken | 0 left in place, the marker's fields as a flat array… }
]]
--@include handover

local all = redis.call('HGETALL', KEYS[1])
if #all == 0 then return all end
local taken = 1
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], HANDOVER.incarnation) == ARGV[1] then
  taken = 0
else
  redis.call('DEL', KEYS[1])
end
table.insert(all, 1, taken)
return all
