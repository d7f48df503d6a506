#!lua
--[[
  admin-lead-revoke-1: an operator revokes a lead whose holder does not answer (`provider yield
  --force`, and each lead of a replica under `replica evict`). The holder is cleared and the fence
  bumped (next_fence), so the old leader's next renewal answers 'revoked' and whatever checks the
  lead's fence refuses its late writes; the standing candidates are woken to take over at once (the
  old holder too, so a live one learns it now). Its own candidacy is withdrawn. With a target, the
  lead is reserved for that standby while it stands and the reservation lasts (as lead-yield-1).
  Conditioned on what the operator saw: the fence and the holder's incarnation.

  KEYS[1] lead hash
  ARGV[1] expected fence ('' = any)   ARGV[2] expected holder incarnation ('' = any)
  ARGV[3] target replicaId ('' = any standby)   ARGV[4] reservation lifetime ms
  ARGV[5] requested by (user@host)   ARGV[6] wake channel prefix

  Returns
    { 1, oldReplica, oldIncarnation, oldFence, revokedFence, wakeRefused|false }   revoked, standbys
                         woken (wakeRefused: Redis refused a wake-up PUBLISH; the revocation stands)
    { 0, fence|false }   nobody leads it: nothing done
    { -1, fence|false, holderReplica, holderIncarnation|false }
                         the fence or the holder is not the expected one (the state changed): nothing done
    { -2 }               the target replica is not standing as a candidate: nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write.
]]
--@include acl
--@include time
--@include wake
--@include lead-fields
--@include lead

local key = KEYS[1]
require_writes(KEYS[1], { 'HSET', 'HDEL', 'PEXPIRE' }) -- refused before any write
local ifFence, ifInc, target, ttl, by, wake = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]

local h = redis.call('HMGET', key, LEAD.holder, LEAD.holderIncarnation, LEAD.fence)
if not h[1] then return { 0, h[3] or false } end
if (ifFence ~= '' and h[3] ~= ifFence) or (ifInc ~= '' and h[2] ~= ifInc) then
  return { -1, h[3] or false, h[1], h[2] or false }
end
if target ~= '' and not candidate_standing(key, target) then return { -2 } end
clear_lead_holder(key)
local revoked = fmt(next_fence(h[3]))
redis.call('HSET', key, LEAD.fence, revoked)
mark_let_go(key, fmt(NOW), 'revoked', by)
if h[2] then redis.call('HDEL', key, candidate_field(h[2])) end
if target ~= '' then
  redis.call('HSET', key, LEAD.yieldBy, by, LEAD.yieldTarget, target, LEAD.yieldExpiresAt, fmt(NOW + ttl), LEAD.yieldAt,
    fmt(NOW))
else
  redis.call('HDEL', key, LEAD.yieldBy, LEAD.yieldTarget, LEAD.yieldExpiresAt, LEAD.yieldAt)
end
wake_candidates(key, wake)
if h[2] then publish_wake(wake .. h[2], '-|' .. key) end
return { 1, h[1], h[2] or false, h[3] or false, revoked, WAKE_REFUSED }
