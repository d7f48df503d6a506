#!lua
--[[
  lead-acquire-1: take a lead (tryLead, or one round of a campaign) when nobody holds a valid lease.

  KEYS[1] lead hash
  ARGV[1] replicaId   ARGV[2] incarnation   ARGV[3] leaseMs   ARGV[4] idleTtlMs
  ARGV[5] '1' to stand as a candidate (campaign: listed as a standby while not leading), '' for tryLead

  Returns
    { 1, fence, prevReplica|nil, prevIncarnation|nil }   granted: the lease runs leaseMs from now
    { 2, fence, prevReplica|nil, prevIncarnation|nil }   this incarnation already holds it (a grant whose
                                                         reply was lost, asked again): renewed, leaseMs from now
    { 0, holderReplica, holderIncarnation, fence, msLeft }  another replica holds it
    { -1, targetReplica, msLeft }   free, but a yield request reserves it for another standing replica
]]
--@include time
--@include wake
--@include lead-fields
--@include lead

local key = KEYS[1]
local rid, inc = ARGV[1], ARGV[2]
local leaseMs, idleTtl = tonumber(ARGV[3]), tonumber(ARGV[4])
local stand = ARGV[5] == '1'

local function standby()
  if stand then
    redis.call('HSET', key, candidate_field(inc), fmt(NOW + leaseMs) .. '|' .. rid)
    touch_lead(key, leaseMs, idleTtl)
  end
end

local h = redis.call('HMGET', key, LEAD.holder, LEAD.holderIncarnation, LEAD.fence, LEAD.expiresAt, LEAD.yieldTarget,
  LEAD.yieldExpiresAt)
local exp = tonumber(h[4]) or 0
if h[1] and exp > NOW then
  if h[2] == inc then
    redis.call('HSET', key, LEAD.expiresAt, fmt(NOW + leaseMs), LEAD.lastRenewal, fmt(NOW))
    touch_lead(key, leaseMs, idleTtl)
    local p = redis.call('HMGET', key, LEAD.previousHolder, LEAD.previousHolderIncarnation)
    return { 2, h[3], p[1] or false, p[2] or false }
  end
  standby()
  return { 0, h[1], h[2], h[3], fmt(exp - NOW) }
end
check_fence(h[3]) -- a corrupt fence: refused before anything below writes
if h[1] then
  -- expired without a release: the handover time counts from the expiry
  clear_lead_holder(key)
  mark_let_go(key, fmt(exp), 'expired', nil)
end

local yexp = tonumber(h[6]) or 0
if h[5] and h[5] ~= '' and yexp > NOW and h[5] ~= rid and candidate_standing(key, h[5]) then
  standby()
  return { -1, h[5], fmt(yexp - NOW) }
end

local last = redis.call('HMGET', key, LEAD.lastHolder, LEAD.lastHolderIncarnation, LEAD.releasedAt, LEAD.releasedHow,
  LEAD.releasedBy)
local fence = fmt(next_fence(h[3]))
redis.call('HSET', key, LEAD.holder, rid, LEAD.holderIncarnation, inc, LEAD.fence, fence,
  LEAD.expiresAt, fmt(NOW + leaseMs), LEAD.grantedAt, fmt(NOW), LEAD.lastRenewal, fmt(NOW),
  LEAD.lastHolder, rid, LEAD.lastHolderIncarnation, inc)
if last[1] then
  redis.call('HSET', key, LEAD.previousHolder, last[1], LEAD.previousHolderIncarnation, last[2] or '')
else
  redis.call('HDEL', key, LEAD.previousHolder, LEAD.previousHolderIncarnation)
end
if last[3] then
  redis.call('HSET', key, LEAD.handoverMs, fmt(NOW - tonumber(last[3])))
  -- how it let go, when recorded (a hash from an older release has no rw: not guessed)
  if last[4] then redis.call('HSET', key, LEAD.handoverHow, last[4]) else redis.call('HDEL', key, LEAD.handoverHow) end
  if last[5] then redis.call('HSET', key, LEAD.handoverBy, last[5]) else redis.call('HDEL', key, LEAD.handoverBy) end
  redis.call('HDEL', key, LEAD.releasedAt, LEAD.releasedHow, LEAD.releasedBy)
else
  redis.call('HDEL', key, LEAD.handoverMs, LEAD.handoverHow, LEAD.handoverBy)
end
redis.call('HDEL', key, LEAD.yieldBy, LEAD.yieldTarget, LEAD.yieldExpiresAt, LEAD.yieldAt, candidate_field(inc))
touch_lead(key, leaseMs, idleTtl)
return { 1, fence, last[1] or false, last[2] or false }
