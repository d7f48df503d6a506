-- Lead helpers. A lead hash holds:
--   h/hi/f/exp/g/lr: holder replicaId/incarnation, fence, expiry, since, last renewal (while held; f stays);
--   lh/lhi: last holder; ph/phi: the holder before the current one; rel: when the last holder let go
--   (released or expired, Redis ms); rw/rb: how it let go ('released', 'yielded' (released while an
--   operator's yield request was pending), 'expired', 'revoked', 'evicted') and, when revoked, by whom;
--   hg/hw/hb: how long the last handover took (rel -> grant, ms), how it happened (rw) and by whom (rb);
--   td/tdy: while held, the leader's transport is down since (Redis ms) and the leader yields at
--   (Redis ms) unless it comes back up (lead-transport-1);
--   yr/yt/yexp/yat: a pending yield request (by whom, target replicaId, until, at);
--   c:<incarnation>: "deadline|replicaId" of each replica standing as a candidate (campaigning).

local function clear_lead_holder(key)
  redis.call('HDEL', key, 'h', 'hi', 'exp', 'g', 'lr', 'td', 'tdy')
end

-- The last holder let go now-ish (at `at`), this way (`how`), by `by` (an operator, or nil).
local function mark_let_go(key, at, how, by)
  redis.call('HSET', key, 'rel', at, 'rw', how)
  if by and by ~= '' then
    redis.call('HSET', key, 'rb', by)
  else
    redis.call('HDEL', key, 'rb')
  end
end

local function touch_lead(key, leaseMs, idleTtl)
  redis.call('PEXPIRE', key, fmt(leaseMs * 2 + idleTtl))
end

-- Live candidates as { incarnation = replicaId }; expired entries are pruned on the way.
local function live_candidates(key)
  local all = redis.call('HGETALL', key)
  local live = {}
  for i = 1, #all, 2 do
    local field = all[i]
    if string.sub(field, 1, 2) == 'c:' then
      local d, rid = string.match(all[i + 1], '^(%d+)|(.*)$')
      if d and tonumber(d) > NOW then
        live[string.sub(field, 3)] = rid
      else
        redis.call('HDEL', key, field)
      end
    end
  end
  return live
end

local function candidate_standing(key, replicaId)
  for _, rid in pairs(live_candidates(key)) do
    if rid == replicaId then return true end
  end
  return false
end

-- Wake every live candidate of a lead (on its incarnation's channel) to stand at once: the lead was
-- let go or taken away.
local function wake_candidates(key, wake)
  for cinc, _ in pairs(live_candidates(key)) do
    redis.pcall('PUBLISH', wake .. cinc, '-|' .. key) -- refused (ACL): the candidates poll
  end
end
