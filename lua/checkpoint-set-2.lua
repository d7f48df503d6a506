#!lua
--[[
  checkpoint-set-2: compare-and-set a conversation checkpoint, fenced by the writer's chat turn.
  The checkpoint lives in the chat's hash slot, so the script can compare the writer's fence with the
  chat's current fence and lease: a replica that lost the chat — to a newer grant, or by letting its
  lease expire — is refused here, not only by its own local check (includes/fenced.lua).

  KEYS[1] checkpoint hash   KEYS[2] chat state hash (its `f` is the chat's current fence)
  ARGV[1] expected revision ('' = the checkpoint must not exist)
  ARGV[2] flow   ARGV[3] step   ARGV[4] data JSON ({ state, answer })
  ARGV[5] owner replicaId   ARGV[6] owner incarnation   ARGV[7] owner fence ('' = unfenced write)
  ARGV[8] ephemeral TTL ms ('' = persistent)   ARGV[9] flow fingerprint   ARGV[10] saved answer bytes
  ARGV[11] write id (unique per call): the same call run again — the client re-sends a command whose
           reply a dropped connection lost — answers with the revision it wrote instead of a conflict

  Fields written (CHECKPOINT): rev, flow, step, d, oi, oinc, of, at, wid, ab, and for ephemeral ones eph=1, ttl, fp.

  Returns
    { 1, revision }           written; the revision is above the last one and above Redis's clock (µs)
    { 0, currentRevision|nil } the revision is not the expected one: nothing written
    { -1, newerFence }        superseded: the chat (or the stored checkpoint) has a newer fence
    { -2, ownerFence }        the writer's turn (the chat's current grant) expired in Redis unrenewed
]]
--@include time
--@include chat
--@include fenced
--@include checkpoint

local cp, chat = KEYS[1], KEYS[2]
local expected, ownerFence, ttl = ARGV[1], ARGV[7], ARGV[8]

local cur = redis.call('HMGET', cp, CHECKPOINT.revision, CHECKPOINT.ownerFence, CHECKPOINT.writeId)
local wid = ARGV[11] or ''
if wid ~= '' and cur[3] == wid then return { 1, cur[1] } end
if ownerFence ~= '' then
  local f = tonumber(ownerFence)
  local refused, fence = fence_refusal(chat, f)
  if refused then return { refused, fmt(fence) } end
  if cur[2] and cur[2] ~= '' and tonumber(cur[2]) > f then return { -1, cur[2] } end
end
if expected == '' then
  if cur[1] then return { 0, cur[1] } end
elseif cur[1] ~= expected then
  return { 0, cur[1] or false }
end

local rev = fmt(next_fence(cur[1]))
redis.call('DEL', cp)
redis.call('HSET', cp, CHECKPOINT.revision, rev, CHECKPOINT.flow, ARGV[2], CHECKPOINT.step, ARGV[3], CHECKPOINT.data, ARGV[4],
  CHECKPOINT.ownerReplica, ARGV[5], CHECKPOINT.ownerIncarnation, ARGV[6], CHECKPOINT.ownerFence, ownerFence,
  CHECKPOINT.updatedAt, fmt(NOW), CHECKPOINT.answerBytes, ARGV[10], CHECKPOINT.writeId, wid)
if ttl ~= '' then
  redis.call('HSET', cp, CHECKPOINT.ephemeral, '1', CHECKPOINT.ttl, ttl, CHECKPOINT.fingerprint, ARGV[9])
  redis.call('PEXPIRE', cp, ttl)
end
return { 1, rev }
