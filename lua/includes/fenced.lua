-- A fenced write — a checkpoint or handover marker set or clear, with the writer's chat-turn fence —
-- checked against the chat's state hash (same hash slot). Refused when the chat has a newer turn
-- fence than the writer's (another replica was granted the chat since), or when the writer's fence
-- is the chat's current grant but that lease ran out in Redis unrenewed: nobody was granted since,
-- yet the turn is no longer the writer's (its own coordinator has dropped it already, a renewal
-- margin before this expiry). A fence the chat never had (above its current one) is not refused here.
-- Needs the time and chat includes before it.
--
-- Returns nil (go on), or the status and fence to answer with:
--   -1, the chat's newer fence      -2, the writer's fence, whose lease expired
local function fence_refusal(chat, fence)
  local s = redis.call('HMGET', chat, CHAT.fence, CHAT.holder, CHAT.expiresAt)
  local chatFence = tonumber(s[1] or '0') or 0
  if chatFence > fence then return -1, chatFence end
  if chatFence == fence and s[2] and (tonumber(s[3]) or 0) <= NOW then return -2, fence end
  return nil
end
