#!lua
--[[
  replica-stop-2: remove a replica's heartbeat record (and its index entry) at an orderly stop, if it
  is still this incarnation's.

  KEYS[1] replica hash   KEYS[2] replica index zset
  ARGV[1] incarnation    ARGV[2] replicaId

  Returns 1 removed, 0 the record belongs to another incarnation (or is gone). An eviction tombstone
  (`ev`) left by an operator for an older incarnation stays, so that zombie cannot beat again.
]]
--@include replica

local h = redis.call('HMGET', KEYS[1], REPLICA.incarnation, REPLICA.evicted)
if h[1] == ARGV[1] then
  if h[2] then
    -- keep an eviction tombstone of another incarnation (with its TTL): drop only the heartbeat
    redis.call('HDEL', KEYS[1], REPLICA.id, REPLICA.incarnation, REPLICA.info, REPLICA.stats, REPLICA.leases, REPLICA.beat,
      REPLICA.expiresAt, REPLICA.wallClock)
  else
    redis.call('DEL', KEYS[1])
  end
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
return 0
