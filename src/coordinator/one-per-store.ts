/**
 * `store.coordinator()`: a store has one coordinator, and every call returns it — a second
 * coordinator in the same process would be a phantom replica (its own incarnation, heartbeat and
 * subscriber). Options given on a later call must agree with the ones it was made with; a stopped
 * coordinator is replaced by a fresh one on the next call.
 */
import { ConfigurationError } from '../errors/configuration-error.js'
import { parseDuration } from '../duration.js'
import type { Coordinator } from './coordinator.js'
import type { CoordinatorOptions } from './types.js'

/** What a later call is compared on: the options as the coordinator resolved them. */
export type ResolvedOptions = Record<string, string | number>

const DURATIONS = new Set(['leaseMs', 'maxPollMs', 'minPollMs', 'turnWaitMs', 'renewMarginMs', 'idleKeyTtlMs', 'commandTimeoutMs'])

/** A coordinator's own settings, in the terms of its options. */
export function resolvedOptions(c: Coordinator, extra: ResolvedOptions = {}): ResolvedOptions {
  return {
    replicaId: c.replicaId,
    leaseMs: c.leaseMs,
    maxPollMs: c.maxPollMs,
    minPollMs: c.minPollMs,
    turnWaitMs: c.turnWaitMs,
    renewMarginMs: c.renewMarginMs,
    ...extra,
  }
}

export class OnePerStore<C extends Coordinator, O extends CoordinatorOptions> {
  #current: { coordinator: C; meta: string } | null = null

  constructor(
    private readonly make: (options: O) => C,
    /** The settings of a coordinator made here (its options, resolved). */
    private readonly settings: (c: C) => ResolvedOptions,
  ) {}

  get(options: O): C {
    const cur = this.#current
    if (cur && !cur.coordinator.ended) {
      this.check(cur.coordinator, cur.meta, options)
      return cur.coordinator
    }
    const coordinator = this.make(options)
    this.#current = { coordinator, meta: JSON.stringify(options.meta ?? null) }
    return coordinator
  }

  private check(c: C, meta: string, options: O): void {
    const have = this.settings(c)
    for (const [name, value] of Object.entries(options)) {
      if (value === undefined) continue
      if (name === 'meta') {
        if (JSON.stringify(value) !== meta) throw conflict(name, JSON.stringify(value), meta)
        continue
      }
      if (!(name in have)) throw new ConfigurationError(`store.coordinator(): unknown option ${name}`)
      const given = DURATIONS.has(name) ? parseDuration(value as string | number, name) : value
      if (given !== have[name]) throw conflict(name, String(given), String(have[name]))
    }
  }
}

function conflict(name: string, given: string, have: string): ConfigurationError {
  return new ConfigurationError(
    `store.coordinator(): ${name} ${given} differs from the store's coordinator (${name} ${have}); a store has one coordinator — pass the same options, or none`,
  )
}
