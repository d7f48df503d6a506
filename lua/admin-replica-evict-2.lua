#!lua
--[[
  admin-replica-evict-2: an operator treats a replica as dead now (`replica evict`), for a zombie
  that keeps renewing but does no work. Its heartbeat fields are deleted and it leaves the replica
  index (it no longer counts as alive), and a tombstone `ev` = its incarnation (with `evat`, when) is
  kept with a TTL: replica-beat-2 refuses every later beat of that incarnation, and its coordinator
  then drops everything it holds and emits coordination:evicted. Its chats and leads are cleaned per
  key afterwards (admin-chat-evict-2, admin-lead-evict-1) from the leases this script returns.
  A restart of the replica (a new incarnation) beats normally.
  Conditioned on what the operator saw: the incarnation.

  KEYS[1] replica hash   KEYS[2] replica index zset (same slot)
  ARGV[1] replicaId      ARGV[2] expected incarnation (required)   ARGV[3] tombstone TTL ms

  Returns
    { 1, incarnation, leasesJSON|false, infoJSON|false }   evicted
    { 2, incarnation, leasesJSON|false, infoJSON|false }   already evicted (tombstone of that
                                   incarnation): nothing written; the caller cleans its keys again
    { 0 }                          no live heartbeat record: nothing done
    { -1, currentIncarnation }     another incarnation beats under that replicaId now: nothing done
  The tombstone keeps the evicted incarnation's `leases` and `info`, so an interrupted clean-up can
  be run again.
  Errors: NOPERM botmesh: … when the ACL user may not make one of its writes, before any write;
  BMC_INVALID_ID when no incarnation is given (InvalidIdError).
]]
--@include acl
--@include time
--@include replica

local key, index = KEYS[1], KEYS[2]
require_writes(KEYS[1], { 'HSET', 'HDEL', 'PEXPIRE' }) -- refused before any write
require_writes(KEYS[2], { 'ZREM' })
local rid, ifInc, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
if ifInc == '' then return redis.error_reply('BMC_INVALID_ID: an incarnation is required') end
local h = redis.call('HMGET', key, REPLICA.incarnation, REPLICA.beat, REPLICA.leases, REPLICA.info, REPLICA.expiresAt,
  REPLICA.evicted)
if h[6] == ifInc and not h[2] then return { 2, ifInc, h[3] or false, h[4] or false } end
if not h[1] or not h[2] or (tonumber(h[5]) or 0) <= NOW then return { 0 } end
if h[1] ~= ifInc then return { -1, h[1] } end
redis.call('HDEL', key, REPLICA.incarnation, REPLICA.stats, REPLICA.beat, REPLICA.expiresAt, REPLICA.wallClock)
redis.call('HSET', key, REPLICA.evicted, ifInc, REPLICA.evictedAt, fmt(NOW))
redis.call('PEXPIRE', key, fmt(ttl))
redis.call('ZREM', index, rid)
return { 1, ifInc, h[3] or false, h[4] or false }
