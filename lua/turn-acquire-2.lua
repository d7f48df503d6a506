#!lua
--[[
  turn-acquire-2: take a ticket in a chat's FIFO queue, or poll with the ticket taken before, and
  grant the turn to the oldest live ticket when the chat is free.

  KEYS[1] chat state hash       KEYS[2] chat queue zset
  ARGV[1] replicaId             ARGV[2] incarnation
  ARGV[3] leaseMs               ARGV[4] idleTtlMs
  ARGV[5] ticket ('' = take a new one)
  ARGV[6] wake channel prefix (the grantee's incarnation is appended; a channel, not a key)
  ARGV[7] request id (unique per acquisition of this incarnation): makes taking a ticket idempotent.
          A retry after a lost reply finds the ticket taken the first time (field rq:<id>) instead of
          queueing a second one behind later messages. The field goes once the caller knows its ticket
          (its next poll) or releases it. The ticket itself records it (q:<ticket>, then hq while
          held): a poll is answered for the acquisition that took the ticket only (see owns).

  Returns
    { 1, ticket, fence, prevReplica|nil, prevIncarnation|nil }   granted: the lease runs leaseMs from now
    { 0, ticket, position, holderReplica|nil, holderIncarnation|nil, holderFence|nil }  still queued
    { -1 }          the ticket is no longer queued (an operator skipped it, or it expired unrefreshed), or
                    it is not this acquisition's (Redis lost it and gave its number again)
    { -2, ticket }  the ticket was granted, but its lease expired before this poll confirmed it
]]
--@include time
--@include chat
--@include turn

local state, queue = KEYS[1], KEYS[2]
local rid, inc = ARGV[1], ARGV[2]
local leaseMs, idleTtl = tonumber(ARGV[3]), tonumber(ARGV[4])
local ticket, wake, reqId = ARGV[5], ARGV[6], ARGV[7] or ''
local fresh = false

if ticket == '' then
  local known = false
  -- Always looked up: the client itself may send a command again after a reconnect.
  if reqId ~= '' then known = redis.call('HGET', state, request_field(reqId)) end
  if known then
    ticket = known -- a retry: poll with the ticket the lost reply carried
  else
    -- Fast path: a free chat with nobody queued is granted without touching the queue.
    local h = redis.call('HMGET', state, CHAT.holder, CHAT.expiresAt, CHAT.fence, CHAT.lastHolder, CHAT.lastHolderIncarnation,
      CHAT.lastTicket)
    if (not h[1] or (tonumber(h[2]) or 0) <= NOW) and redis.call('EXISTS', queue) == 0 then
      ticket = fmt((tonumber(h[6]) or 0) + 1)
      local extra = { CHAT.lastTicket, ticket }
      if reqId ~= '' then table.insert(extra, request_field(reqId)); table.insert(extra, ticket) end
      local fence = grant_turn(state, ticket, rid, inc, reqId, leaseMs, 0, { h[4], h[5], h[3] }, extra)
      redis.call('PEXPIRE', state, fmt(leaseMs * 2 + idleTtl))
      return { 1, ticket, fence, h[4] or false, h[5] or false }
    end
    fresh = true
    ticket = fmt(redis.call('HINCRBY', state, CHAT.lastTicket, 1))
    redis.call('ZADD', queue, ticket, ticket)
    redis.call('HSET', state, ticket_field(ticket), ticket_value(NOW + leaseMs, NOW, inc, rid))
    if reqId ~= '' then redis.call('HSET', state, request_field(reqId), ticket, ticket_request_field(ticket), reqId) end
  end
elseif reqId ~= '' then
  redis.call('HDEL', state, request_field(reqId)) -- the caller knows its ticket now
end

if not fresh then
  local h = redis.call('HMGET', state, CHAT.holderIncarnation, CHAT.holderTicket, CHAT.expiresAt, CHAT.fence, CHAT.previousHolder,
    CHAT.previousHolderIncarnation, CHAT.holderRequest)
  if h[1] == inc and h[2] == ticket and owns(h[7], reqId) then
    if (tonumber(h[3]) or 0) > NOW then
      redis.call('HSET', state, CHAT.expiresAt, fmt(NOW + leaseMs), CHAT.lastRenewal, fmt(NOW))
      touch(state, queue, leaseMs, idleTtl)
      return { 1, ticket, h[4], h[5] or false, h[6] or false }
    end
    clear_holder(state)
    grant_next(state, queue, leaseMs, wake, ticket)
    touch(state, queue, leaseMs, idleTtl)
    return { -2, ticket }
  end
  local t = parse_ticket(redis.call('HGET', state, ticket_field(ticket)))
  if not t or t.inc ~= inc or not owns(redis.call('HGET', state, ticket_request_field(ticket)), reqId) then return { -1 } end
  redis.call('HSET', state, ticket_field(ticket), ticket_value(NOW + leaseMs, t.enq, inc, rid))
end

local g = grant_next(state, queue, leaseMs, wake, ticket)
touch(state, queue, leaseMs, idleTtl)
if g and g.ticket == ticket then
  return { 1, ticket, g.fence, g.ph or false, g.phi or false }
end
local pos = redis.call('ZRANK', queue, ticket)
local h = redis.call('HMGET', state, CHAT.holder, CHAT.holderIncarnation, CHAT.fence)
return { 0, ticket, pos or 0, h[1] or false, h[2] or false, h[3] or false }
