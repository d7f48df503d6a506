#!lua
--[[
  checkpoint-clear-1: delete a checkpoint if its revision is still the given one (the runtime at the end
  of a flow, or an operator's `checkpoint rm`). A newer owner's checkpoint is left alone.

  KEYS[1] checkpoint hash
  ARGV[1] revision

  Returns 1 deleted; 0 the revision changed (or it is gone): nothing done
]]
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
