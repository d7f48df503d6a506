#!lua
--[[
  turn-release-2: give a chat's turn back (and grant it to the next live ticket at once, waking its
  replica), or withdraw a ticket that is still queued (a waiter that timed out or was aborted).

  KEYS[1] chat state hash       KEYS[2] chat queue zset
  ARGV[1] incarnation           ARGV[2] ticket ('' = the one the request id ARGV[6] took: a waiter that
                                gave up while its take-ticket was unanswered, sent again by the client)
  ARGV[3] leaseMs               ARGV[4] idleTtlMs
  ARGV[5] wake channel prefix
  ARGV[6] request id of the acquisition ('' = none): its rq:<id> field goes too, and only a turn or
          ticket of that acquisition is given back (a ticket number may have been given again)

  Returns 1 the turn was released, 2 the queued ticket was withdrawn, 0 neither was ours any more
]]
--@include time
--@include chat
--@include turn

local state, queue = KEYS[1], KEYS[2]
local inc, ticket = ARGV[1], ARGV[2]
local leaseMs, idleTtl, wake = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local reqId = ARGV[6] or ''
if ticket == '' then
  if reqId == '' then return 0 end
  ticket = redis.call('HGET', state, request_field(reqId))
  if not ticket then return 0 end
end

local h = redis.call('HMGET', state, CHAT.holderIncarnation, CHAT.holderTicket, CHAT.holderRequest)
if h[1] == inc and h[2] == ticket and owns(h[3], reqId) then
  clear_holder(state, request_field(reqId))
  -- Nobody queued: nothing else to write (the key keeps the expiry its grant or last renewal set).
  if grant_next(state, queue, leaseMs, wake, ticket, FREE) then touch(state, queue, leaseMs, idleTtl) end
  return 1
end
-- A ticket still queued: its fields, and the holder (for the next grant).
local q = redis.call('HMGET', state, ticket_field(ticket), ticket_request_field(ticket), CHAT.holder, CHAT.expiresAt)
local t = parse_ticket(q[1])
if t and t.inc == inc and owns(q[2], reqId) then
  redis.call('ZREM', queue, ticket)
  redis.call('HDEL', state, ticket_field(ticket), ticket_request_field(ticket), request_field(reqId))
  grant_next(state, queue, leaseMs, wake, ticket, { q[3], q[4], h[1] })
  touch(state, queue, leaseMs, idleTtl)
  return 2
end
if reqId ~= '' then redis.call('HDEL', state, request_field(reqId)) end
return 0
