/**
 * The connection layer: opening a client for a URL (standalone or Cluster), the options every Redis
 * user of the library shares (coordinator, store, admin), and bounding one call in time.
 *
 * This module reads those options (resolveRedis) and re-exports the rest of the layer from
 * connection/, under the same names: client.ts (the client type, Cluster or not, its masters),
 * open.ts (connect, closeClient), calls.ts (withTimeout, connectionCloses, batchWrites,
 * batchTaskWrites) and topology.ts (slots, a Cluster's identity, server changes, eviction warnings).
 */
import { ConfigurationError } from './errors/configuration-error.js'
import { KeyLayout, type Layout } from './keys.js'
import { DEFAULTS } from './defaults.js'
import { parseDuration, timerDuration, type Duration } from './duration.js'
import { isCluster, type RedisClient } from './connection/client.js'
import { connect } from './connection/open.js'

export * from './connection/client.js'
export * from './connection/open.js'
export * from './connection/calls.js'
export * from './connection/topology.js'
export { DEFAULT_URL, maskUrl } from './url.js'

/** An ioredis keyPrefix would not reach the keys inside Lua scripts: refuse such a client. */
export function assertNoKeyPrefix(client: RedisClient): void {
  const o = client.options as { keyPrefix?: string; redisOptions?: { keyPrefix?: string } }
  if (o.keyPrefix || o.redisOptions?.keyPrefix) {
    throw new ConfigurationError(
      'the Redis client has an ioredis keyPrefix: it would not apply to keys inside Lua scripts; use the prefix option instead',
    )
  }
}

/** Where the shared state lives, and how it is kept: the options of every Redis user of the library. */
export interface RedisConnectionOptions {
  /**
   * redis:// or rediss:// URL (on a Redis Cluster, any node), or redis+sentinel://host:port[,host:port…]/<master-name>[/db]
   * (rediss+sentinel:// for TLS): the master a Sentinel group names, followed through failovers.
   * Ignored when `redis` is given.
   */
  url?: string
  /** redis+sentinel://: the sentinels' own password (and ACL user), when they ask for one. */
  sentinelPassword?: string
  sentinelUsername?: string
  /** Your own ioredis client (Redis or Cluster). It is not closed by stop(). */
  redis?: RedisClient
  /** Key prefix shared by every replica of one bot. Default 'botmesh'. */
  prefix?: string
  /** 'standalone' or 'cluster'; a Cluster client implies 'cluster'. Default 'standalone'. */
  layout?: Layout
  /** PEM CA for rediss:// URLs. */
  tlsCaFile?: string
  /** How long one Redis call may take before it counts as unreachable. Default min(5 s, leaseMs / 3). */
  commandTimeoutMs?: Duration
  /** How long an idle chat keeps its last holder (previousHolder) and counters. Default 24 h. */
  idleKeyTtlMs?: Duration
  /** Approximate length cap of the shared event stream. Default 10,000 entries. */
  eventsMaxLen?: number
}

/** RedisConnectionOptions read and checked: the client (opened here unless given), key names and limits. */
export interface ResolvedRedis {
  redis: RedisClient
  keys: KeyLayout
  /** Close the client when done (it was opened here). */
  ownsClient: boolean
  commandTimeoutMs: number
  idleKeyTtlMs: number
  eventsMaxLen: number
}

/**
 * Read the options every Redis user shares (the coordinator, the store, the admin): durations are
 * parsed and checked before a connection is opened, so a bad option leaves nothing behind.
 */
export function resolveRedis(opts: RedisConnectionOptions, defaultCommandTimeoutMs: number = DEFAULTS.commandTimeoutMs): ResolvedRedis {
  const commandTimeoutMs = timerDuration(opts.commandTimeoutMs ?? defaultCommandTimeoutMs, 'commandTimeoutMs')
  const idleKeyTtlMs = parseDuration(opts.idleKeyTtlMs ?? DEFAULTS.idleKeyTtlMs, 'idleKeyTtlMs')
  const eventsMaxLen = opts.eventsMaxLen ?? DEFAULTS.eventsMaxLen
  let layout = opts.layout
  if (opts.redis) {
    assertNoKeyPrefix(opts.redis)
    if (isCluster(opts.redis)) {
      if (layout === 'standalone') {
        throw new ConfigurationError("a Redis Cluster client needs layout 'cluster' (multi-key scripts must stay in one slot)")
      }
      layout = 'cluster'
    }
  }
  const keys = new KeyLayout(opts.prefix ?? DEFAULTS.prefix, layout ?? DEFAULTS.layout)
  const limits = { commandTimeoutMs, idleKeyTtlMs, eventsMaxLen }
  if (opts.redis) return { redis: opts.redis, keys, ownsClient: false, ...limits }
  const redis = connect({
    url: opts.url,
    layout: keys.layout,
    tlsCaFile: opts.tlsCaFile,
    commandTimeoutMs,
    sentinelUsername: opts.sentinelUsername,
    sentinelPassword: opts.sentinelPassword,
  })
  redis.on('error', () => {}) // surfaced per call as CoordinationUnavailableError
  return { redis, keys, ownsClient: true, ...limits }
}
