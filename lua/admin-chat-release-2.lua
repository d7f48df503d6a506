#!lua
--[[
  admin-chat-release-2: an operator revokes the holder of a stuck chat (`chat release`). The holder is
  cleared and the chat's fence bumped (next_fence), so the old holder's next renewal answers
  'revoked' and its late fenced checkpoint writes are refused; then the oldest live ticket is granted
  at once and its replica woken (grant_next), with a fence above the bumped one.
  Conditioned on what the operator saw: the fence and the holder's incarnation.

  KEYS[1] chat state hash       KEYS[2] chat queue zset
  ARGV[1] expected fence ('' = any)   ARGV[2] expected holder incarnation ('' = any)
  ARGV[3] leaseMs of the next grant (its replica confirms on its first poll and extends it to its own)
  ARGV[4] idleTtlMs             ARGV[5] wake channel prefix

  Returns
    { 1, oldReplica, oldIncarnation, oldFence, revokedFence,
         grantedTicket|false, grantedFence|false, grantedReplica|false, grantedIncarnation|false,
         wakeRefused|false }
                         revoked (and granted to the next live ticket, when there is one); wakeRefused
                         is Redis's refusal of a wake-up PUBLISH (see includes/wake.lua), the
                         revocation and grant stand
    { 0, fence|false }   nobody holds the chat: nothing done
    { -1, fence|false, holderReplica|false, holderIncarnation|false }
                         the fence or the holder is not the expected one (the state changed): nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write.
]]
--@include acl
--@include time
--@include wake
--@include chat
--@include turn
--@include admin

local state, queue = KEYS[1], KEYS[2]
require_writes(KEYS[1], { 'HSET', 'HDEL', 'HINCRBY', 'PEXPIRE' }) -- refused before any write
require_writes(KEYS[2], { 'ZREM', 'ZPOPMIN', 'PEXPIRE' })
local ifFence, ifInc = ARGV[1], ARGV[2]
local leaseMs, idleTtl, wake = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]

local h = redis.call('HMGET', state, CHAT.holder, CHAT.holderIncarnation, CHAT.fence)
if not h[1] then return { 0, h[3] or false } end
if (ifFence ~= '' and h[3] ~= ifFence) or (ifInc ~= '' and h[2] ~= ifInc) then
  return { -1, h[3] or false, h[1], h[2] or false }
end
local revoked = revoke_chat_holder(state)
-- Tell the old holder at once (it renews and learns the turn is gone), not only at its next renewal.
if h[2] then publish_wake(wake .. h[2], '-|' .. state) end
local g = grant_next({ state = state, queue = queue, leaseMs = leaseMs, wake = wake, callerTicket = '' })
touch(state, queue, leaseMs, idleTtl)
local gt, gf, gr, gi = granted_fields(state, g)
return { 1, h[1], h[2] or false, h[3] or false, revoked, gt, gf, gr, gi, WAKE_REFUSED }
