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
          A retry after a lost reply finds the ticket taken the first time instead of queueing a
          second one behind later messages: a queued ticket by its field rq:<incarnation>:<id> (it goes
          when the acquisition gives its turn or ticket back), a turn granted at once by
          the holder's own fields (hi and hq). The ticket itself records the id (q:<ticket>, then hq
          while held): a poll is answered for the acquisition that took the ticket only (see owns).
  ARGV[8] the state's epoch as the reply that queued the ticket named it ('' = not known): a poll whose
          ticket is gone from a state with another epoch found the state made again since (stateLost)

  A queued ticket lives ticket_life_ms (two thirds of leaseMs) after its incarnation's last take or
  poll in this chat (w:<incarnation>); a grant pushed to a waiter is an offer its next poll takes up
  (lua/includes/turn.lua: offer_ms).

  Returns (status codes by name: lua/includes/status.lua)
    { TURN.granted, ticket, fence, prevReplica|nil, prevIncarnation|nil, alone }   granted (or an offer
                    taken up): the lease runs leaseMs from now. alone: 1 when this call took a new ticket
                    and found no w:<incarnation> here (no other ticket of ours queued: one our replica
                    believes queued went with the chat's state, evicted or flushed), 0 when it found one;
                    absent when it took none (a poll, or a take sent again finding its first run's ticket)
    { TURN.queued, ticket, holderLeftMs, answeredAtUs, alone|false, epoch|false }   still queued; the holder's lease (or
                    offer) runs holderLeftMs more unless renewed: a waiter polls then, to grant the next
                    ticket if it lapsed. answeredAtUs: Redis's clock (µs) in this call (a grant pushed
                    later carries a later one, g: it was made after this call was sent). epoch: the
                    state's (CHAT.epoch), for the polls to name
    { TURN.dropped }   the ticket is no longer queued (an operator skipped it), or it is not this
                    acquisition's (Redis lost it and gave its number again)
    { TURN.presumedDead }   the ticket was skipped as a dead replica's (it expired unrefreshed: this
                    replica froze, was cut off or too slow): too late, not an operator's skip
    { TURN.lapsed, ticket }   the ticket was granted (offered), but the grant lapsed before this poll took it up
    { TURN.stateLost }   the chat's whole state is gone (its keys were flushed, evicted or lost), or
                    was made again since our take (another epoch): take a ticket again
]]
--@include time
--@include wake
--@include chat
--@include status
--@include turn

local state, queue = KEYS[1], KEYS[2]
local rid, inc = ARGV[1], ARGV[2]
local leaseMs, idleTtl = tonumber(ARGV[3]), tonumber(ARGV[4])
local ticket, wake, reqId = ARGV[5], ARGV[6], ARGV[7] or ''
local sentEpoch = ARGV[8] or ''

-- What the script needs from the hash is read in one HMGET per path (a listpack hash scans its
-- fields once per name asked, so each read asks only for what its path uses). Both reads start with
-- the holder, its expiry, the fence and the last holder (what a grant needs), at these positions:
local HOLDER, EXPIRES, FENCE, LAST, LAST_INC = 1, 2, 3, 4, 5
-- Taking a ticket then reads the last ticket issued, the request id's field (a retry after a lost
-- reply), this incarnation's w: field (is another ticket of ours queued here?) and the holder's ticket
-- (a later one issued means the queue should be there), and the state's epoch:
local TAKE_LAST_TICKET, TAKE_REQUEST, TAKE_WAITER, TAKE_HOLDER_TICKET, TAKE_EPOCH = 6, 7, 8, 9, 10
-- Polling with a ticket then reads the holder's incarnation, ticket and request (is the holder us?),
-- the previous holder (a grant confirmed), the ticket's own fields, whether the grant is an offer, and
-- the last ticket issued and the epoch (below ours, or another one: the chat's state was lost and
-- made again since our take):
local POLL_HOLDER_INC, POLL_HOLDER_TICKET, POLL_HOLDER_REQUEST, POLL_PREV, POLL_PREV_INC = 6, 7, 8, 9, 10
local POLL_TICKET, POLL_TICKET_REQUEST, POLL_OFFERED, POLL_LAST_TICKET, POLL_EPOCH, POLL_PRESUMED = 11, 12, 13, 14, 15, 16
local fresh = false
-- A new ticket taken: 1 with no w: field of ours here (no other ticket of ours is queued), else 0;
-- nil (not in the reply) for a poll, or a take sent again that finds the ticket its first run took.
local alone = nil
local h
-- The state's epoch: set by the first take that finds none (a new state, or one an older version made).
local epoch

-- Still queued: see Returns (false, not nil, where a field is absent: a nil would end the reply there).
local function queued_reply(holderLeftMs)
  local a = alone
  if a == nil then a = false end
  return { TURN.queued, ticket, holderLeftMs, fmt(NOW_US), a, epoch or false }
end

if ticket == '' then
  h = redis.call('HMGET', state, CHAT.holder, CHAT.expiresAt, CHAT.fence, CHAT.lastHolder, CHAT.lastHolderIncarnation,
    CHAT.lastTicket, request_field(inc, reqId), waiter_field(inc), CHAT.holderTicket, CHAT.epoch)
  check_fence(h[FENCE], state) -- a corrupt fence refuses the call before any write
  epoch = h[TAKE_EPOCH]
  -- Always looked up: the client itself may send a command again after a reconnect. A turn granted
  -- at once keeps no rq: field: its holder's fields name the request.
  local known = reqId ~= '' and h[TAKE_REQUEST]
  if reqId ~= '' and not known and h[HOLDER] == rid then
    local m = redis.call('HMGET', state, CHAT.holderIncarnation, CHAT.holderRequest, CHAT.holderTicket)
    if m[1] == inc and m[2] == reqId then known = m[3] end
  end
  if known then
    ticket = known -- a retry: poll with the ticket the lost reply carried
  else
    local holder, held = h[HOLDER], (tonumber(h[EXPIRES]) or 0) > NOW
    ticket = fmt((tonumber(h[TAKE_LAST_TICKET]) or 0) + 1)
    alone = h[TAKE_WAITER] and 0 or 1
    -- Written with the ticket (one HSET either way) when the state has none yet.
    local mark = {}
    if not epoch then
      epoch = fmt(NOW_US)
      mark = { CHAT.epoch, epoch }
    end
    -- Tickets were issued after the holder's: the queue should be there, unless they were all
    -- withdrawn, or Redis evicted it alone (then requeue_lost rebuilds it from the hash first).
    local after = holder and (tonumber(h[TAKE_LAST_TICKET]) or 0) > (tonumber(h[TAKE_HOLDER_TICKET]) or 0)
    -- Fast path: a free chat is granted without touching the queue. Every script that frees a chat
    -- grants its next live ticket (or empties the queue) on the way, so with no holder at all nobody
    -- is queued; a holder whose lease ran out may still have waiters behind it.
    if not holder or (not held and redis.call('EXISTS', queue) == 0 and not (after and requeue_lost(state, queue) > 0)) then
      local fence = grant_turn(state, ticket, rid, inc, reqId, leaseMs, 0, { h[LAST], h[LAST_INC], h[FENCE] },
        { CHAT.lastTicket, ticket, unpack(mark) })
      redis.call('PEXPIRE', state, lease_key_ttl(leaseMs, idleTtl))
      return { TURN.granted, ticket, fence, h[LAST] or false, h[LAST_INC] or false, alone }
    end
    fresh = true
    local alive = fmt(NOW + ticket_life_ms(leaseMs)) -- the ticket's own deadline, and w:<inc>'s
    if reqId ~= '' then
      redis.call('HSET', state, CHAT.lastTicket, ticket, ticket_field(ticket), ticket_value(alive, NOW, inc, rid),
        waiter_field(inc), alive, request_field(inc, reqId), ticket, ticket_request_field(ticket), reqId, unpack(mark))
    else
      redis.call('HSET', state, CHAT.lastTicket, ticket, ticket_field(ticket), ticket_value(alive, NOW, inc, rid),
        waiter_field(inc), alive, unpack(mark))
    end
    if held then
      -- The state key lives on with the holder's lease (its grant and renewals set its expiry).
      local ttl = lease_key_ttl(leaseMs, idleTtl)
      if after and redis.call('PEXPIRE', queue, ttl) == 0 then
        requeue_lost(state, queue) -- our new ticket's field is among them
        redis.call('PEXPIRE', queue, ttl)
      else
        redis.call('ZADD', queue, ticket, ticket)
        if not after then redis.call('PEXPIRE', queue, ttl) end -- else the expiry just set stays
      end
      return queued_reply(tonumber(h[EXPIRES]) - NOW)
    end
    redis.call('ZADD', queue, ticket, ticket)
  end
end

if not fresh then
  h = redis.call('HMGET', state, CHAT.holder, CHAT.expiresAt, CHAT.fence, CHAT.lastHolder, CHAT.lastHolderIncarnation,
    CHAT.holderIncarnation, CHAT.holderTicket, CHAT.holderRequest, CHAT.previousHolder, CHAT.previousHolderIncarnation,
    ticket_field(ticket), ticket_request_field(ticket), CHAT.offered, CHAT.lastTicket, CHAT.epoch,
    CHAT.presumedDeadPrefix .. ticket)
  check_fence(h[FENCE], state)
  epoch = h[POLL_EPOCH]
  if h[POLL_HOLDER_INC] == inc and h[POLL_HOLDER_TICKET] == ticket and owns(h[POLL_HOLDER_REQUEST], reqId) then
    if (tonumber(h[EXPIRES]) or 0) > NOW then
      if h[POLL_OFFERED] == '1' then
        -- The poll that takes up a grant pushed to us. Only the state key's expiry follows (the grant
        -- set it for the granting replica's leaseMs, which may be shorter than ours): the queue lives
        -- on with its waiters' takes and polls.
        take_up(state, h[HOLDER], inc, leaseMs)
        redis.call('PEXPIRE', state, lease_key_ttl(leaseMs, idleTtl))
      else
        redis.call('HSET', state, CHAT.expiresAt, fmt(NOW + leaseMs), CHAT.lastRenewal, fmt(NOW), waiter_field(inc), fmt(NOW + ticket_life_ms(leaseMs)))
        touch(state, queue, leaseMs, idleTtl)
      end
      return { TURN.granted, ticket, h[FENCE], h[POLL_PREV] or false, h[POLL_PREV_INC] or false }
    end
    grant_next({ state = state, queue = queue, leaseMs = leaseMs, wake = wake, callerTicket = ticket, releasing = true,
      last = { h[LAST], h[LAST_INC], h[FENCE] }, queued = (tonumber(h[POLL_LAST_TICKET]) or 0) > tonumber(ticket) })
    touch(state, queue, leaseMs, idleTtl)
    return { TURN.lapsed, ticket }
  end
  local t = parse_ticket(h[POLL_TICKET])
  if not t or t.inc ~= inc or not owns(h[POLL_TICKET_REQUEST], reqId) then
    -- Our ticket is gone, or its number is another's. With the chat's whole state, not our ticket
    -- alone, when: there is no fence at all (flushed, evicted, lost); the state's epoch is not the one
    -- our take saw (lost and made again since, by another replica's take, whatever tickets it issued);
    -- or, with no epoch known, it issued fewer tickets than ours (numbers started again).
    if not h[FENCE] or (sentEpoch ~= '' and epoch ~= sentEpoch)
      or (not t and (tonumber(h[POLL_LAST_TICKET]) or 0) < tonumber(ticket)) then
      return { TURN.stateLost }
    end
    -- Not by an operator: skipped as a dead replica's (we did not poll in time: frozen, cut off, too
    -- slow), or granted to us (offered) and lapsed before this poll. We were too late; the mark has served.
    local mark = h[POLL_PRESUMED]
    if mark == inc or mark == LAPSED_MARK .. inc then
      redis.call('HDEL', state, CHAT.presumedDeadPrefix .. ticket)
      if mark == inc then return { TURN.presumedDead } end
      return { TURN.lapsed, ticket }
    end
    return { TURN.dropped }
  end
  -- One field keeps every queued ticket of this incarnation in the chat alive (see ticket_live).
  redis.call('HSET', state, waiter_field(inc), fmt(NOW + ticket_life_ms(leaseMs)))
end

-- Polling: the holder as read above. A new ticket behind a lapsed holder: grant_next reads it.
-- Our ticket is queued (its field is there): a queue found empty lost it (requeue_lost).
local g = grant_next({ state = state, queue = queue, leaseMs = leaseMs, wake = wake, callerTicket = ticket,
  holder = not fresh and { h[HOLDER], h[EXPIRES], h[POLL_HOLDER_INC], h[POLL_HOLDER_TICKET] } or nil, last = { h[LAST], h[LAST_INC], h[FENCE] },
  queued = true })
touch(state, queue, leaseMs, idleTtl)
if g and g.ticket == ticket then
  return { TURN.granted, ticket, g.fence, g.ph or false, g.phi or false, alone }
end
if g then return queued_reply(g.left) end
-- Still held by the holder read above (grant_next read it itself after a fresh take: nobody held it).
return queued_reply(fresh and leaseMs or math.max(0, (tonumber(h[EXPIRES]) or 0) - NOW))
