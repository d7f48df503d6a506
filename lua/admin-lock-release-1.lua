#!lua
--[[
  admin-lock-release-1: an operator force-releases a fenced lock (`lock release`). The token is
  cleared (the holder's renewLock answers false from now on) and the fence bumped (next_fence), so
  the next holder's fence is above anything the old holder may still write with.
  Conditioned on what the operator saw: the fence.

  KEYS[1] lock hash
  ARGV[1] expected fence ('' = any)

  Returns
    { 1, oldFence|false, revokedFence, owner|false, expiresAt|false }   released
    { 0, fence|false }   nobody holds the lock: nothing done
    { -1, fence|false, owner|false }   the fence is not the expected one (the state changed): nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write.
]]
--@include acl
--@include time
--@include lock

local key = KEYS[1]
require_writes(KEYS[1], { 'HSET', 'HDEL' }) -- refused before any write
local ifFence = ARGV[1]
local h = redis.call('HMGET', key, LOCK.token, LOCK.fence, LOCK.owner, LOCK.expiresAt)
if not h[1] then return { 0, h[2] or false } end
if ifFence ~= '' and h[2] ~= ifFence then return { -1, h[2] or false, h[3] or false } end
local revoked = fmt(next_fence(h[2]))
redis.call('HDEL', key, LOCK.token, LOCK.expiresAt, LOCK.acquiredAt, LOCK.owner)
redis.call('HSET', key, LOCK.fence, revoked, LOCK.releasedAt, fmt(NOW))
return { 1, h[2] or false, revoked, h[3] or false, h[4] or false }
