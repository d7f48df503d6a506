#!lua
--[[
  lead-release-1: give a lead back (and wake the standing candidates at once), and/or stop standing
  as a candidate for it.

  KEYS[1] lead hash
  ARGV[1] incarnation   ARGV[2] fence held ('' = only withdraw the candidacy)
  ARGV[3] leaseMs       ARGV[4] idleTtlMs     ARGV[5] wake channel prefix

  Returns 1 the lead was released, 0 it was not held with that fence (the candidacy is withdrawn either way)
]]
--@include time
--@include wake
--@include lead-fields
--@include lead

local key = KEYS[1]
local inc, fence = ARGV[1], ARGV[2]
local leaseMs, idleTtl, wake = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]

redis.call('HDEL', key, candidate_field(inc))
if fence == '' then return 0 end
local h = redis.call('HMGET', key, LEAD.holderIncarnation, LEAD.fence, LEAD.yieldBy, LEAD.yieldExpiresAt)
if h[1] ~= inc or h[2] ~= fence then return 0 end
clear_lead_holder(key)
-- let go while an operator's yield request was pending: it yielded (to that request)
if h[3] and (tonumber(h[4]) or 0) > NOW then
  mark_let_go(key, fmt(NOW), 'yielded', h[3])
else
  mark_let_go(key, fmt(NOW), 'released', nil)
end
wake_candidates(key, wake)
touch_lead(key, leaseMs, idleTtl)
return 1
