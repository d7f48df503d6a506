import { Coordinator, type CoordinatorOptions } from './coordinator.js'
import { RedisBackend } from './redis-backend.js'
import { KeyLayout, DEFAULT_PREFIX, type Layout } from '../keys.js'
import { assertNoKeyPrefix, connect, isCluster } from '../connection.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { parseDuration, type Duration } from '../duration.js'
import type { RedisClient } from '../scripts/runner.js'

export interface RedisConnectionOptions {
  /** redis:// or rediss:// URL; on a Redis Cluster, any node. Ignored when `redis` is given. */
  url?: string
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

export type RedisCoordinatorOptions = RedisConnectionOptions & CoordinatorOptions

export const REDIS_DEFAULTS = {
  prefix: DEFAULT_PREFIX,
  idleKeyTtlMs: 24 * 3_600_000,
  eventsMaxLen: 10_000,
} as const

/** Pick the client and key layout from options (shared by RedisCoordinator and RedisStore). */
export function resolveRedis(
  opts: RedisConnectionOptions,
  commandTimeoutMs: number,
): {
  redis: RedisClient
  keys: KeyLayout
  ownsClient: boolean
} {
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
  const keys = new KeyLayout(opts.prefix ?? REDIS_DEFAULTS.prefix, layout ?? 'standalone')
  if (opts.redis) return { redis: opts.redis, keys, ownsClient: false }
  const redis = connect({ url: opts.url, layout: keys.layout, tlsCaFile: opts.tlsCaFile, commandTimeoutMs })
  redis.on('error', () => {}) // surfaced per call as CoordinationUnavailableError
  return { redis, keys, ownsClient: true }
}

/**
 * A replica's coordinator over Redis (standalone or Cluster). Every state change is one Lua script;
 * lease time comes from Redis's clock.
 */
export class RedisCoordinator extends Coordinator {
  readonly keys: KeyLayout
  readonly redis: RedisClient

  constructor(options: RedisCoordinatorOptions = {}) {
    const leaseMs = parseDuration(options.leaseMs ?? 15_000, 'leaseMs')
    const commandTimeoutMs = parseDuration(options.commandTimeoutMs ?? Math.min(5000, Math.floor(leaseMs / 3)), 'commandTimeoutMs')
    const { redis, keys, ownsClient } = resolveRedis(options, commandTimeoutMs)
    const backend = new RedisBackend({
      redis,
      keys,
      ownsClient,
      commandTimeoutMs,
      idleKeyTtlMs: parseDuration(options.idleKeyTtlMs ?? REDIS_DEFAULTS.idleKeyTtlMs, 'idleKeyTtlMs'),
      eventsMaxLen: options.eventsMaxLen ?? REDIS_DEFAULTS.eventsMaxLen,
    })
    super(backend, options)
    this.keys = keys
    this.redis = redis
  }
}
