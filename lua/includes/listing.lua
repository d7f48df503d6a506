-- What a listing reads of one hash (read-listing-0, read-chat-2): its named fields, its field count,
-- and by mode the head of its queue ('chat': the first `limit` tickets' t:/q: fields, the w: fields
-- of their incarnations, and `also`, tickets read wherever they stand), a page of its candidates
-- ('lead': HSCAN MATCH c:* COUNT limit, at most 4 calls), or a field's length (`measured`). Bounded
-- whatever the hash holds. Returns the number of fields and values read, them joined with NUL, HLEN,
-- and the queue's length (-1: another type), the measured length or 0; -1, '', 0, 0 for a key of
-- another type, 0, '', 0, 0 for a key that is gone. Needs the chat and lead-fields includes before it.

-- HMGET in slices of at most 1000 fields (unpack() has a limit on the number of values it spreads),
-- each read straight from `fields` (no copy); the fields found and their values go on `into`, whose
-- length is `n` (returns the new length).
local function listing_hmget(key, fields, into, n)
  local count = #fields
  for from = 1, count, 1000 do
    local values = redis.call('HMGET', key, unpack(fields, from, math.min(from + 999, count)))
    for j = 1, #values do
      local v = values[j]
      if v then
        into[n + 1], into[n + 2], n = fields[from + j - 1], v, n + 2
      end
    end
  end
  return n
end

-- An empty list, made once per script call rather than once per key.
local NONE = {}

-- `offset` (chat mode): the tickets read start that far from the head (0 or nil: at the head); `also`
-- nil: none. A chat with nothing queued allocates no ticket or waiter lists.
local function listing_read(mode, key, queue, named, limit, measured, also, offset)
  local size = redis.pcall('HLEN', key)
  if type(size) ~= 'number' then return -1, '', 0, 0 end
  if size == 0 then return 0, '', 0, 0 end
  local read = {}
  local n = listing_hmget(key, named, read, 0)
  local extra = 0
  if mode == 'chat' then
    local length = redis.pcall('ZCARD', queue)
    if type(length) ~= 'number' then
      extra = -1
    else
      extra = length
      local tickets = NONE
      local from = offset or 0
      if length > from and limit > 0 then tickets = redis.call('ZRANGE', queue, from, from + limit - 1) end
      also = also or NONE
      if #tickets > 0 or #also > 0 then
        local fields, f = {}, 0
        for j = 1, #tickets do
          fields[f + 1], fields[f + 2], f = CHAT.ticketPrefix .. tickets[j], CHAT.ticketRequestPrefix .. tickets[j], f + 2
        end
        for j = 1, #also do
          fields[f + 1], fields[f + 2], f = CHAT.ticketPrefix .. also[j], CHAT.ticketRequestPrefix .. also[j], f + 2
        end
        local before = n
        n = listing_hmget(key, fields, read, n)
        local waiters, seen = {}, {}
        for j = before + 1, n, 2 do
          local inc = string.match(read[j + 1], '^%d+|%d+|([^|]*)|')
          if string.sub(read[j], 1, #CHAT.ticketPrefix) == CHAT.ticketPrefix and inc and not seen[inc] then
            seen[inc] = true
            waiters[#waiters + 1] = CHAT.waiterPrefix .. inc
          end
        end
        n = listing_hmget(key, waiters, read, n)
      end
    end
  elseif mode == 'lead' and limit > 0 then
    local cursor, calls, found = '0', 0, 0
    repeat
      local r = redis.call('HSCAN', key, cursor, 'MATCH', LEAD.candidatePrefix .. '*', 'COUNT', limit)
      cursor, calls = r[1], calls + 1
      for j = 1, #r[2] do
        read[n + j] = r[2][j]
      end
      n = n + #r[2]
      found = found + #r[2] / 2
    until cursor == '0' or found >= limit or calls >= 4
  end
  if measured ~= '' then extra = redis.call('HSTRLEN', key, measured) end
  return n, table.concat(read, '\0'), size, extra
end
