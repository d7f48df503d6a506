#!lua
--[[
  admin-lead-evict-1: one lead's part of `replica evict`: withdraw the evicted incarnation's
  candidacy, and when it holds the lead, revoke it (holder cleared, fence bumped, standbys woken),
  as admin-lead-revoke-1. Another incarnation's lead is left alone.

  KEYS[1] lead hash
  ARGV[1] evicted incarnation   ARGV[2] wake channel prefix

  Returns { revoked (1|0), fenceBefore|false, fenceAfter|false, candidacyWithdrawn (1|0), wakeRefused|false }
  (wakeRefused: Redis refused a wake-up PUBLISH; the revocation stands)
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write;
  BMC_INVALID_ID when no incarnation is given (InvalidIdError); ERR botmesh corrupt fence at <key>
  when it would revoke and the stored fence is not a decimal integer below 2^53 - 1 (CorruptStateError).
]]
--@include acl
--@include time
--@include wake
--@include lead-fields
--@include lead

local key = KEYS[1]
require_writes(KEYS[1], { 'HSET', 'HDEL', 'PEXPIRE' }) -- refused before any write
local inc, wake = ARGV[1], ARGV[2]
if inc == '' then return redis.error_reply('BMC_INVALID_ID: an incarnation is required') end
local h = redis.call('HMGET', key, LEAD.holder, LEAD.holderIncarnation, LEAD.fence)
if h[1] and h[2] == inc then check_fence(h[3]) end -- a corrupt fence: refused before anything is written
local withdrawn = redis.call('HDEL', key, candidate_field(inc))
if not h[1] or h[2] ~= inc then return { 0, h[3] or false, h[3] or false, withdrawn } end
clear_lead_holder(key)
local revoked = fmt(next_fence(h[3]))
redis.call('HSET', key, LEAD.fence, revoked)
mark_let_go(key, fmt(NOW), 'evicted', nil)
wake_candidates(key, wake)
publish_wake(wake .. inc, '-|' .. key)
return { 1, h[3] or false, revoked, withdrawn, WAKE_REFUSED }
