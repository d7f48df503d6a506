-- Chat turn helpers (need the time, wake and chat includes before them). The fields are named in CHAT
-- (lua/includes/chat.lua); this file and the scripts that include it are the only writers.

-- A grant pushed to another replica is an offer until that replica takes it up. A queued ticket
-- lives ticket_life_ms after its replica's last take or poll in this chat (w:<incarnation>: one field
-- per replica and chat, so only a replica's oldest waiting message of a chat has to poll, for all of
-- them), and an offer runs until then plus take_up_ms (offer_ms): a lease after that replica's last
-- sign of life here, as a holder's lease runs a lease after its last renewal, and at least take_up_ms.
-- One its waiter does not take up (the replica died, froze or lost Redis) lapses and passes on: the
-- chat is free at most leaseMs after the waiter's death. The waiter takes it up with a poll (take_up),
-- or — when the push is of the ticket its take queued (e) and came after a call of its was answered
-- (g) — uses it at once, as a lease granted when that call was sent, and takes it up with a renewal
-- if it still holds the turn when a renewal would be due; a release before that (served) makes it
-- the last holder, as a take-up would.
local function take_up_ms(leaseMs)
  return math.floor(leaseMs / 3)
end

local function ticket_life_ms(leaseMs)
  return leaseMs - take_up_ms(leaseMs)
end

-- A queued ticket's t: value; `deadline` already a decimal string (its incarnation's w: value as the
-- take writes it).
local function ticket_value(deadline, enqueued, inc, rid)
  return deadline .. '|' .. fmt(enqueued) .. '|' .. inc .. '|' .. rid
end

local function parse_ticket(v)
  if not v then return nil end
  local d, e, i, r = string.match(v, '^(%d+)|(%d+)|([^|]*)|(.*)$')
  if not d then return nil end
  return { deadline = tonumber(d), enq = tonumber(e), inc = i, rid = r }
end

local function ticket_field(ticket)
  return CHAT.ticketPrefix .. ticket
end

-- w:<incarnation>: until when (Redis ms) that incarnation's queued tickets in this chat live.
local function waiter_field(inc)
  return CHAT.waiterPrefix .. inc
end

-- The deadline of incarnation `inc`'s queued tickets in this chat (w:, 0: none), cached in `seen`.
local function waiter_deadline(state, inc, seen)
  local d = seen[inc]
  if d == nil then
    d = tonumber(redis.call('HGET', state, waiter_field(inc))) or 0
    seen[inc] = d
  end
  return d
end

-- Is queued ticket t live: its own deadline (set when taken) or its incarnation's in this chat not
-- passed? `seen` caches the incarnations' deadlines read in this script.
local function ticket_live(state, t, seen)
  return t.deadline > NOW or waiter_deadline(state, t.inc, seen) > NOW
end

-- How long (ms from now) an offer to live ticket t runs: until the later of its own deadline and its
-- incarnation's (the replica's last take or poll here, plus ticket_life_ms), plus take_up_ms (see the
-- top of this file).
local function offer_ms(state, t, seen, leaseMs)
  return math.max(t.deadline, waiter_deadline(state, t.inc, seen)) - NOW + take_up_ms(leaseMs)
end

-- The field naming the ticket that acquisition `requestId` of incarnation `inc` took (request ids
-- are unique within an incarnation only).
local function request_field(inc, requestId)
  return CHAT.requestPrefix .. inc .. ':' .. requestId
end

local function ticket_request_field(ticket)
  return CHAT.ticketRequestPrefix .. ticket
end

-- Is a ticket whose acquisition's request id was recorded as `recorded` (q:<ticket>, or hq for the
-- holder) the one of the acquisition `reqId`? Tickets are numbers, and a number is given again after
-- Redis lost its last writes (a failover to a standby behind, a restart without data, an evicted
-- key), maybe to another message of the same replica: its incarnation alone cannot tell the two
-- apart. Request ids are unique within an incarnation: callers check the incarnation beside this.
-- Nothing recorded (a ticket of an older client) or no request id given: the incarnation decides.
local function owns(recorded, reqId)
  return not recorded or reqId == '' or recorded == reqId
end

-- x:<ticket> of a dead holder's ticket (an offer that lapsed untaken): this, then its incarnation.
local LAPSED_MARK = 'l:'

-- The turn is nobody's now (the fence and the last holder stay); `...` are more fields to delete with it.
-- (An offer mark, 'of', is deleted with it: a grant writes its own.)
local function clear_holder(state, ...)
  redis.call('HDEL', state, CHAT.holder, CHAT.holderIncarnation, CHAT.holderTicket, CHAT.holderRequest, CHAT.expiresAt,
    CHAT.grantedAt, CHAT.lastRenewal, CHAT.waited, CHAT.offered, ...)
end

-- A queued ticket leaves the queue (granted, withdrawn, dropped or skipped).
local function remove_ticket(state, queue, ticket)
  redis.call('ZREM', queue, ticket)
  redis.call('HDEL', state, ticket_field(ticket), ticket_request_field(ticket))
end

-- A queue that lost its tickets while the hash kept them (Redis evicted the queue key alone, under
-- an evicting maxmemory-policy) is rebuilt from the hash's t:<ticket> fields, which are exactly the
-- queued tickets: every grant, withdrawal and skip deletes a ticket's field with its queue entry.
-- The oldest is then granted first again. One HGETALL, only when a queue that should be there is not.
-- Returns how many tickets went back.
local function requeue_lost(state, queue)
  local all, args, n, count = redis.call('HGETALL', state), {}, 0, 0
  local pattern = '^' .. CHAT.ticketPrefix .. '(%d+)$'
  for i = 1, #all, 2 do
    local ticket = string.match(all[i], pattern)
    if ticket then
      args[n + 1], args[n + 2], n, count = ticket, ticket, n + 2, count + 1
      if n >= 2000 then
        redis.call('ZADD', queue, unpack(args, 1, n))
        n = 0
      end
    end
  end
  if n > 0 then redis.call('ZADD', queue, unpack(args, 1, n)) end
  return count
end

-- Keep an active chat alive; an idle one expires idleTtl after its last write (fences stay
-- monotonic without it, see next_fence). PEXPIRE of a queue that is gone does nothing.
local function touch(state, queue, leaseMs, idleTtl)
  local ttl = lease_key_ttl(leaseMs, idleTtl)
  redis.call('PEXPIRE', state, ttl)
  redis.call('PEXPIRE', queue, ttl)
end

-- Make `ticket` of (rid, inc) and of the acquisition `reqId` ('' or false: unknown) the holder for
-- leaseMs from now, with the next fence; the last holder becomes the previous one. `last` is
-- { lastHolder, lastHolderIncarnation, fence } as read from the hash; `extra` are more field/value
-- pairs to write with the grant. `offerMs`: the length of a grant pushed to another replica (offer_ms),
-- which becomes the last holder only when taken up (take_up) — one that lapses served nothing; nil:
-- not offered, the lease runs leaseMs. Returns the fence.
local function grant_turn(state, ticket, rid, inc, reqId, leaseMs, waited, last, extra, offerMs)
  local fence = fmt(next_fence(last[3]))
  local now, hasReq = fmt(NOW), reqId and reqId ~= ''
  local fields = { CHAT.holder, rid, CHAT.holderIncarnation, inc, CHAT.holderTicket, ticket, CHAT.fence, fence,
    CHAT.expiresAt, fmt(NOW + (offerMs or leaseMs)), CHAT.grantedAt, now, CHAT.lastRenewal, now, CHAT.waited, waited == 0 and '0' or fmt(waited) }
  local n = #fields
  if offerMs then
    fields[n + 1], fields[n + 2] = CHAT.offered, '1'
  else
    fields[n + 1], fields[n + 2], fields[n + 3], fields[n + 4], fields[n + 5], fields[n + 6] = CHAT.lastHolder, rid,
      CHAT.lastHolderIncarnation, inc, CHAT.offered, '0'
  end
  n = #fields
  if last[1] then
    fields[n + 1], fields[n + 2], fields[n + 3], fields[n + 4] = CHAT.previousHolder, last[1], CHAT.previousHolderIncarnation, last[2] or ''
    n = n + 4
  end
  if hasReq then
    fields[n + 1], fields[n + 2] = CHAT.holderRequest, reqId
    n = n + 2
  end
  if extra then
    for i = 1, #extra do fields[n + i] = extra[i] end
  end
  redis.call('HSET', state, unpack(fields))
  if not last[1] then redis.call('HDEL', state, CHAT.previousHolder, CHAT.previousHolderIncarnation) end
  if not hasReq then redis.call('HDEL', state, CHAT.holderRequest) end
  return fence
end

-- The holder (rid, inc) takes up an offered grant: its lease runs its own leaseMs from now, and it is
-- the chat's last holder from here on. Its incarnation's other tickets in the chat live on from here.
local function take_up(state, rid, inc, leaseMs)
  redis.call('HSET', state, CHAT.expiresAt, fmt(NOW + leaseMs), CHAT.lastRenewal, fmt(NOW), CHAT.lastHolder, rid,
    CHAT.lastHolderIncarnation, inc, CHAT.offered, '0', waiter_field(inc), fmt(NOW + ticket_life_ms(leaseMs)))
end

-- Grant the turn to the oldest live ticket when nobody holds a valid lease. Dead tickets (see
-- ticket_live: their replica died, froze or lost Redis) are dropped on the way, with their
-- incarnation's lapsed w: field. Called with one options table:
--   state, queue, leaseMs, wake   the chat's keys, the lease to grant, the wake channel prefix
--   callerTicket   the caller's own ticket: granted to it, it is not woken ('' for an operator)
--   releasing      true: the caller gives its turn back in this call and left the holder's fields (a
--                  grant overwrites them where they are, first in the hash, where every read finds
--                  them soonest; with no grant they are deleted here)
--   holder         otherwise { holder, expiresAt, holderIncarnation, holderTicket } as the caller read
--                  them (nil: read here): a live lease means nothing is granted; one that ran out is
--                  a dead holder's, and its ticket is marked x:<ticket> = 'l:' .. incarnation (a poll
--                  of it, should it come — an offer its waiter never took up — learns it lapsed)
--   last           { lastHolder, lastHolderIncarnation, fence } as the caller read them (nil: read here)
--   localInc       the caller's incarnation: a ticket of it is handed over in the caller's reply
--                  (g.mine), not woken
--   drop           more fields to delete (the releasing acquisition's request id field), with the
--                  popped tickets' fields in one HDEL
--   lastHolder     nil, or { CHAT.lastHolder, rid, CHAT.lastHolderIncarnation, inc }: the releasing holder
--                  becomes the chat's last holder (it served an offer it never took up), written with
--                  an offered grant (which leaves the last holder as it is), else on its own; a grant
--                  that is not offered makes its grantee the last holder anyway
--   queued         true: a ticket is known to be queued (the polling caller's own, or ones issued after
--                  the releasing holder's), so a queue found empty lost them (requeue_lost); false: no
--                  ticket was issued after the releasing holder's, so nobody is queued and the queue is
--                  not read; nil: not known
--   next           nil, or { ticket, its t: field, its q: field } as the caller read them before any
--                  write: the ticket most likely at the head (the one issued right after the releasing
--                  holder's), read with the caller's own fields; popped first, it is not read again
-- Any other grantee is woken on its incarnation's channel with the grant as JSON: { t = ticket, q = its
-- request id, f = fence, l = the offer's length (ms), k = raw state key, p/pi = previous holder, g =
-- Redis's clock (µs) at the grant, e = when the ticket was queued (Redis ms, as its take saw it) }.
-- Returns { ticket, fence, ph/phi = previous holder, q = its request id, mine = a ticket of localInc,
-- offered, left = its lease (ms) }, or nil: still held, or nobody queued.
local function grant_next(o)
  local state, queue, leaseMs, wake, callerTicket, last, localInc = o.state, o.queue, o.leaseMs, o.wake, o.callerTicket,
    o.last, o.localInc
  local drop = o.drop or {}
  local deadInc, vacating = nil, o.releasing == true
  -- Each one skipped as presumed dead leaves x:<ticket> = its incarnation: its poll, if it comes after
  -- all (a replica too slow, not dead), learns it was too late, not skipped by an operator.
  local tombs = {}
  if not vacating then
    local cur = o.holder or redis.call('HMGET', state, CHAT.holder, CHAT.expiresAt, CHAT.holderIncarnation, CHAT.holderTicket)
    if cur[1] then
      if (tonumber(cur[2]) or 0) > NOW then return nil end
      if cur[3] and cur[4] then tombs = { CHAT.presumedDeadPrefix .. cur[4], LAPSED_MARK .. cur[3] } end
      -- A holder whose lease ran out did not renew for a whole lease: its process is dead, frozen or
      -- cut off, so its own tickets queued behind it (refreshed until it stopped) are dead too. Only
      -- its tickets popped here go: its w: field stays, so a replica that is alive after all (slow to
      -- take an offer up) keeps its later tickets, and a dead one's lapse with that field.
      deadInc, vacating = cur[3], true
    end
  end
  local seen, skipped = {}, 0
  -- Dead tickets skipped on the way are counted once, and their fields deleted a batch at a time (a
  -- run of thousands would pass Lua's unpack limit in one HDEL and fail the script half-written).
  local function settle_skipped()
    if skipped > 0 then redis.call('HINCRBY', state, CHAT.skipped, skipped) end
    if #tombs > 0 then
      redis.call('HSET', state, unpack(tombs))
      tombs = {}
    end
  end
  local queued = o.queued
  while true do
    local head = queued ~= false and redis.call('ZPOPMIN', queue)[1] or nil
    if not head and queued and requeue_lost(state, queue) > 0 then head = redis.call('ZPOPMIN', queue)[1] end
    queued = nil
    if not head then
      settle_skipped()
      if o.lastHolder then redis.call('HSET', state, unpack(o.lastHolder)) end
      if vacating then
        clear_holder(state, unpack(drop))
      elseif #drop > 0 then
        redis.call('HDEL', state, unpack(drop))
      end
      return nil
    end
    local ahead = o.next
    local tq = ahead and head == ahead[1] and { ahead[2], ahead[3] }
      or redis.call('HMGET', state, ticket_field(head), ticket_request_field(head))
    local t, q = parse_ticket(tq[1]), tq[2]
    drop[#drop + 1] = ticket_field(head)
    drop[#drop + 1] = ticket_request_field(head)
    if t and t.inc ~= deadInc and ticket_live(state, t, seen) then
      -- A vacated holder's offer mark goes with the popped tickets' fields (an offer writes its own).
      if vacating then drop[#drop + 1] = CHAT.offered end
      settle_skipped()
      redis.call('HDEL', state, unpack(drop))
      last = last or redis.call('HMGET', state, CHAT.lastHolder, CHAT.lastHolderIncarnation, CHAT.fence)
      local mine = t.inc == localInc
      -- The caller's own ticket, or one its release hands over in its reply: its replica is alive and
      -- takes the turn now. Any other is offered (see the top of this file) and its replica woken.
      local offered = head ~= callerTicket and not mine
      local offerMs = offered and offer_ms(state, t, seen, leaseMs) or nil
      local fence = grant_turn(state, head, t.rid, t.inc, q, leaseMs, NOW - t.enq, last, offered and o.lastHolder or nil, offerMs)
      if offered then
        -- The grant travels in the wake-up with the offer's length (a client that takes a pushed
        -- grant without polling holds it no longer than Redis keeps it).
        publish_wake(wake .. t.inc, cjson.encode({ t = head, q = q or '', f = fence, l = offerMs, k = state,
          p = last[1] or '', pi = last[2] or '', g = fmt(NOW_US), e = fmt(t.enq) }))
      end
      return { ticket = head, fence = fence, ph = last[1], phi = last[2], q = q, mine = mine, offered = offered,
        left = offerMs or leaseMs }
    end
    if t and t.inc ~= deadInc then drop[#drop + 1] = waiter_field(t.inc) end
    if t then
      local n = #tombs
      tombs[n + 1], tombs[n + 2] = CHAT.presumedDeadPrefix .. head, t.inc
    end
    skipped = skipped + 1
    if #drop >= 3000 then
      redis.call('HDEL', state, unpack(drop))
      drop = {}
    end
    if #tombs >= 3000 then
      redis.call('HSET', state, unpack(tombs))
      tombs = {}
    end
  end
end
