import { Coordinator } from './coordinator.js'
import type { CoordinatorOptions } from './types.js'
import { RedisBackend } from './redis-backend.js'
import type { KeyLayout } from '../keys.js'
import { resolveRedis, type RedisClient, type RedisConnectionOptions } from '../connection.js'
import { timerDuration } from '../duration.js'
import { DEFAULTS, coordinatorCommandTimeoutMs } from '../defaults.js'

export type RedisCoordinatorOptions = RedisConnectionOptions & CoordinatorOptions

/**
 * A replica's coordinator over Redis (standalone or Cluster). Every state change is one Lua script;
 * lease time comes from Redis's clock.
 */
export class RedisCoordinator extends Coordinator {
  readonly keys: KeyLayout
  readonly redis: RedisClient
  /** One Redis call slower than this counts as Redis unreachable. */
  readonly commandTimeoutMs: number
  /** How long an idle chat or lead remembers its last holder. */
  readonly idleKeyTtlMs: number

  constructor(options: RedisCoordinatorOptions = {}) {
    const leaseMs = timerDuration(options.leaseMs ?? DEFAULTS.leaseMs, 'leaseMs')
    const { redis, keys, ownsClient, commandTimeoutMs, idleKeyTtlMs, eventsMaxLen } = resolveRedis(
      options,
      coordinatorCommandTimeoutMs(leaseMs),
    )
    super(new RedisBackend({ redis, keys, ownsClient, commandTimeoutMs, idleKeyTtlMs, eventsMaxLen }), options)
    this.keys = keys
    this.redis = redis
    this.commandTimeoutMs = commandTimeoutMs
    this.idleKeyTtlMs = idleKeyTtlMs
  }
}
