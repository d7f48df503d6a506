#!lua
--[[
  handover-set-1: leave a handover marker for an async conversation that is waiting, so the replica
  that takes the chat applies a fallback. "since" is kept while the same conversation keeps waiting.

  KEYS[1] handover marker hash
  ARGV[1] conversation name   ARGV[2] replicaId   ARGV[3] incarnation
  ARGV[4] TTL ms ('' = none)  ARGV[5] extra data JSON

  Returns 1
]]
--@include time

local key = KEYS[1]
local prev = redis.call('HMGET', key, 'name', 'inc', 'since')
local since = fmt(NOW)
if prev[1] == ARGV[1] and prev[2] == ARGV[3] and prev[3] then since = prev[3] end
redis.call('DEL', key)
redis.call('HSET', key, 'name', ARGV[1], 'rid', ARGV[2], 'inc', ARGV[3], 'since', since, 'at', fmt(NOW), 'd', ARGV[5])
if ARGV[4] ~= '' then redis.call('PEXPIRE', key, ARGV[4]) end
return 1
