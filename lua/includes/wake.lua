-- Wake-ups are hints (every waiter and holder polls or renews anyway): a PUBLISH that Redis refuses
-- (an ACL user without the wake channel, `&<prefix>:wake:*`) must not fail a script that has written
-- already, because Redis keeps a failed script's earlier writes. It is made with redis.pcall and the
-- first refusal is kept in WAKE_REFUSED, which operator scripts return as their last reply field.
local WAKE_REFUSED = false

local function publish_wake(channel, message)
  local r = redis.pcall('PUBLISH', channel, message)
  if type(r) == 'table' and r.err then
    if not WAKE_REFUSED then WAKE_REFUSED = r.err end
    return false
  end
  return true
end
