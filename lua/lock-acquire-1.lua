#!lua
--[[
  lock-acquire-1: take a fenced lock if it is free or its holder's TTL ran out.

  KEYS[1] lock hash (tk: token, f: fence, exp: expiry, g: acquired at, o: owner description, rel: released at)
  ARGV[1] token   ARGV[2] ttlMs   ARGV[3] owner description   ARGV[4] idleTtlMs

  Returns { 1, fence } acquired; { 0, msLeft, fence } held by another token
]]
--@include time
--@include lock

local key = KEYS[1]
local token, ttl, owner, idleTtl = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local h = redis.call('HMGET', key, LOCK.token, LOCK.expiresAt, LOCK.fence)
local exp = tonumber(h[2]) or 0
-- The same call run again (the client re-sends a command whose reply a dropped connection lost).
if h[1] == token and exp > NOW then return { 1, h[3] } end
if h[1] and exp > NOW then return { 0, fmt(exp - NOW), h[3] } end
local fence = fmt(next_fence(h[3]))
redis.call('HSET', key, LOCK.token, token, LOCK.fence, fence, LOCK.expiresAt, fmt(NOW + ttl), LOCK.acquiredAt, fmt(NOW),
  LOCK.owner, owner)
redis.call('HDEL', key, LOCK.releasedAt)
redis.call('PEXPIRE', key, lock_key_ttl(ttl, idleTtl))
return { 1, fence }
