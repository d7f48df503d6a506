#!lua
--[[
  lead-transport-1: the leader of a lead records that its transport (the exclusive session a provider
  leads for) went down or came back up, so operators read it from Redis (`provider ls/status`,
  `doctor`, the dashboard, `/metrics`). Called by the election on reportDown() / reportUp(). Only the
  holder with that fence writes; a lead that changed hands is left alone. Down keeps the first
  `td` (down since) and moves `tdy` (yields at); up clears both. A new grant, a release, an expiry or
  a revocation clears them too (clear_lead_holder).

  KEYS[1] lead hash
  ARGV[1] incarnation   ARGV[2] fence held   ARGV[3] '1' down, '' up
  ARGV[4] yield after ms (the campaign's providerDownMs: the leader yields this long after down)

  Returns 1 recorded, 0 this incarnation does not hold the lead with that fence (nothing done)
]]
--@include time
--@include wake
--@include lead-fields
--@include lead

local key = KEYS[1]
local inc, fence, down, after = ARGV[1], ARGV[2], ARGV[3] == '1', tonumber(ARGV[4])

local h = redis.call('HMGET', key, LEAD.holderIncarnation, LEAD.fence, LEAD.expiresAt, LEAD.transportDownSince)
if h[1] ~= inc or h[2] ~= fence or (tonumber(h[3]) or 0) <= NOW then return 0 end
if down then
  if not h[4] then redis.call('HSET', key, LEAD.transportDownSince, fmt(NOW)) end
  redis.call('HSET', key, LEAD.transportYieldsAt, fmt(NOW + after))
else
  redis.call('HDEL', key, LEAD.transportDownSince, LEAD.transportYieldsAt)
end
return 1
