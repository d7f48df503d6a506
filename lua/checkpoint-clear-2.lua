#!lua
--[[
  checkpoint-clear-2: delete a checkpoint if its revision is still the given one (the runtime at the
  end of a flow), and — for a fenced clear — only if the chat has no newer turn fence than the
  clearer's, and not once the clearer's own turn expired in Redis (includes/fenced.lua): a replica
  that lost the chat cannot delete the checkpoint its new owner resumed from.

  KEYS[1] checkpoint hash   KEYS[2] chat state hash (same slot; its `f` is the chat's current fence)
  ARGV[1] revision          ARGV[2] the clearer's turn fence ('' = unfenced)

  Returns 1 deleted; 0 the revision changed (or it is gone): nothing done;
          -1 superseded: the chat has a newer fence than the clearer's: nothing done
          -2 the clearer's turn (the chat's current grant) expired in Redis unrenewed: nothing done
]]
--@include time
--@include chat
--@include fenced
--@include checkpoint
if ARGV[2] ~= '' then
  local refused = fence_refusal(KEYS[2], tonumber(ARGV[2]))
  if refused then return refused end
end
if redis.call('HGET', KEYS[1], CHECKPOINT.revision) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
