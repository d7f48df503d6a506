#!lua
--[[
  handover-set-2: leave a handover marker for an async conversation that is waiting, so the replica
  that takes the chat applies a fallback. "since" is kept while the same conversation keeps waiting.
  A fenced write (the writer's chat-turn fence given) is checked as a checkpoint write is: refused
  when the chat has a newer fence, when the writer's turn expired in Redis (includes/fenced.lua), or
  when the marker there was written under a newer fence — so a stale replica's late marker cannot
  replace the new owner's. A marker written without a fence (older clients) blocks no fenced write.

  KEYS[1] handover marker hash   KEYS[2] chat state hash (same slot; its `f` is the chat's fence)
  ARGV[1] conversation name   ARGV[2] replicaId   ARGV[3] incarnation
  ARGV[4] TTL ms ('' = none)  ARGV[5] extra data JSON   ARGV[6] writer's turn fence ('' = unfenced)

  Fields written (HANDOVER): name, rid, inc, since, at, d, of (the writer's fence, '' unfenced).

  Returns
    { 1 }            written
    { -1, fence }    superseded: the chat (or the marker there) has a newer fence: nothing written
    { -2, fence }    the writer's turn (the chat's current grant) expired in Redis: nothing written
]]
--@include time
--@include chat
--@include fenced
--@include handover

local key = KEYS[1]
local prev = redis.call('HMGET', key, HANDOVER.name, HANDOVER.incarnation, HANDOVER.since, HANDOVER.fence)
if ARGV[6] ~= '' then
  local f = tonumber(ARGV[6])
  local refused, fence = fence_refusal(KEYS[2], f)
  if refused then return { refused, fmt(fence) } end
  if prev[4] and prev[4] ~= '' and tonumber(prev[4]) > f then return { -1, prev[4] } end
end
local since = fmt(NOW)
if prev[1] == ARGV[1] and prev[2] == ARGV[3] and prev[3] then since = prev[3] end
redis.call('DEL', key)
redis.call('HSET', key, HANDOVER.name, ARGV[1], HANDOVER.replicaId, ARGV[2], HANDOVER.incarnation, ARGV[3],
  HANDOVER.since, since, HANDOVER.updatedAt, fmt(NOW), HANDOVER.data, ARGV[5], HANDOVER.fence, ARGV[6])
if ARGV[4] ~= '' then redis.call('PEXPIRE', key, ARGV[4]) end
return { 1 }
