#!lua
--[[
  lead-yield-1: ask the leader of a lead to step down (an operator's `provider yield`). The leader
  learns it at once (pub/sub) or at its next renewal, calls onFollower({ reason: 'yield' }), releases
  and sits out a few seconds so a standby wins. With a target, only that replica may take the lead
  while it stands and the request lasts.

  KEYS[1] lead hash
  ARGV[1] requested by (user@host)   ARGV[2] target replicaId ('' = any standby)
  ARGV[3] request lifetime ms        ARGV[4] expected fence ('' = any)   ARGV[5] wake channel prefix

  Returns
    { 1, leaderReplica, leaderIncarnation, fence }  request recorded, leader woken
    { 0 }                nobody leads it now
    { -1, fence }        the leader's fence is not the expected one (the state changed): nothing done
    { -2 }               the target replica is not standing as a candidate: nothing done
]]
--@include time
--@include lead

local key = KEYS[1]
local by, target, ttl, ifFence, wake = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]

local h = redis.call('HMGET', key, 'h', 'hi', 'f', 'exp')
if not h[1] or (tonumber(h[4]) or 0) <= NOW then return { 0 } end
if ifFence ~= '' and h[3] ~= ifFence then return { -1, h[3] } end
if target ~= '' and not candidate_standing(key, target) then return { -2 } end
redis.call('HSET', key, 'yr', by, 'yexp', fmt(NOW + ttl), 'yat', fmt(NOW))
if target ~= '' then
  redis.call('HSET', key, 'yt', target)
else
  redis.call('HDEL', key, 'yt')
end
redis.pcall('PUBLISH', wake .. h[2], '-|' .. key) -- refused (ACL): the leader sees the request at its renewal
return { 1, h[1], h[2], h[3] }
