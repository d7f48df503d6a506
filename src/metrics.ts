/**
 * A replica's own metrics on the application's prom-client registry, in one call. The library never
 * imports prom-client: the application passes the module it already uses (an optional peer
 * dependency), so a bot that does not export metrics loads nothing for them.
 *
 *   import * as client from 'prom-client'
 *   const stop = registerMetrics(coordinator, client)             // on client.register
 *   const stop = registerMetrics(coordinator, client, { registry }) // or on a registry of yours
 */
import type { Coordinator } from './coordinator/coordinator.js'
import type { LeaseLostEvent } from './coordinator/types.js'

/**
 * What registerMetrics uses of prom-client (v15): its metric classes and a registry. `R` is the
 * registry's type, so prom-client's module itself fits (`registerMetrics(coordinator, client)`).
 */
export interface PromClientLike<R extends RegistryLike = RegistryLike> {
  Histogram: new (config: MetricConfig<R> & { buckets?: number[] }) => { observe(value: number): void }
  Counter: new (config: MetricConfig<R> & { collect?(this: { inc(value?: number): void }): void }) => {
    inc(labels: Record<string, string>, value?: number): void
    inc(value?: number): void
  }
  Gauge: new (config: MetricConfig<R> & { collect?(this: { set(value: number): void }): void }) => { set(value: number): void }
  register: R
}

export interface RegistryLike {
  removeSingleMetric(name: string): void
}

interface MetricConfig<R extends RegistryLike> {
  name: string
  help: string
  labelNames?: string[]
  registers?: R[]
}

export interface RegisterMetricsOptions<R extends RegistryLike = RegistryLike> {
  /** Where to register (default: prom-client's global `register`). */
  registry?: R
  /** Prefix of every name (default `botmesh_replica_`). */
  prefix?: string
}

/** The names registerMetrics adds, without the prefix. */
export const REPLICA_METRICS = {
  turnWait: 'turn_wait_seconds',
  renewal: 'renewal_round_trip_seconds',
  leaseLosses: 'lease_losses_total',
  waiting: 'waiting_turns',
  oldestWait: 'oldest_wait_seconds',
  turnsGranted: 'turns_granted_total',
  turnsShed: 'turns_shed_total',
} as const

/**
 * Register this coordinator's metrics: how long messages waited for their turn, how long a renewal
 * round trip (heartbeat and every held lease) took, leases lost by reason, messages waiting now and
 * how long the oldest of them has waited, turns granted, and messages refused at once because
 * `maxWaiting` were waiting already (reason 'overloaded'). The counters count from this call on.
 * Returns a function that removes them again (and stops listening).
 */
export function registerMetrics<R extends RegistryLike>(
  coordinator: Coordinator,
  client: PromClientLike<R>,
  options: RegisterMetricsOptions<R> = {},
): () => void {
  const registry = options.registry ?? client.register
  const prefix = options.prefix ?? 'botmesh_replica_'
  const name = (n: string) => `${prefix}${n}`
  const registers = [registry]
  const turnWait = new client.Histogram({
    name: name(REPLICA_METRICS.turnWait),
    help: 'How long a message waited for its chat turn (acquireTurn until granted)',
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 120],
    registers,
  })
  const renewal = new client.Histogram({
    name: name(REPLICA_METRICS.renewal),
    help: 'Round trip of one renewal: the heartbeat and every held lease',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  })
  const losses = new client.Counter({
    name: name(REPLICA_METRICS.leaseLosses),
    help: 'Turns and leads this replica lost, by reason (expired, revoked, superseded, stopped, reset)',
    labelNames: ['kind', 'reason'],
    registers,
  })
  new client.Gauge({
    name: name(REPLICA_METRICS.waiting),
    help: 'Messages of this replica waiting for their chat turn now',
    registers,
    collect() {
      this.set(coordinator.metrics.waitingNow)
    },
  })
  new client.Gauge({
    name: name(REPLICA_METRICS.oldestWait),
    help: 'How long the longest-waiting message of this replica has waited for its chat turn so far (0: none waits)',
    registers,
    collect() {
      this.set((coordinator.metrics.oldestWaitMs ?? 0) / 1000)
    },
  })
  const granted = new client.Counter({
    name: name(REPLICA_METRICS.turnsGranted),
    help: 'Chat turns granted to this replica',
    registers,
  })
  // The coordinator counts the messages it refused; a counter cannot be set, so each collect adds
  // what was refused since the one before (from the count at registration on).
  let shedSeen = coordinator.metrics.turnsShed ?? 0
  new client.Counter({
    name: name(REPLICA_METRICS.turnsShed),
    help: "Messages refused at once (CoordinationUnavailableError 'overloaded') because maxWaiting messages of this replica were waiting already",
    registers,
    collect() {
      const now = coordinator.metrics.turnsShed ?? 0
      this.inc(Math.max(0, now - shedSeen))
      shedSeen = now
    },
  })
  const onGrant = (e: { waitedMs: number }) => {
    turnWait.observe(e.waitedMs / 1000)
    granted.inc()
  }
  const onRenewed = (e: { roundTripMs: number }) => renewal.observe(e.roundTripMs / 1000)
  const onLost = (e: LeaseLostEvent) => losses.inc({ kind: e.kind, reason: e.reason })
  coordinator.on('coordination:turn-granted', onGrant)
  coordinator.on('coordination:renewed', onRenewed)
  coordinator.on('coordination:lease-lost', onLost)
  return () => {
    coordinator.off('coordination:turn-granted', onGrant)
    coordinator.off('coordination:renewed', onRenewed)
    coordinator.off('coordination:lease-lost', onLost)
    for (const n of Object.values(REPLICA_METRICS)) registry.removeSingleMetric(name(n))
  }
}
