#!lua
--[[
  handover-clear-2: remove a handover marker — only the writer's own (by incarnation) unless told
  otherwise. A fenced clear (the clearer's chat-turn fence given) is checked as a checkpoint clear
  is: refused when the chat has a newer fence or the clearer's turn expired in Redis
  (includes/fenced.lua); and it leaves a marker written under a newer fence than its own.

  KEYS[1] handover marker hash   KEYS[2] chat state hash (same slot)
  ARGV[1] incarnation ('' = whoever wrote it)   ARGV[2] the clearer's turn fence ('' = unfenced)

  Returns 1 removed; 0 absent, written by another incarnation, or under a newer fence;
          -1 superseded: the chat has a newer fence than the clearer's: nothing done;
          -2 the clearer's turn (the chat's current grant) expired in Redis: nothing done
]]
--@include time
--@include chat
--@include fenced
--@include handover

local m = redis.call('HMGET', KEYS[1], HANDOVER.incarnation, HANDOVER.fence)
if not m[1] then return 0 end
if ARGV[1] ~= '' and m[1] ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then
  local f = tonumber(ARGV[2])
  local refused = fence_refusal(KEYS[2], f)
  if refused then return refused end
  if m[2] and m[2] ~= '' and tonumber(m[2]) > f then return 0 end
end
redis.call('DEL', KEYS[1])
return 1
