#!lua
--[[
  replica-beat-2: write one replica's heartbeat record (its `exp` is leaseMs after the last beat; the
  key itself is kept 5 minutes longer, so a replica that stopped beating reads as gone) and
  keep the replica index: a zset of replica ids scored by heartbeat expiry, pruned of dead ones.

  KEYS[1] replica hash   KEYS[2] replica index zset (same slot: the prefix is the hash tag)
  ARGV[1] replicaId   ARGV[2] incarnation   ARGV[3] leaseMs
  ARGV[4] info JSON (host, pid, version, startedAt, leaseMs)   ARGV[5] stats JSON (counters)
  ARGV[6] leases JSON (what it holds, waits for, and campaigns for)             ARGV[7] the replica's wall clock (ms)

  Returns
    { 1, otherLiveIncarnation|nil, redisNowMs, missing }  written; the second field names another
                                                 live process that was using the same replicaId;
                                                 missing is 1 when there was no record to update
                                                 (a first beat, or the keys were flushed), else 0
    { -1 }  this incarnation was evicted by an operator (`replica evict`): nothing written
]]
--@include time
--@include replica

local key = KEYS[1]
local rid, inc, leaseMs = ARGV[1], ARGV[2], tonumber(ARGV[3])

local cur = redis.call('HMGET', key, REPLICA.incarnation, REPLICA.evicted, REPLICA.expiresAt)
if cur[2] == inc then return { -1 } end
local other = false
if cur[1] and cur[1] ~= inc and (tonumber(cur[3]) or 0) > NOW then other = cur[1] end
redis.call('HSET', key, REPLICA.id, rid, REPLICA.incarnation, inc, REPLICA.info, ARGV[4], REPLICA.stats, ARGV[5],
  REPLICA.leases, ARGV[6], REPLICA.beat, fmt(NOW), REPLICA.expiresAt, fmt(NOW + leaseMs), REPLICA.wallClock, ARGV[7])
-- The record outlives its heartbeat by GONE_KEEP_MS (src/state/health.ts): a replica that stops
-- beating without an orderly stop (frozen, cut off, killed) is listed as `gone`, with its last beat
-- and what it held, for that long. An operator's eviction tombstone (`ev`, another incarnation's)
-- outlives it too.
local GONE_KEEP_MS = 300000
local keep = cur[2] and redis.call('PTTL', key) or -1
redis.call('PEXPIRE', key, fmt(math.max(leaseMs + GONE_KEEP_MS, keep)))
local index = KEYS[2]
redis.call('ZADD', index, fmt(NOW + leaseMs), rid)
redis.call('ZREMRANGEBYSCORE', index, '-inf', fmt(NOW))
-- The index is shared by every replica, each with its own leaseMs: a beat only lengthens its expiry
-- (a short-lease replica's last beat must not make a long-lease one's entry vanish with the key).
if redis.call('PTTL', index) < leaseMs * 2 then redis.call('PEXPIRE', index, fmt(leaseMs * 2)) end
return { 1, other, fmt(NOW), cur[1] and 0 or 1 }
