#!lua flags=no-writes,allow-cross-slot-keys
--[[
  read-listing-0: what a listing shows of the hashes of one SCAN batch of one node, in one call,
  bounded whatever the hashes hold: the named fields of their kind (HMGET), the field count (HLEN),
  and, by mode, the head of a chat's queue, a bounded page of a lead's candidates, or the size of one
  field (HSTRLEN) instead of its value. Never HGETALL: a chat with a million queued tickets costs what
  a chat with one does. Read-only; the keys are this node's (a cluster node may serve many slots).

  ARGV[1]   mode: 'chat' (each key is followed by its queue key), 'lead' or 'hash'
  ARGV[2]   n, the number of named fields, then ARGV[3 .. n+2] the fields
  ARGV[n+3] limit: 'chat' reads the first `limit` tickets of the queue (ZRANGE 0 limit-1) with their
            t:<ticket> and q:<ticket> fields and the w:<incarnation> fields of their incarnations;
            'lead' reads at least `limit` c:* fields if the hash has them (HSCAN MATCH c:* COUNT limit,
            at most 4 calls); 'hash' reads nothing more
  ARGV[n+4] a field to measure (HSTRLEN), or ''
  ARGV[n+5 ..] the keys ('chat': key, queue key, key, queue key, ...)

  Returns four entries per key, in order: the number of fields and values read, them joined with NUL
  (a value with a NUL in it shows as a count that does not match: the reader reads that key again
  without the script), the hash's field count (HLEN), and by mode the queue's length (ZCARD; -1 when
  the queue key holds another type), the measured field's length, or 0. A key that is gone: 0, '', 0,
  0. A key that holds another type: -1, '', 0, 0.
]]
--@include chat
--@include lead-fields
--@include listing

local mode = ARGV[1]
local nf = tonumber(ARGV[2])
local named = {}
for i = 1, nf do
  named[i] = ARGV[2 + i]
end
local limit = tonumber(ARGV[nf + 3])
local measured = ARGV[nf + 4]
local step = mode == 'chat' and 2 or 1

local out = {}
for i = nf + 5, #ARGV, step do
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = listing_read(mode, ARGV[i], ARGV[i + 1], named, limit, measured)
end
return out
