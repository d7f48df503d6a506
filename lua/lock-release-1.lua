#!lua
--[[
  lock-release-1: release a fenced lock held with `token` (its fence stays, for the next holder).

  KEYS[1] lock hash
  ARGV[1] token

  Returns 1 released; 0 not held with that token
]]
--@include time
--@include lock

local key = KEYS[1]
if redis.call('HGET', key, LOCK.token) ~= ARGV[1] then return 0 end
redis.call('HDEL', key, LOCK.token, LOCK.expiresAt, LOCK.acquiredAt, LOCK.owner)
redis.call('HSET', key, LOCK.releasedAt, fmt(NOW))
return 1
