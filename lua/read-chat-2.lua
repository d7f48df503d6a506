#!lua flags=no-writes
--[[
  read-chat-2: what `chat inspect` (and the dashboard, and an intervention's plan) reads of one chat's
  turn: the chat hash's named fields, the first tickets of its queue with their fields, its field
  count and the queue's length — as read-listing-0 reads a chat of a SCAN batch, for one chat whose
  keys route the call (one slot). Bounded whatever the queue holds. Read-only.

  KEYS[1] chat state hash P:c:<chat>
  KEYS[2] chat queue P:q:<chat>
  ARGV[1] limit: the tickets read from the head of the queue (from ARGV[2] on)
  ARGV[2] offset: how far from the head the tickets read start (0: at the head; a longer read is
          sent in pages of a few hundred tickets, so no one call holds Redis long)
  ARGV[3] a ticket read too wherever it stands in the queue, or ''
  ARGV[4] n, the number of named fields, then ARGV[5 .. n+4] the fields

  Returns the four entries read-listing-0 returns for one key: the number of fields and values read,
  them joined with NUL, HLEN, and the queue's length (-1 when it holds another type); -1, '', 0, 0 for
  a chat hash of another type; 0, '', 0, 0 when it is gone.
]]
--@include chat
--@include lead-fields
--@include listing

local nf = tonumber(ARGV[4])
local named = {}
for i = 1, nf do
  named[i] = ARGV[4 + i]
end
local also = {}
if ARGV[3] ~= '' then also[1] = ARGV[3] end
return { listing_read('chat', KEYS[1], KEYS[2], named, tonumber(ARGV[1]), '', also, tonumber(ARGV[2])) }
