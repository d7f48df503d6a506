-- Chat turn helpers. A chat's state hash holds:
--   n: last ticket issued; f: last fence; h/hi/ht: holder replicaId/incarnation/ticket (only while held);
--   exp/g/lr: lease expiry, grant time, last renewal (Redis ms); lh/lhi: the last holder (kept after release);
--   ph/phi: the holder before the current grant; wt: the current holder's wait; sk: dead tickets skipped;
--   t:<ticket>: "deadline|enqueuedAt|incarnation|replicaId" for each queued ticket.

local function ticket_value(deadline, enqueued, inc, rid)
  return fmt(deadline) .. '|' .. fmt(enqueued) .. '|' .. inc .. '|' .. rid
end

local function parse_ticket(v)
  if not v then return nil end
  local d, e, i, r = string.match(v, '^(%d+)|(%d+)|([^|]*)|(.*)$')
  if not d then return nil end
  return { deadline = tonumber(d), enq = tonumber(e), inc = i, rid = r }
end

local function clear_holder(state)
  redis.call('HDEL', state, 'h', 'hi', 'ht', 'exp', 'g', 'lr', 'wt')
end

-- Keep an active chat alive; an idle one expires idleTtl after its last write (fences stay
-- monotonic without it, see next_fence).
local function touch(state, queue, leaseMs, idleTtl)
  local ttl = fmt(leaseMs * 2 + idleTtl)
  redis.call('PEXPIRE', state, ttl)
  if redis.call('EXISTS', queue) == 1 then redis.call('PEXPIRE', queue, ttl) end
end

-- Grant the turn to the oldest live ticket when nobody holds a valid lease. Dead tickets (not
-- refreshed within leaseMs: their replica died, froze or lost Redis) are dropped on the way.
-- Wakes the grantee on its incarnation's channel unless it is the caller's own ticket, with the
-- grant as JSON: { t = ticket, f = fence, l = leaseMs, k = raw state key, p/pi = previous holder }.
local function grant_next(state, queue, leaseMs, wake, callerTicket)
  local cur = redis.call('HMGET', state, 'h', 'exp', 'hi')
  -- A holder whose lease ran out did not renew for a whole lease: its process is dead, frozen or cut
  -- off, so its own tickets queued behind it (refreshed until it stopped) are dead too.
  local deadInc = nil
  if cur[1] then
    if (tonumber(cur[2]) or 0) > NOW then return nil end
    deadInc = cur[3]
    clear_holder(state)
  end
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then return nil end
    local t = parse_ticket(redis.call('HGET', state, 't:' .. head))
    redis.call('ZREM', queue, head)
    redis.call('HDEL', state, 't:' .. head)
    if t and t.deadline > NOW and t.inc ~= deadInc then
      local last = redis.call('HMGET', state, 'lh', 'lhi', 'f')
      local fence = fmt(next_fence(last[3]))
      redis.call('HSET', state, 'h', t.rid, 'hi', t.inc, 'ht', head, 'f', fence,
        'exp', fmt(NOW + leaseMs), 'g', fmt(NOW), 'lr', fmt(NOW), 'lh', t.rid, 'lhi', t.inc, 'wt', fmt(NOW - t.enq))
      if last[1] then
        redis.call('HSET', state, 'ph', last[1], 'phi', last[2] or '')
      else
        redis.call('HDEL', state, 'ph', 'phi')
      end
      if head ~= callerTicket then
        -- The grant itself travels in the wake-up, so the waiter can take the turn without another
        -- round trip (it bounds its local deadline by the send time of its last 'queued' poll).
        redis.call('PUBLISH', wake .. t.inc, cjson.encode({ t = head, f = fence, l = leaseMs, k = state,
          p = last[1] or '', pi = last[2] or '' }))
      end
      return { ticket = head, fence = fence, ph = last[1], phi = last[2] }
    end
    redis.call('HINCRBY', state, 'sk', 1)
  end
end
