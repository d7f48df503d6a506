#!lua
--[[
  admin-checkpoint-extend-1: an operator keeps an ephemeral (forward) checkpoint alive longer
  (`checkpoint extend`): it now expires `ttl` ms from Redis's now. Never shortens one (an expiry
  later than asked is left as it is), never touches a persistent one, never changes its revision:
  the conversation's next compare-and-set goes on as before, and its next write sets the flow's own
  TTL again. Conditioned on what the operator saw: the revision.

  KEYS[1] checkpoint hash
  ARGV[1] expected revision   ARGV[2] TTL ms from now

  Returns
    { 1, revision, pttlBefore, flow|false, step|false }   extended: expires ARGV[2] ms from now
    { 2, revision, pttlBefore, flow|false, step|false }   it expires later than asked already: left as it is
    { 0 }                                                 there is no checkpoint: nothing done
    { -1, revision, flow|false, step|false, ownerReplica|false }   another revision is there now: nothing done
    { -2, revision }                                      persistent (no TTL): nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write.
]]
--@include acl
--@include checkpoint

local key = KEYS[1]
require_writes(KEYS[1], { 'PEXPIRE' }) -- refused before any write
local ttl = tonumber(ARGV[2])
local h = redis.call('HMGET', key, CHECKPOINT.revision, CHECKPOINT.flow, CHECKPOINT.step, CHECKPOINT.ownerReplica,
  CHECKPOINT.ephemeral)
if not h[1] then return { 0 } end
if h[1] ~= ARGV[1] then return { -1, h[1], h[2] or false, h[3] or false, h[4] or false } end
local pttl = redis.call('PTTL', key)
if h[5] ~= '1' or pttl < 0 then return { -2, h[1] } end
if pttl >= ttl then return { 2, h[1], pttl, h[2] or false, h[3] or false } end
redis.call('PEXPIRE', key, ttl)
return { 1, h[1], pttl, h[2] or false, h[3] or false }
