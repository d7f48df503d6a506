-- Redis's own clock, read once per script: lease arithmetic never uses a replica's clock.
local BMC_T = redis.call('TIME')
local NOW_US = tonumber(BMC_T[1]) * 1000000 + tonumber(BMC_T[2])
local NOW = math.floor(NOW_US / 1000)

-- Integers as exact decimal strings (a Lua number passed to redis.call would be printed with %.14g).
local function fmt(n)
  return string.format('%d', n)
end

-- A fence or revision for a key: above the last one AND above Redis's clock in microseconds, so it
-- keeps growing after the key was cleaned up or lost in a failover that dropped the last writes.
local function next_fence(last)
  local f = (tonumber(last) or 0) + 1
  if NOW_US > f then f = NOW_US end
  return f
end
