-- Lead helpers (need the time, wake and lead-fields includes before them). A lead hash's fields are
-- named in LEAD (lua/includes/lead-fields.lua): the holder's while held (its transport's state too),
-- the last and the previous holder, how and when the last holder let go and how long the last
-- handover took, a pending yield request, and one c:<incarnation> field per standing candidate.

local function clear_lead_holder(key)
  redis.call('HDEL', key, LEAD.holder, LEAD.holderIncarnation, LEAD.expiresAt, LEAD.grantedAt, LEAD.lastRenewal,
    LEAD.transportDownSince, LEAD.transportYieldsAt)
end

-- The last holder let go now-ish (at `at`), this way (`how`), by `by` (an operator, or nil).
local function mark_let_go(key, at, how, by)
  redis.call('HSET', key, LEAD.releasedAt, at, LEAD.releasedHow, how)
  if by and by ~= '' then
    redis.call('HSET', key, LEAD.releasedBy, by)
  else
    redis.call('HDEL', key, LEAD.releasedBy)
  end
end

local function touch_lead(key, leaseMs, idleTtl)
  redis.call('PEXPIRE', key, lease_key_ttl(leaseMs, idleTtl))
end

-- c:<incarnation>: the candidacy of that incarnation ("deadline|replicaId").
local function candidate_field(inc)
  return LEAD.candidatePrefix .. inc
end

-- Live candidates as { incarnation = replicaId }; expired entries are pruned on the way.
local function live_candidates(key)
  local all = redis.call('HGETALL', key)
  local live = {}
  for i = 1, #all, 2 do
    local field = all[i]
    if string.sub(field, 1, #LEAD.candidatePrefix) == LEAD.candidatePrefix then
      local d, rid = string.match(all[i + 1], '^(%d+)|(.*)$')
      if d and tonumber(d) > NOW then
        live[string.sub(field, #LEAD.candidatePrefix + 1)] = rid
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
    publish_wake(wake .. cinc, '-|' .. key)
  end
end
