import { userInfo, hostname } from 'node:os'
import { RedisBackend } from '../coordinator/redis-backend.js'
import { resolveRedis, REDIS_DEFAULTS, type RedisConnectionOptions } from '../coordinator/redis-coordinator.js'
import type { YieldResult } from '../coordinator/backend.js'
import { validateId, type KeyLayout } from '../keys.js'
import type { RedisClient } from '../scripts/runner.js'

export interface YieldOptions {
  /** Only this standby may take the lead next (while it stands and the request lasts). */
  target?: string | null
  /** How long the request (and a target's reservation) lasts. Default 30 s. */
  ttlMs?: number
  /** Only if the leader's fence is still this one. */
  ifFence?: number | null
  /** Who asks (recorded). Default user@host. */
  by?: string
}

export function operatorName(): string {
  let user = 'unknown'
  try {
    user = userInfo().username
  } catch {
    // no passwd entry (containers)
  }
  return `${user}@${hostname()}`
}

/**
 * Operator interventions on live coordination state: each one is one Lua script, conditioned on what
 * the operator saw. The CLI and the dashboard call these; so do tests that play the operator.
 */
export class CoordinationAdmin {
  readonly keys: KeyLayout
  readonly redis: RedisClient
  private readonly backend: RedisBackend

  constructor(options: RedisConnectionOptions & { commandTimeoutMs?: number } = {}) {
    const timeout = options.commandTimeoutMs ?? 5000
    const { redis, keys, ownsClient } = resolveRedis(options, timeout)
    this.redis = redis
    this.keys = keys
    this.backend = new RedisBackend({
      redis,
      keys,
      ownsClient,
      commandTimeoutMs: timeout,
      idleKeyTtlMs: REDIS_DEFAULTS.idleKeyTtlMs,
      eventsMaxLen: options.eventsMaxLen ?? REDIS_DEFAULTS.eventsMaxLen,
    })
  }

  /** Ask the leader of `name` to step down; its campaigning standbys take over. */
  async requestYield(name: string, opts: YieldOptions = {}): Promise<YieldResult> {
    validateId(name, 'lead name')
    return this.backend.requestYield(name, {
      by: opts.by ?? operatorName(),
      target: opts.target ?? null,
      ttlMs: opts.ttlMs ?? 30_000,
      ifFence: opts.ifFence ?? null,
    })
  }

  async close(): Promise<void> {
    await this.backend.close()
  }
}
