#!lua
--[[
  admin-yield-cancel-1: an operator withdraws a pending yield request of a lead, or the reservation a
  targeted request or revocation left (`provider yield --cancel`). The request's fields go and the
  standing candidates are woken, so any standby may take a free lead at once. A leader that has not
  acted on the request yet keeps leading: its next renewal no longer reports it.
  Conditioned on what the operator saw: the request's time, and optionally the lead's fence.

  KEYS[1] lead hash
  ARGV[1] expected request time `yat` ('' = whichever request is pending)
  ARGV[2] expected fence ('' = any)   ARGV[3] wake channel prefix

  Returns
    { 1, requestedBy, target|false, requestedAt|false, fence|false, wakeRefused|false }   withdrawn,
                         candidates woken (wakeRefused: Redis refused a wake-up PUBLISH; it stands)
    { 0, fence|false }   no request is pending: nothing done
    { -1, requestedAt|false, requestedBy, fence|false }   another request, or another fence, than the
                         expected one: nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write.
]]
--@include acl
--@include time
--@include wake
--@include lead-fields
--@include lead

local key = KEYS[1]
require_writes(KEYS[1], { 'HSET', 'HDEL', 'PEXPIRE' }) -- refused before any write
local ifAt, ifFence, wake = ARGV[1], ARGV[2], ARGV[3]

local y = redis.call('HMGET', key, LEAD.yieldBy, LEAD.yieldTarget, LEAD.yieldExpiresAt, LEAD.yieldAt, LEAD.fence)
if not y[1] or (tonumber(y[3]) or 0) <= NOW then return { 0, y[5] or false } end
if (ifAt ~= '' and y[4] ~= ifAt) or (ifFence ~= '' and y[5] ~= ifFence) then
  return { -1, y[4] or false, y[1], y[5] or false }
end
redis.call('HDEL', key, LEAD.yieldBy, LEAD.yieldTarget, LEAD.yieldExpiresAt, LEAD.yieldAt)
wake_candidates(key, wake)
return { 1, y[1], (y[2] ~= '' and y[2]) or false, y[4] or false, y[5] or false, WAKE_REFUSED }
