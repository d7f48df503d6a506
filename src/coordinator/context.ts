/**
 * What the parts of one coordinator share (internal): who it is, its settings, its backend, where it
 * is in its life, its counters, and where its events go. The façade (coordinator.ts) makes one and
 * hands it to the lease table, the renewer, the turn queue and the leadership.
 */
import type { CoordinationBackend } from './backend.js'
import type { CoordinatorEvents } from './types.js'

export type CoordinatorState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped' | 'crashed' | 'evicted'

export interface CoordinatorStats {
  turnsGranted: number
  leasesLost: number
  /** Messages refused at once because `maxWaiting` were waiting already. */
  turnsShed: number
}

export interface CoordinatorContext {
  readonly backend: CoordinationBackend
  readonly replicaId: string
  readonly incarnation: string
  readonly leaseMs: number
  readonly minPollMs: number
  readonly maxPollMs: number
  readonly renewMarginMs: number
  readonly state: CoordinatorState
  readonly stats: CoordinatorStats
  /** An event for the application (the coordinator is an EventEmitter). */
  emit<E extends keyof CoordinatorEvents>(event: E, ...payload: CoordinatorEvents[E]): void
  /** A notable event for the shared event stream (best effort; nothing once crashed). */
  logEvent(event: Record<string, unknown>): void
  /** An application callback threw: report it as a `coordination:warning`. */
  reportError(err: unknown): void
}

/** The local deadline of a lease whose grant or renewal was sent at `sentAt` (monotonic ms). */
export function leaseDeadline(core: CoordinatorContext, sentAt: number, leaseMs = core.leaseMs): number {
  return sentAt + leaseMs - core.renewMarginMs
}
