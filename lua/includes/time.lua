-- Redis's own clock, read once per script: lease arithmetic never uses a replica's clock.
local BMC_T = redis.call('TIME')
local NOW_US = tonumber(BMC_T[1]) * 1000000 + tonumber(BMC_T[2])
local NOW = math.floor(NOW_US / 1000)

-- Integers as exact decimal strings (a Lua number passed to redis.call would be printed with %.14g).
local function fmt(n)
  return string.format('%d', n)
end

-- The TTL (ms, as a decimal string) a lease's key — a chat's state hash and queue, a lead hash — is
-- given at each grant, renewal, poll or ticket taken: two leases and the idle TTL (idleKeyTtlMs), so
-- a held key never expires under its holder and an idle one cleans itself up.
local function lease_key_ttl(leaseMs, idleTtl)
  return fmt(leaseMs * 2 + idleTtl)
end

-- A fenced lock's key lives its own TTL and the idle TTL after each acquisition or renewal.
local function lock_key_ttl(ttl, idleTtl)
  return fmt(ttl + idleTtl)
end

-- A fence or revision for a key: above the last one AND above Redis's clock in microseconds, so it
-- keeps growing after the key was cleaned up or lost in a failover that dropped the last writes.
-- A `last` that is not a decimal integer below 2^53 - 1 (a corrupt or hand-written value: 2^53 + 1
-- would grant the same fence again, 1e300 a negative one) is refused with an error reply naming
-- `key` (default KEYS[1], the hash the fence is kept in); a script whose grant path writes before it
-- calls next_fence calls check_fence first, so the refusal comes before any write. check_fence returns
-- the fence as a number (nil: none), read once.
local function check_fence(last, key)
  if not last then return nil end
  local n = string.match(last, '^%d+$') and #last <= 16 and tonumber(last)
  if not n or n >= 9007199254740991 then
    error(redis.error_reply('ERR botmesh corrupt fence at ' .. tostring(key or KEYS[1])))
  end
  return n
end

local function next_fence(last, key)
  local f = (check_fence(last, key) or 0) + 1
  if NOW_US > f then f = NOW_US end
  return f
end
