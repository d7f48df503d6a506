#!lua
--[[
  admin-chat-evict-2: one chat's part of `replica evict`: take away everything one evicted
  incarnation has in this chat. Its turn is revoked (fence bumped, as admin-chat-release-2) and every
  ticket it queued is dropped (its replica woken, so a live zombie learns it at once); then the next
  live ticket is granted and woken. Another incarnation's turn and tickets are left alone.

  KEYS[1] chat state hash       KEYS[2] chat queue zset
  ARGV[1] evicted incarnation   ARGV[2] leaseMs of the next grant
  ARGV[3] idleTtlMs             ARGV[4] wake channel prefix

  Returns
    { revoked (1|0), fenceBefore|false, fenceAfter|false, ticketsDropped,
      grantedTicket|false, grantedFence|false, grantedReplica|false, grantedIncarnation|false,
      wakeRefused|false }   (wakeRefused: Redis refused a wake-up PUBLISH; the clean-up stands)
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write;
  BMC_INVALID_ID when no incarnation is given (InvalidIdError); ERR botmesh corrupt fence at
  <key> when the stored fence is not a decimal integer below 2^53 - 1, before anything is written
  (CorruptStateError).
]]
--@include acl
--@include time
--@include wake
--@include chat
--@include turn
--@include admin

local state, queue = KEYS[1], KEYS[2]
require_writes(KEYS[1], { 'HSET', 'HDEL', 'HINCRBY', 'PEXPIRE' }) -- refused before any write
require_writes(KEYS[2], { 'ZREM', 'ZPOPMIN', 'PEXPIRE' })
local inc = ARGV[1]
local leaseMs, idleTtl, wake = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
if inc == '' then return redis.error_reply('BMC_INVALID_ID: an incarnation is required') end

local h = redis.call('HMGET', state, CHAT.holder, CHAT.holderIncarnation, CHAT.fence)
check_fence(h[3]) -- a corrupt fence: refused before any ticket is dropped (the grant after would fail)
local before = h[3] or false
local revoked = 0
if h[1] and h[2] == inc then
  revoke_chat_holder(state)
  revoked = 1
end
local dropped = 0
local gone = {}
for _, ticket in ipairs(redis.call('ZRANGE', queue, 0, -1)) do
  local t = parse_ticket(redis.call('HGET', state, ticket_field(ticket)))
  if t and t.inc == inc then
    remove_ticket(state, queue, ticket)
    wake_ticket(state, wake, inc, ticket)
    gone[ticket] = true
    dropped = dropped + 1
  end
end
if dropped > 0 then
  redis.call('HINCRBY', state, CHAT.skipped, dropped)
  drop_request_ids(state, gone)
end
local g = nil
if revoked == 1 or dropped > 0 then
  g = grant_next({ state = state, queue = queue, leaseMs = leaseMs, wake = wake, callerTicket = '' })
  if redis.call('EXISTS', state) == 1 then touch(state, queue, leaseMs, idleTtl) end
end
local gt, gf, gr, gi = granted_fields(state, g)
return { revoked, before, redis.call('HGET', state, CHAT.fence) or false, dropped, gt, gf, gr, gi, WAKE_REFUSED }
