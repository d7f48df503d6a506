#!lua
--[[
  lead-yield-1: ask the leader of a lead to step down (an operator's `provider yield`). The leader
  learns it at once (pub/sub) or at its next renewal, calls onFollower({ reason: 'yield' }), releases
  and sits out a few seconds so a standby wins. With a target, only that replica may take the lead
  while it stands and the request lasts.

  KEYS[1] lead hash
  ARGV[1] requested by (user@host)   ARGV[2] target replicaId ('' = any standby)
  ARGV[3] request lifetime ms        ARGV[4] expected fence ('' = any)   ARGV[5] wake channel prefix

  Returns
    { 1, leaderReplica, leaderIncarnation, fence, wakeRefused|false }  request recorded, leader woken
                         (wakeRefused: Redis refused the wake-up PUBLISH; the request stands)
    { 0 }                nobody leads it now
    { -1, fence }        the leader's fence is not the expected one (the state changed): nothing done
    { -2 }               the target replica is not standing as a candidate: nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write.
]]
--@include acl
--@include time
--@include wake
--@include lead-fields
--@include lead

local key = KEYS[1]
require_writes(KEYS[1], { 'HSET', 'HDEL' }) -- refused before any write
local by, target, ttl, ifFence, wake = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]

local h = redis.call('HMGET', key, LEAD.holder, LEAD.holderIncarnation, LEAD.fence, LEAD.expiresAt)
if not h[1] or (tonumber(h[4]) or 0) <= NOW then return { 0 } end
if ifFence ~= '' and h[3] ~= ifFence then return { -1, h[3] } end
if target ~= '' and not candidate_standing(key, target) then return { -2 } end
redis.call('HSET', key, LEAD.yieldBy, by, LEAD.yieldExpiresAt, fmt(NOW + ttl), LEAD.yieldAt, fmt(NOW))
if target ~= '' then
  redis.call('HSET', key, LEAD.yieldTarget, target)
else
  redis.call('HDEL', key, LEAD.yieldTarget)
end
publish_wake(wake .. h[2], '-|' .. key)
return { 1, h[1], h[2], h[3], WAKE_REFUSED }
