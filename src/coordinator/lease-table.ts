/**
 * The leases one coordinator holds (chat turns and leads): their local deadlines, losing them (the
 * signal aborts, `coordination:lease-lost`), giving them back, and the releases that failed on the
 * network and are retried until they go through or no longer matter.
 */
import { monotonicNow } from '../clock.js'
import { LeaseLostError, type LeaseLostReason } from '../errors/lease-lost-error.js'
import type { LeaseKind, YieldRequest } from '../wire/types.js'
import type { CoordinatorContext } from './context.js'
import type { LeaseLostEvent } from './types.js'

/** Internal record of something this coordinator holds. */
export interface HeldLease {
  readonly id: number
  readonly kind: LeaseKind
  readonly key: string
  readonly fence: number
  readonly ticket: number
  /** The acquisition's request id (chat turns): released with the turn. */
  readonly requestId: string
  /** Created on first use of `signal` (most holders never look at it). */
  controller: AbortController | null
  /** Monotonic time after which the lease is treated as lost unless renewed. */
  deadline: number
  lost: LeaseLostError | null
  released: boolean
  onYieldRequest?: (req: YieldRequest) => void
  onLost?: (err: LeaseLostError) => void
}

interface PendingRelease {
  lease: HeldLease
  giveUpAt: number
}

let leaseIds = 0

function releasedError(lease: HeldLease): LeaseLostError {
  return new LeaseLostError(lease.key, 'stopped', `lease on ${JSON.stringify(lease.key)} was released`)
}

export class LeaseTable {
  private readonly held = new Map<number, HeldLease>()
  private readonly pendingReleases = new Set<PendingRelease>()

  constructor(private readonly core: CoordinatorContext) {}

  /** Register a lease this coordinator now holds. */
  track(kind: LeaseKind, key: string, fence: number, ticket: number, deadline: number, requestId = ''): HeldLease {
    const lease: HeldLease = {
      id: ++leaseIds,
      kind,
      key,
      fence,
      ticket,
      requestId,
      controller: null,
      deadline,
      lost: null,
      released: false,
    }
    this.held.set(lease.id, lease)
    return lease
  }

  /** Every lease held now (a copy: losing one while iterating is safe). */
  all(): HeldLease[] {
    return [...this.held.values()]
  }

  /** The leases held on one key of one kind. */
  on(kind: LeaseKind, key: string): HeldLease[] {
    return this.all().filter((l) => l.kind === kind && l.key === key)
  }

  /** Is the lease still ours by the local deadline? Marks it lost the first time the answer is no. */
  isHeld(lease: HeldLease): boolean {
    if (lease.lost || lease.released) return false
    if (monotonicNow() >= lease.deadline) {
      this.markLost(lease, 'expired')
      return false
    }
    return true
  }

  assertHeld(lease: HeldLease): void {
    if (this.isHeld(lease)) return
    throw lease.lost ?? releasedError(lease)
  }

  /** The lease's AbortSignal, made on first use (already aborted when the lease is gone). */
  signalOf(lease: HeldLease): AbortSignal {
    if (!lease.controller) {
      lease.controller = new AbortController()
      if (lease.lost || lease.released) lease.controller.abort(lease.lost ?? releasedError(lease))
    }
    return lease.controller.signal
  }

  /** The lease is gone: abort its signal and tell the application (unless `quiet`: the process "died"). */
  markLost(lease: HeldLease, reason: LeaseLostReason, quiet = false): void {
    if (lease.lost || lease.released) return
    const err = new LeaseLostError(lease.key, reason)
    lease.lost = err
    this.held.delete(lease.id)
    lease.controller?.abort(err)
    if (quiet) return
    this.core.stats.leasesLost++
    if (reason === 'expired' || reason === 'reset') {
      // Redis may still think we hold it (we could not renew, or it restarted with the data): give it
      // back as soon as Redis answers.
      this.retryLater(lease)
    }
    const event: LeaseLostEvent = { key: lease.key, kind: lease.kind, fence: lease.fence, reason }
    lease.onLost?.(err)
    this.core.emit('coordination:lease-lost', event)
    this.core.logEvent({ type: 'lease-lost', ...event })
  }

  /** Give a lease back. Network failures are retried by the renewer every leaseMs / 3. */
  async releaseLease(lease: HeldLease): Promise<void> {
    if (lease.released) return
    const wasLost = lease.lost
    lease.released = true
    this.held.delete(lease.id)
    if (lease.controller && !lease.controller.signal.aborted) lease.controller.abort(releasedError(lease))
    if (wasLost && wasLost.reason !== 'expired' && wasLost.reason !== 'reset') return
    if (this.core.state === 'crashed') return
    try {
      await this.releaseInBackend(lease)
    } catch {
      this.retryLater(lease)
    }
  }

  /** The release itself, in one script (conditioned on our incarnation, and ticket or fence). */
  async releaseInBackend(lease: HeldLease): Promise<void> {
    const { backend, incarnation, leaseMs } = this.core
    if (lease.kind === 'chat') {
      await backend.turnRelease(lease.key, incarnation, lease.ticket, leaseMs, lease.requestId)
    } else {
      await backend.leadRelease(lease.key, incarnation, lease.fence, leaseMs)
      this.core.logEvent({ type: 'lead-released', name: lease.key, fence: lease.fence })
    }
  }

  private retryLater(lease: HeldLease): void {
    this.pendingReleases.add({ lease, giveUpAt: monotonicNow() + this.core.leaseMs * 2 })
  }

  get pending(): number {
    return this.pendingReleases.size
  }

  /** Retry the releases that failed (until 2 × leaseMs after the failure: by then Redis expired them). */
  async retryReleases(): Promise<void> {
    for (const p of [...this.pendingReleases]) {
      if (monotonicNow() > p.giveUpAt) {
        this.pendingReleases.delete(p)
        continue
      }
      try {
        await this.releaseInBackend(p.lease)
        this.pendingReleases.delete(p)
      } catch {
        // still unreachable: next cycle
      }
    }
  }

  /** The watchdog: a lease whose local deadline passed is lost now, whether or not a timer ran late. */
  expireOverdue(now: number): void {
    for (const lease of this.all()) {
      if (now >= lease.deadline) this.markLost(lease, 'expired')
    }
  }

  /** The process "died" (crash()): every lease goes quietly, nothing is given back. */
  dropAll(): void {
    for (const lease of this.all()) this.markLost(lease, 'stopped', true)
    this.pendingReleases.clear()
  }
}
