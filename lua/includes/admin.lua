-- Operator intervention helpers (need the time, wake, chat and turn includes before them).

-- Take a chat's turn away from its holder: clear it and bump the fence with next_fence, so the old
-- holder's renewals answer 'revoked' and its late fenced checkpoint writes are refused (its fence is
-- now below the chat's). Returns the fence after the bump.
local function revoke_chat_holder(state)
  local f = redis.call('HGET', state, CHAT.fence)
  local bumped = fmt(next_fence(f, state)) -- refused (corrupt fence) before anything is written
  clear_holder(state)
  redis.call('HSET', state, CHAT.fence, bumped)
  return bumped
end

-- Wake the replica waiting with `ticket` (it polls at once and learns the ticket is gone).
local function wake_ticket(state, wake, inc, ticket)
  if inc and inc ~= '' then publish_wake(wake .. inc, ticket .. '|' .. state) end
end

-- The grant that grant_next made, as reply fields: ticket, fence, replicaId, incarnation (or false).
local function granted_fields(state, g)
  if not g then return false, false, false, false end
  local h = redis.call('HMGET', state, CHAT.holder, CHAT.holderIncarnation)
  return g.ticket, g.fence, h[1] or false, h[2] or false
end

-- Forget the request ids (rq:<id>, idempotent ticket taking) that point at a dropped ticket: a retry
-- of that acquisition must not find it again.
local function drop_request_ids(state, tickets)
  local all = redis.call('HGETALL', state)
  for i = 1, #all, 2 do
    local field = all[i]
    if string.sub(field, 1, #CHAT.requestPrefix) == CHAT.requestPrefix and tickets[all[i + 1]] then redis.call('HDEL', state, field) end
  end
end
