/**
 * What this replica's waiting acquisitions look like from outside: the tickets they wait with (the
 * heartbeat record lists them), how long the oldest has waited, and recent waits (their p99).
 */
import { monotonicNow } from '../clock.js'
import { LatencyWindow } from './latency-window.js'
import type { ReplicaStats } from '../wire/types.js'
import type { CoordinatorStats } from './context.js'
import type { HeldLease } from './lease-table.js'
import { waitingId } from './turn-wakes.js'

export class WaitBook {
  /** Waiting acquisitions' tickets (one per chat and ticket). */
  private readonly tickets = new Map<string, { key: string; ticket: number }>()
  /** When each waiting acquisition began (monotonic ms), in arrival order: the first is the oldest. */
  private readonly starts = new Map<object, number>()
  private readonly waits = new LatencyWindow(1024)
  /** Per chat: acquisitions whose first take-ticket is in flight (their ticket is not known yet). */
  private readonly enqueuing = new Map<string, number>()

  /** An acquisition begins to wait (`token`: its identity until it ends). */
  began(token: object, at: number): void {
    this.starts.set(token, at)
  }

  ended(token: object): void {
    this.starts.delete(token)
  }

  /** How many acquisitions wait now (began and not yet ended). */
  get waiting(): number {
    return this.starts.size
  }

  /** An acquisition was granted after `waitedMs`. */
  granted(waitedMs: number): void {
    this.waits.add(waitedMs)
  }

  /** A ticket taken is waiting (until forgotten). */
  queued(key: string, ticket: number): void {
    this.tickets.set(waitingId(key, ticket), { key, ticket })
  }

  /** A first take-ticket of chat `key` is sent (+1) or answered (-1). */
  taking(key: string, delta: 1 | -1): void {
    const n = (this.enqueuing.get(key) ?? 0) + delta
    if (n > 0) this.enqueuing.set(key, n)
    else this.enqueuing.delete(key)
  }

  /** May a push for (chat `key`, ticket) `id` be for an acquisition of ours: one waits with it, or one of the chat's takes is in flight? */
  expects(key: string, id: string): boolean {
    return this.tickets.has(id) || this.enqueuing.has(key)
  }

  forget(id: string): void {
    this.tickets.delete(id)
  }

  /** What this replica waits for, for the heartbeat record. */
  list(): Array<{ key: string; ticket: number }> {
    return [...this.tickets.values()]
  }

  /** How long the longest-waiting acquisition has waited so far (ms), or null when none waits. */
  oldestWaitMs(): number | null {
    for (const started of this.starts.values()) return Math.round(monotonicNow() - started)
    return null
  }

  /** The 99th percentile of recent waits (ms). */
  waitP99(): number | null {
    return this.waits.quantile(0.99)
  }
}

/** The counters a heartbeat record carries (and `coordinator.metrics` returns). */
export function replicaStats(stats: CoordinatorStats, book: WaitBook, held: HeldLease[]): ReplicaStats {
  const { turnsGranted, leasesLost, turnsShed } = stats
  return {
    turnsGranted,
    waitingNow: book.waiting,
    oldestWaitMs: book.oldestWaitMs(),
    turnsShed,
    waitP99Ms: book.waitP99(),
    leasesLost,
    leadsHeld: held.filter((l) => l.kind === 'lead').length,
    turnsHeld: held.filter((l) => l.kind === 'chat').length,
  }
}
