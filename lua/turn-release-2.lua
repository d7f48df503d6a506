#!lua
--[[
  turn-release-2: give a chat's turn back (and grant it to the next live ticket at once, waking its
  replica), or withdraw a ticket that is still queued (a waiter that timed out or was aborted).

  KEYS[1] chat state hash       KEYS[2] chat queue zset
  ARGV[1] incarnation           ARGV[2] ticket ('' = the one the request id ARGV[6] took: a waiter that
                                gave up while its take-ticket was unanswered, sent again by the client)
  ARGV[3] leaseMs               ARGV[4] idleTtlMs
  ARGV[5] wake channel prefix
  ARGV[6] request id of the acquisition ('' = none): its rq:<incarnation>:<id> field goes too, and only a turn or
          ticket of that acquisition is given back (a ticket number may have been given again)
  ARGV[7] '1' = the turn served nothing (it found its work done or stale): the chat's last holder goes
          back to the one before this turn, so the next holder's previousHolder is who last served
  ARGV[8] '1' = no other message of this incarnation waits in this chat: its w:<incarnation> field
          (what keeps its queued tickets alive) goes too
  ARGV[9] '1' = the turn came through the queue (it was not granted at once): others are likely queued
          behind it, so the fields of the ticket after it are read with the holder's (a hint: no answer
          depends on it)

  Returns RELEASE.released (1) the turn was released, RELEASE.withdrawn (2) the queued ticket was
  withdrawn, RELEASE.notOurs (0) neither was ours any more (lua/includes/status.lua);
  when the turn went on to a ticket of this same incarnation (its next message of the chat), the
  grant comes in the reply instead of a wake-up (a local hand-off):
    { 1 | 2, ticket, fence, its request id|false, prevReplica|false, prevIncarnation|false, leaseMs }
  and with 0, a turn this incarnation holds on the chat now is reported the same way (a release sent
  again after its reply was lost finds its first run's hand-off done: the grant is reported again).
]]
--@include time
--@include wake
--@include chat
--@include status
--@include turn

local state, queue = KEYS[1], KEYS[2]
local inc, ticket = ARGV[1], ARGV[2]
local leaseMs, idleTtl, wake = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local reqId = ARGV[6] or ''
local served = ARGV[7] ~= '1'
-- Fields to delete with the ones the release or withdrawal deletes anyway (one HDEL).
local drop = { request_field(inc, reqId) }
if ARGV[8] == '1' then drop[2] = waiter_field(inc) end
if ticket == '' then
  if reqId == '' then return RELEASE.notOurs end
  -- Its rq: field while queued; a turn granted at once has none: the holder's fields name the request.
  local r = redis.call('HMGET', state, request_field(inc, reqId), CHAT.holderIncarnation, CHAT.holderRequest, CHAT.holderTicket)
  ticket = r[1] or (r[2] == inc and r[3] == reqId and r[4])
  if not ticket then return RELEASE.notOurs end
end

-- The status, with the grant when the turn went to a ticket of ours (see Returns).
local function handed(status, g)
  if not (g and g.mine) then return status end
  return { status, g.ticket, g.fence, g.q or false, g.ph or false, g.phi or false, leaseMs }
end

-- The holder, and the last holder and fence (what a grant to the next ticket needs), and the last
-- ticket issued: one after ours means the queue should be there (see requeue_lost); none, when we
-- hold the turn, that nobody is queued (every earlier ticket was granted or left before ours). And,
-- when our turn came through the queue (ARGV[9]), the fields of the ticket issued after ours: under a
-- backlog it is the head the grant pops, which then needs no read of its own (grant_next's next). A
-- free chat's release does not ask for them: a field the hash lacks costs a pass over all of its fields.
local after = ARGV[9] == '1' and tonumber(ticket) and fmt(tonumber(ticket) + 1)
local h
if after then
  h = redis.call('HMGET', state, CHAT.holderIncarnation, CHAT.holderTicket, CHAT.holderRequest, CHAT.lastHolder,
    CHAT.lastHolderIncarnation, CHAT.fence, CHAT.holder, CHAT.offered, CHAT.lastTicket, ticket_field(after),
    ticket_request_field(after))
else
  h = redis.call('HMGET', state, CHAT.holderIncarnation, CHAT.holderTicket, CHAT.holderRequest, CHAT.lastHolder,
    CHAT.lastHolderIncarnation, CHAT.fence, CHAT.holder, CHAT.offered, CHAT.lastTicket)
end
local queued = (tonumber(h[9]) or 0) > (tonumber(ticket) or 0)
check_fence(h[6], state) -- a corrupt fence refuses the call before any write (a grant would need it)
if h[1] == inc and h[2] == ticket and owns(h[3], reqId) then
  -- Nobody queued behind a turn that served and was not an offer used untaken (a free chat's release):
  -- the holder's fields go, and nothing else is written (grant_next would do no more, at more cost).
  if not queued and served and h[8] ~= '1' then
    clear_holder(state, unpack(drop))
    return RELEASE.released
  end
  local last, lastHolder = { h[4], h[5], h[6] }, nil
  if not served then
    local p = redis.call('HMGET', state, CHAT.previousHolder, CHAT.previousHolderIncarnation)
    if p[1] then
      redis.call('HSET', state, CHAT.lastHolder, p[1], CHAT.lastHolderIncarnation, p[2] or '')
    else
      redis.call('HDEL', state, CHAT.lastHolder, CHAT.lastHolderIncarnation)
    end
    last = { p[1], p[2] or '', h[6] }
  elseif h[8] == '1' then
    -- An offer its waiter used without the poll that takes it up, released before a renewal took it
    -- up: it served, so its holder is the chat's last holder, as a take-up would have made it
    -- (written by grant_next, with its grant when there is one).
    lastHolder = { CHAT.lastHolder, h[7], CHAT.lastHolderIncarnation, inc }
    last = { h[7], inc, h[6] }
  end
  local g = grant_next({ state = state, queue = queue, leaseMs = leaseMs, wake = wake, callerTicket = ticket, releasing = true,
    last = last, localInc = inc, drop = drop, queued = queued, lastHolder = lastHolder, next = after and { after, h[10], h[11] } })
  -- Nobody queued: nothing else to write (the key keeps the expiry its grant or last renewal set).
  -- Granted: the state key lives on with the new lease; the queue's expiry is its takes' and polls'.
  if g then redis.call('PEXPIRE', state, lease_key_ttl(leaseMs, idleTtl)) end
  return handed(RELEASE.released, g)
end
-- A ticket still queued: its fields, and the holder (for the next grant; the last holder and the
-- fence, checked above, are h's).
local q = redis.call('HMGET', state, ticket_field(ticket), ticket_request_field(ticket), CHAT.holder, CHAT.expiresAt)
local t = parse_ticket(q[1])
if t and t.inc == inc and owns(q[2], reqId) then
  redis.call('ZREM', queue, ticket)
  redis.call('HDEL', state, ticket_field(ticket), ticket_request_field(ticket), unpack(drop))
  local g = grant_next({ state = state, queue = queue, leaseMs = leaseMs, wake = wake, callerTicket = ticket,
    holder = { q[3], q[4], h[1], h[2] }, last = { h[4], h[5], h[6] }, localInc = inc, queued = queued or nil })
  touch(state, queue, leaseMs, idleTtl)
  return handed(RELEASE.withdrawn, g)
end
if reqId ~= '' then redis.call('HDEL', state, unpack(drop)) end
if h[1] == inc and (tonumber(q[4]) or 0) > NOW then
  -- A turn of ours holds the chat: maybe the one our first run handed over, whose reply was lost.
  local g = redis.call('HMGET', state, CHAT.fence, CHAT.previousHolder, CHAT.previousHolderIncarnation)
  return { RELEASE.notOurs, h[2], g[1], h[3] or false, g[2] or false, g[3] or false, leaseMs }
end
return RELEASE.notOurs
