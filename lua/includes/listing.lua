-- What a listing reads of one hash (read-listing-0, read-chat-2): its named fields, its field count,
-- and by mode the head of its queue ('chat': the first `limit` tickets' t:/q: fields, the w: fields
-- of their incarnations, and `also`, tickets read wherever they stand), a page of its candidates
-- ('lead': HSCAN MATCH c:* COUNT limit, at most 4 calls), or a field's length (`measured`). Bounded
-- whatever the hash holds. Returns the number of fields and values read, them joined with NUL, HLEN,
-- and the queue's length (-1: another type), the measured length or 0; -1, '', 0, 0 for a key of
-- another type, 0, '', 0, 0 for a key that is gone. Needs the chat and lead-fields includes before it.

-- HMGET in slices: unpack() has a limit on the number of values it spreads.
local function listing_hmget(key, fields, into)
  for from = 1, #fields, 1000 do
    local slice = {}
    for j = from, math.min(from + 999, #fields) do
      slice[#slice + 1] = fields[j]
    end
    local values = redis.call('HMGET', key, unpack(slice))
    for j = 1, #slice do
      if values[j] then
        into[#into + 1] = slice[j]
        into[#into + 1] = values[j]
      end
    end
  end
end

-- `offset` (chat mode): the tickets read start that far from the head (0 or nil: at the head).
local function listing_read(mode, key, queue, named, limit, measured, also, offset)
  local size = redis.pcall('HLEN', key)
  if type(size) ~= 'number' then return -1, '', 0, 0 end
  if size == 0 then return 0, '', 0, 0 end
  local read = {}
  if #named > 0 then listing_hmget(key, named, read) end
  local extra = 0
  if mode == 'chat' then
    local length = redis.pcall('ZCARD', queue)
    if type(length) ~= 'number' then
      extra = -1
    else
      extra = length
      local tickets = {}
      local from = offset or 0
      if length > from and limit > 0 then tickets = redis.call('ZRANGE', queue, from, from + limit - 1) end
      local fields = {}
      for j = 1, #tickets do
        fields[#fields + 1] = CHAT.ticketPrefix .. tickets[j]
        fields[#fields + 1] = CHAT.ticketRequestPrefix .. tickets[j]
      end
      for j = 1, #also do
        fields[#fields + 1] = CHAT.ticketPrefix .. also[j]
        fields[#fields + 1] = CHAT.ticketRequestPrefix .. also[j]
      end
      local before = #read
      listing_hmget(key, fields, read)
      local waiters, seen = {}, {}
      for j = before + 1, #read, 2 do
        local inc = string.match(read[j + 1], '^%d+|%d+|([^|]*)|')
        if string.sub(read[j], 1, #CHAT.ticketPrefix) == CHAT.ticketPrefix and inc and not seen[inc] then
          seen[inc] = true
          waiters[#waiters + 1] = CHAT.waiterPrefix .. inc
        end
      end
      listing_hmget(key, waiters, read)
    end
  elseif mode == 'lead' and limit > 0 then
    local cursor, calls, found = '0', 0, 0
    repeat
      local r = redis.call('HSCAN', key, cursor, 'MATCH', LEAD.candidatePrefix .. '*', 'COUNT', limit)
      cursor, calls = r[1], calls + 1
      for j = 1, #r[2] do
        read[#read + 1] = r[2][j]
      end
      found = found + #r[2] / 2
    until cursor == '0' or found >= limit or calls >= 4
  end
  if measured ~= '' then extra = redis.call('HSTRLEN', key, measured) end
  return #read, table.concat(read, '\0'), size, extra
end
