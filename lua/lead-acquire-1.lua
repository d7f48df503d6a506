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
--@include lead

local key = KEYS[1]
local rid, inc = ARGV[1], ARGV[2]
local leaseMs, idleTtl = tonumber(ARGV[3]), tonumber(ARGV[4])
local stand = ARGV[5] == '1'

local function standby()
  if stand then
    redis.call('HSET', key, 'c:' .. inc, fmt(NOW + leaseMs) .. '|' .. rid)
    touch_lead(key, leaseMs, idleTtl)
  end
end

local h = redis.call('HMGET', key, 'h', 'hi', 'f', 'exp', 'yt', 'yexp')
local exp = tonumber(h[4]) or 0
if h[1] and exp > NOW then
  if h[2] == inc then
    redis.call('HSET', key, 'exp', fmt(NOW + leaseMs), 'lr', fmt(NOW))
    touch_lead(key, leaseMs, idleTtl)
    local p = redis.call('HMGET', key, 'ph', 'phi')
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

local last = redis.call('HMGET', key, 'lh', 'lhi', 'rel', 'rw', 'rb')
local fence = fmt(next_fence(h[3]))
redis.call('HSET', key, 'h', rid, 'hi', inc, 'f', fence, 'exp', fmt(NOW + leaseMs), 'g', fmt(NOW), 'lr', fmt(NOW),
  'lh', rid, 'lhi', inc)
if last[1] then
  redis.call('HSET', key, 'ph', last[1], 'phi', last[2] or '')
else
  redis.call('HDEL', key, 'ph', 'phi')
end
if last[3] then
  redis.call('HSET', key, 'hg', fmt(NOW - tonumber(last[3])))
  -- how it let go, when recorded (a hash from an older release has no rw: not guessed)
  if last[4] then redis.call('HSET', key, 'hw', last[4]) else redis.call('HDEL', key, 'hw') end
  if last[5] then redis.call('HSET', key, 'hb', last[5]) else redis.call('HDEL', key, 'hb') end
  redis.call('HDEL', key, 'rel', 'rw', 'rb')
else
  redis.call('HDEL', key, 'hg', 'hw', 'hb')
end
redis.call('HDEL', key, 'yr', 'yt', 'yexp', 'yat', 'c:' .. inc)
touch_lead(key, leaseMs, idleTtl)
return { 1, fence, last[1] or false, last[2] or false }
