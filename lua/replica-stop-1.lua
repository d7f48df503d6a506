#!lua
--[[
  replica-stop-1: remove a replica's heartbeat record at an orderly stop, if it is still this incarnation's.

  KEYS[1] replica hash
  ARGV[1] incarnation

  Returns 1 removed, 0 the record belongs to another incarnation (or is gone)
]]
if redis.call('HGET', KEYS[1], 'inc') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
