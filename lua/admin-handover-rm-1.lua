#!lua
--[[
  admin-handover-rm-1: an operator removes a handover marker (`handover rm`): the replica that takes
  the chat next finds no marker, applies no fallback, and the next message starts fresh. Conditioned
  on what the operator saw: the incarnation that left the marker and, optionally, since when its
  conversation waits (a marker rewritten for another wait of the same incarnation is another one).

  KEYS[1] handover marker hash
  ARGV[1] expected incarnation (required)   ARGV[2] expected `since` ('' = any wait of that incarnation)

  Returns
    { 1, name, replicaId, incarnation, since|false }    removed
    { 0 }                                               there is no marker: nothing done
    { -1, name|false, replicaId|false, incarnation|false, since|false }   another marker is there
                                                        now: nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write;
  BMC_INVALID_ID when no incarnation is given (InvalidIdError).
]]
--@include acl
--@include handover

local key = KEYS[1]
require_writes(KEYS[1], { 'DEL' }) -- refused before any write
local ifInc, ifSince = ARGV[1], ARGV[2]
if ifInc == '' then return redis.error_reply('BMC_INVALID_ID: an incarnation is required') end
local h = redis.call('HMGET', key, HANDOVER.name, HANDOVER.replicaId, HANDOVER.incarnation, HANDOVER.since)
if not h[1] and not h[3] then return { 0 } end
if h[3] ~= ifInc or (ifSince ~= '' and h[4] ~= ifSince) then
  return { -1, h[1] or false, h[2] or false, h[3] or false, h[4] or false }
end
redis.call('DEL', key)
return { 1, h[1] or false, h[2] or false, h[3], h[4] or false }
