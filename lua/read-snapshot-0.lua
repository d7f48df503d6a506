#!lua flags=no-writes,allow-cross-slot-keys
--[[
  read-snapshot-0: the hashes of one SCAN batch of one node for a snapshot, whole, in one call and
  bounded: a hash of more than `maxFields` fields is not read here (the reader reads it by HSCAN
  pages), and once `budget` fields have been read the keys left are not read either (the reader
  asks again for them). A key's private fields (a checkpoint's or marker's data, kept only with
  --include-state) are read as their sizes (HSTRLEN), never their values. Read-only; the keys are
  this node's (a cluster node may serve many slots).

  ARGV[1]  budget: fields read in this call before the keys left are answered "not read"
  ARGV[2]  maxFields: a hash with more fields is answered "many"
  ARGV[3 ..] per key three entries: the key, '1' to read its PTTL (else '0'), and the fields to read
           as sizes joined with ',' ('' for none)

  Returns four entries per key, in order:
    the number of fields and values read (-1: another type, -2: many fields, -3: not read), them
    joined with NUL (a value with a NUL in it shows as a count that does not match: the reader reads
    that key again without the script), the private fields' sizes as `field NUL size NUL ...`, and
    the PTTL (-3 when not asked). A key that is gone: 0, '', '', its PTTL.
]]

local budget = tonumber(ARGV[1])
local maxFields = tonumber(ARGV[2])
local out = {}
local read = 0
-- The private fields named by each distinct list, as a set: parsed once per call, not once per key
-- (every checkpoint of a batch names the same ones).
local hiddenOf = {}

for i = 3, #ARGV, 3 do
  local key, ttl, private = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local n = #out
  local size = redis.pcall('HLEN', key)
  if type(size) ~= 'number' then
    out[n + 1], out[n + 2], out[n + 3], out[n + 4] = -1, '', '', -3
  elseif size > maxFields then
    out[n + 1], out[n + 2], out[n + 3], out[n + 4] = -2, '', '', -3
  elseif read >= budget then
    out[n + 1], out[n + 2], out[n + 3], out[n + 4] = -3, '', '', -3
  else
    read = read + size
    local kept, sizes = {}, {}
    if private == '' then
      kept = redis.call('HGETALL', key)
    else
      -- The private fields' values are never read, only their lengths: a 50 MB checkpoint costs
      -- what a small one does.
      local hidden = hiddenOf[private]
      if not hidden then
        hidden = {}
        for f in string.gmatch(private, '[^,]+') do
          hidden[f] = true
        end
        hiddenOf[private] = hidden
      end
      local names, wanted, w, s = redis.call('HKEYS', key), {}, 0, 0
      for j = 1, #names do
        local name = names[j]
        if hidden[name] then
          sizes[s + 1], sizes[s + 2], s = name, tostring(redis.call('HSTRLEN', key, name)), s + 2
        else
          wanted[w + 1], w = name, w + 1
        end
      end
      if w > 0 then
        local values, k = redis.call('HMGET', key, unpack(wanted)), 0
        for j = 1, w do
          if values[j] then
            kept[k + 1], kept[k + 2], k = wanted[j], values[j], k + 2
          end
        end
      end
    end
    out[n + 1], out[n + 2], out[n + 3] = #kept, table.concat(kept, '\0'), table.concat(sizes, '\0')
    out[n + 4] = ttl == '1' and redis.call('PTTL', key) or -3
  end
end
return out
