#!lua
--[[
  admin-chat-skip-2: an operator drops one queued ticket from a chat (`chat skip`): a ticket of a dead
  replica blocking the head, say. Its replica is woken and its next poll answers "dropped"
  (acquireTurn rejects with CoordinationUnavailableError, reason 'dropped'). When the chat is free,
  the next live ticket is granted at once. Nothing held is taken away: the fence stays.
  Conditioned on what the operator saw: the ticket's incarnation, and optionally the chat's fence.

  KEYS[1] chat state hash       KEYS[2] chat queue zset
  ARGV[1] ticket                ARGV[2] expected incarnation of the ticket ('' = any)
  ARGV[3] expected chat fence ('' = any)
  ARGV[4] leaseMs of a grant made on the way   ARGV[5] idleTtlMs   ARGV[6] wake channel prefix

  Returns
    { 1, replica, incarnation, fence|false, grantedTicket|false, grantedFence|false,
         grantedReplica|false, grantedIncarnation|false, wakeRefused|false }   dropped (wakeRefused:
                           Redis refused a wake-up PUBLISH, the drop and grant stand)
    { 0 }                  the ticket is not queued (granted since, withdrawn, or skipped): nothing done
    { -1, incarnation, replica }    the ticket belongs to another incarnation than the expected one
    { -2, holderReplica, fence }    the ticket holds the turn now (use admin-chat-release-2)
    { -3, fence|false }             the chat's fence is not the expected one: nothing done
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write;
  ERR botmesh corrupt fence at <key> when the stored fence is not a decimal integer below
  2^53 - 1, before anything is written (CorruptStateError).
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
local ticket, ifInc, ifFence = ARGV[1], ARGV[2], ARGV[3]
local leaseMs, idleTtl, wake = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]

local h = redis.call('HMGET', state, CHAT.holder, CHAT.holderTicket, CHAT.fence)
check_fence(h[3]) -- a corrupt fence: refused before the ticket is removed (the grant after it would fail)
if ifFence ~= '' and h[3] ~= ifFence then return { -3, h[3] or false } end
if h[1] and h[2] == ticket then return { -2, h[1], h[3] or false } end
local raw = redis.call('HGET', state, ticket_field(ticket))
if not raw then return { 0 } end
local t = parse_ticket(raw)
local inc, rid = '', ''
if t then inc, rid = t.inc, t.rid end
if ifInc ~= '' and inc ~= ifInc then return { -1, inc, rid } end
remove_ticket(state, queue, ticket)
redis.call('HINCRBY', state, CHAT.skipped, 1)
drop_request_ids(state, { [ticket] = true })
wake_ticket(state, wake, inc, ticket)
local g = grant_next({ state = state, queue = queue, leaseMs = leaseMs, wake = wake, callerTicket = '' })
touch(state, queue, leaseMs, idleTtl)
local gt, gf, gr, gi = granted_fields(state, g)
return { 1, rid, inc, h[3] or false, gt, gf, gr, gi, WAKE_REFUSED }
