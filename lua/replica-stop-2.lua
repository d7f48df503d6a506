#!lua
--[[
  replica-stop-2: remove a replica's heartbeat record (and its index entry) at an orderly stop, if it
  is still this incarnation's.

  KEYS[1] replica hash   KEYS[2] replica index zset
  ARGV[1] incarnation    ARGV[2] replicaId

  Returns 1 removed, 0 the record belongs to another incarnation (or is gone)
]]
if redis.call('HGET', KEYS[1], 'inc') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
return 0
