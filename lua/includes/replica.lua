-- The fields of a replica's heartbeat record P:r:<replicaId> (docs/redis-layout.md): every script
-- names them through REPLICA. TypeScript reads them through REPLICA_FIELDS in src/wire/hashes.ts,
-- the same table; test/integration/hash-schema.test.ts runs this file in Redis and checks that the
-- two agree.
local REPLICA = {
  id = 'id',                        -- replicaId and incarnation
  incarnation = 'inc',
  info = 'info',                    -- JSON: host, pid, version, startedAt, leaseMs, renewMs
  stats = 'stats',                  -- JSON counters
  leases = 'leases',                -- JSON: what it holds, waits for and campaigns for (src/wire/heartbeat.ts)
  beat = 'beat',                    -- last beat and heartbeat expiry (Redis ms)
  expiresAt = 'exp',
  wallClock = 'cw',                 -- the replica's own wall clock at the beat (ms)
  evicted = 'ev',                   -- an evicted incarnation (its beats are refused) and when
  evictedAt = 'evat',
}
