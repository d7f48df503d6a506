#!lua
--[[
  lease-renew-many-0: extend many held leases (chat turns and leads) of one incarnation at once, each
  by leaseMs from Redis's now, exactly as lease-renew-1 does for one. A standalone server only (every
  key is on it): a replica renews 500 leases per call instead of 500 calls.

  KEYS          the lease hashes (chat state or lead), any number
  ARGV[1] incarnation   ARGV[2] leaseMs   ARGV[3] idleTtlMs
  then one fence per key, in the order of KEYS

  Returns one reply per key, in order, each as lease-renew-1's:
    { 1, yieldRequestedBy|false, yieldTarget|false }   renewed
    { 0, 'revoked' } | { 0, 'expired' }
]]
--@include time
--@include chat
--@include lead-fields
--@include renewal

local inc = ARGV[1]
local leaseMs, idleTtl = tonumber(ARGV[2]), tonumber(ARGV[3])
local expires, renewed, ttl = fmt(NOW + leaseMs), fmt(NOW), lease_key_ttl(leaseMs, idleTtl)
local out = {}
for i, key in ipairs(KEYS) do
  local h = redis.call('HMGET', key, CHAT.holderIncarnation, CHAT.fence, CHAT.expiresAt, LEAD.yieldBy, LEAD.yieldTarget,
    LEAD.yieldExpiresAt, CHAT.offered, CHAT.holder)
  if h[1] ~= inc or h[2] ~= ARGV[3 + i] then
    out[i] = { 0, 'revoked' }
  elseif (tonumber(h[3]) or 0) <= NOW then
    out[i] = { 0, 'expired' }
  else
    redis.call('HSET', key, unpack(renewal_fields(h[7], h[8], inc, expires, renewed)))
    redis.call('PEXPIRE', key, ttl)
    if h[4] and (tonumber(h[6]) or 0) > NOW then
      out[i] = { 1, h[4], h[5] or false }
    else
      out[i] = { 1, false, false }
    end
  end
end
return out
