#!lua
--[[
  handover-clear-1: remove a handover marker — only the writer's own (by incarnation) unless told otherwise.

  KEYS[1] handover marker hash
  ARGV[1] incarnation ('' = whoever wrote it)

  Returns 1 removed; 0 absent, or written by another incarnation
]]
local inc = redis.call('HGET', KEYS[1], 'inc')
if not inc then return 0 end
if ARGV[1] ~= '' and inc ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
