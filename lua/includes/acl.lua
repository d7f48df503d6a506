-- An operator's ACL user may lack a command, or a key, that an operator script writes with. Redis
-- keeps a failed script's earlier writes, so each operator script asks first (redis.acl_check_cmd,
-- Redis 7) for every write it may make, on its own keys, and refuses before writing anything.
-- (The wake-up PUBLISH is not asked for: see includes/wake.lua.)
local BMC_ACL_ARGS = { HSET = { 'f', 'v' }, HDEL = { 'f' }, HINCRBY = { 'f', '1' }, ZREM = { 'm' }, ZPOPMIN = {}, DEL = {},
  PEXPIRE = { '1' } }

local function require_writes(key, commands)
  for _, cmd in ipairs(commands) do
    if not redis.acl_check_cmd(cmd, key, unpack(BMC_ACL_ARGS[cmd])) then
      error(redis.error_reply('NOPERM botmesh: the ACL user may not run ' .. cmd .. ' on ' .. key .. ' (checked before any write: nothing was written)'))
    end
  end
end
