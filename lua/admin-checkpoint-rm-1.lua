#!lua
--[[
  admin-checkpoint-rm-1: an operator deletes a conversation checkpoint (`checkpoint rm`),
  compare-and-set on the revision shown. Unlike checkpoint-clear-2 it says what it found instead.
  A replica still running that flow has its next write refused (revision conflict, 'superseded').

  KEYS[1] checkpoint hash
  ARGV[1] expected revision

  Returns
    { 1, revision, flow|false, step|false, ownerReplica|false }   deleted
    { 0 }                  there is no checkpoint: nothing done
    { -1, revision, flow|false, step|false, ownerReplica|false }   another revision is there now: nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write.
]]
--@include acl
--@include checkpoint

local key = KEYS[1]
require_writes(KEYS[1], { 'DEL' }) -- refused before any write
local h = redis.call('HMGET', key, CHECKPOINT.revision, CHECKPOINT.flow, CHECKPOINT.step, CHECKPOINT.ownerReplica)
if not h[1] then return { 0 } end
if h[1] ~= ARGV[1] then return { -1, h[1], h[2] or false, h[3] or false, h[4] or false } end
redis.call('DEL', key)
return { 1, h[1], h[2] or false, h[3] or false, h[4] or false }
