#!lua
--[[
  lease-renew-1: extend a held lease (a chat turn or a lead) by leaseMs from Redis's now.

  KEYS[1] lease hash (chat state or lead)
  ARGV[1] incarnation   ARGV[2] fence   ARGV[3] leaseMs   ARGV[4] idleTtlMs

  Returns
    { 1, yieldRequestedBy|nil, yieldTarget|nil }  renewed (a lead also learns of a pending yield request)
    { 0, 'revoked' }   another holder or fence owns the key (released by an operator, expired and re-granted)
    { 0, 'expired' }   still ours on paper, but the lease ran out in Redis: it may be granted any moment
]]
--@include time
--@include chat
--@include lead-fields
--@include renewal

local key = KEYS[1]
local inc, fence = ARGV[1], ARGV[2]
local leaseMs, idleTtl = tonumber(ARGV[3]), tonumber(ARGV[4])

-- A chat's state hash and a lead hash name the holder's fields alike (CHAT, LEAD: the schema test
-- checks it); the pending yield request (LEAD.yieldBy, ...) is a lead's only.
local h = redis.call('HMGET', key, CHAT.holderIncarnation, CHAT.fence, CHAT.expiresAt, LEAD.yieldBy, LEAD.yieldTarget,
  LEAD.yieldExpiresAt, CHAT.offered, CHAT.holder)
if h[1] ~= inc or h[2] ~= fence then return { 0, 'revoked' } end
if (tonumber(h[3]) or 0) <= NOW then return { 0, 'expired' } end
redis.call('HSET', key, unpack(renewal_fields(h[7], h[8], inc, fmt(NOW + leaseMs), fmt(NOW))))
redis.call('PEXPIRE', key, lease_key_ttl(leaseMs, idleTtl))
if h[4] and (tonumber(h[6]) or 0) > NOW then
  return { 1, h[4], h[5] or false }
end
return { 1, false, false }
