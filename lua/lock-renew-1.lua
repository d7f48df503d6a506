#!lua
--[[
  lock-renew-1: extend a fenced lock held with `token` by ttlMs from Redis's now.

  KEYS[1] lock hash
  ARGV[1] token   ARGV[2] ttlMs   ARGV[3] idleTtlMs

  Returns 1 renewed; 0 not held with that token, or already expired (someone may hold it now)
]]
--@include time
--@include lock

local key = KEYS[1]
local token, ttl, idleTtl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local h = redis.call('HMGET', key, LOCK.token, LOCK.expiresAt)
if h[1] ~= token or (tonumber(h[2]) or 0) <= NOW then return 0 end
redis.call('HSET', key, LOCK.expiresAt, fmt(NOW + ttl))
redis.call('PEXPIRE', key, lock_key_ttl(ttl, idleTtl))
return 1
