#!lua flags=no-writes,allow-cross-slot-keys
--[[
  read-hashes-0: the hashes of one SCAN batch of one node, for the listings, in one call instead of one
  HGETALL each. Read-only; the keys are this node's (a cluster node may serve them from many slots).

  ARGV the hash keys to read (any number; as SCAN returned them)

  Returns two entries per key, in order: the number of fields and values, and them joined with NUL
  (one reply element per key instead of one per field; a value with a NUL in it shows as a count that
  does not match, and the reader reads that key with HGETALL). 0 and '' when the key is gone, -1 and
  '' when it holds another type.
]]
local out = {}
for i = 1, #ARGV do
  local r = redis.pcall('HGETALL', ARGV[i])
  if r.err then
    out[2 * i - 1], out[2 * i] = -1, ''
  else
    out[2 * i - 1], out[2 * i] = #r, table.concat(r, '\0')
  end
end
return out
