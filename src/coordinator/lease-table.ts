/**
 * The leases one coordinator holds (chat turns and leads): their local deadlines, losing them (the
 * signal aborts, `coordination:lease-lost`), giving them back, and the releases that failed on the
 * network and are retried until they go through or no longer matter.
 */
import { monotonicNow } from '../clock.js'
import { renewIntervalMs } from '../defaults.js'
import { LeaseLostError, type LeaseLostReason } from '../errors/lease-lost-error.js'
import { isLate } from '../state/health.js'
import type { HandedGrant, LeaseKind, YieldRequest } from '../wire/types.js'
import type { CoordinatorContext } from './context.js'
import { FenceMemory } from './fence-memory.js'
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
  queued?: boolean // a chat turn that came through the queue, not at once: others are likely queued behind it
  /** Created on first use of `signal` (most holders never look at it). */
  controller: AbortController | null
  /** Monotonic time after which the lease is treated as lost unless renewed. */
  deadline: number
  /** Monotonic send time of the last grant or renewal Redis confirmed (see isHeld: late means unconfirmed). */
  confirmedAt: number
  lost: LeaseLostError | null
  released: boolean
  onYieldRequest?: (req: YieldRequest) => void
  /** Called once when the lease ends, unless the process "died": with the loss, or null when released. */
  onEnd?: (lost: LeaseLostError | null) => void
}

/**
 * What a release names: a held lease, or a ticket whose acquisition gave up (kind 'chat'; ticket null:
 * the one its request id took, when the take-ticket's reply never came).
 */
export type ReleaseTarget = Pick<HeldLease, 'kind' | 'key' | 'fence' | 'requestId' | 'queued'> & {
  ticket: number | null
  /** A chat turn that served nothing (Turn.release({ served: false })). */
  unserved?: boolean
}

type RecentRelease = ReleaseTarget & { at: number } // a release that went through `at` (monotonic ms)

interface PendingRelease {
  target: ReleaseTarget
  giveUpAt: number
}

let leaseIds = 0

/**
 * At most this many releases are kept for a resend after a server change (about 260 bytes each,
 * so about 5 MB): release rate × leaseMs reaches it at 2,000 releases a second with a 10 s lease. Past it the
 * oldest go first — a lossy failover loses the last writes, and an older lost release holds its
 * chat only for what was left of its lease.
 */
export const RECENT_RELEASES_CAP = 20_000
/** Releases re-sent per batch (one write; the next batch when its replies are in). */
export const RESEND_BATCH = 500

/** Run `f` on every item, RESEND_BATCH at a time (a batch leaves in one write; the next waits for its replies). */
async function inBatches<T>(items: T[], f: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += RESEND_BATCH) await Promise.all(items.slice(i, i + RESEND_BATCH).map(f))
}

function releasedError(lease: HeldLease): LeaseLostError {
  return new LeaseLostError(lease.key, 'stopped', `lease on ${JSON.stringify(lease.key)} was released`)
}

function unconfirmedError(lease: HeldLease, ageMs: number): LeaseLostError {
  return new LeaseLostError(
    lease.key,
    'unconfirmed',
    `lease on ${JSON.stringify(lease.key)} unconfirmed: its last renewal Redis confirmed was sent ${Math.round(ageMs)}ms ago (late)`,
  )
}

export class LeaseTable {
  private readonly held = new Map<number, HeldLease>()
  private readonly pendingReleases = new Set<PendingRelease>()
  /** Releases of the last leaseMs, oldest first from `recentHead` (resendRecentReleases): small copies, not the leases. */
  private recentReleases: Array<RecentRelease | undefined> = []
  private recentHead = 0
  /** Recent releases dropped past RECENT_RELEASES_CAP since the last resend. */
  private recentOverCap = 0
  /** Fences remembered past the leases: lost turns, leads once held, the store's scheduler leads. */
  readonly fences = new FenceMemory()
  /**
   * A release handed the chat's turn to a ticket of ours (a local hand-off: the grant came in the
   * reply, not as a wake-up): the turn queue routes it to the acquisition waiting with that ticket.
   */
  onHanded: (key: string, grant: HandedGrant) => void = () => {}
  /** Does any acquisition of ours wait in this chat? (None: a release deletes our w: field there too.) */
  othersWaiting: (key: string) => boolean = () => true

  constructor(private readonly core: CoordinatorContext) {}

  /** Register a lease this coordinator now holds: granted by a call sent at `sentAt`, ours locally until `deadline`. */
  track(kind: LeaseKind, key: string, fence: number, ticket: number, sentAt: number, deadline: number, requestId = ''): HeldLease {
    const lease: HeldLease = {
      id: ++leaseIds,
      kind,
      key,
      fence,
      ticket,
      requestId,
      controller: null,
      deadline,
      confirmedAt: sentAt,
      lost: null,
      released: false,
    }
    this.held.set(lease.id, lease)
    if (kind === 'lead') this.fences.rememberLead(key, fence)
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

  /**
   * Is the lease ours now, by the monotonic clock at this call (right in the first instant after a
   * freeze, before any timer ran)? Past its local deadline it is lost (marked so the first time).
   * Before that, a lease whose last confirmed renewal is late — by the rule every view uses for a
   * holder's renewals (state/health.ts isLate) — is unconfirmed: a holder that froze for half a lease
   * may have been revoked (`provider yield --force`, `chat release`) and its successor granted
   * meanwhile, and only the renewal its timers are about to send can tell. So it is not ours until a
   * renewal confirms it (then held again), or reports it gone. A healthy holder never reads late:
   * it renews every renewIntervalMs, and the margin (half an interval) covers the round trip.
   */
  isHeld(lease: HeldLease): boolean {
    if (lease.lost || lease.released) return false
    const now = monotonicNow()
    if (now >= lease.deadline) {
      this.markLost(lease, 'expired')
      return false
    }
    return !isLate(now - lease.confirmedAt, renewIntervalMs(this.core.leaseMs))
  }

  assertHeld(lease: HeldLease): void {
    if (this.isHeld(lease)) return
    throw lease.lost ?? (lease.released ? releasedError(lease) : unconfirmedError(lease, monotonicNow() - lease.confirmedAt))
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
    if (lease.kind === 'chat') this.fences.rememberLostTurn(lease.key, lease.fence)
    lease.controller?.abort(err)
    if (quiet) return
    this.core.stats.leasesLost++
    if (reason === 'expired' || reason === 'reset') {
      // Redis may still think we hold it (we could not renew, or it restarted with the data): give it
      // back as soon as Redis answers.
      this.retryLater(lease)
    } else if (reason === 'superseded') {
      // Refused by the store: usually a newer turn owns the chat and this gives nothing back; when the
      // turn is still ours in Redis (a revision conflict), it goes to the next ticket now, once.
      void this.releaseInBackend(lease).catch(() => this.retryLater(lease))
    }
    const event: LeaseLostEvent = { key: lease.key, kind: lease.kind, fence: lease.fence, reason }
    this.core.emit('coordination:lease-lost', event)
    this.ended(lease, err)
    this.core.logEvent({ type: 'lease-lost', ...event })
  }

  /** The lease's end, told once to whoever watches it (a tryLead's events). */
  private ended(lease: HeldLease, lost: LeaseLostError | null): void {
    const onEnd = lease.onEnd
    lease.onEnd = undefined
    onEnd?.(lost)
  }

  /**
   * Give a lease back (`unserved`: a chat turn that served nothing). Network failures are retried by
   * the renewer every leaseMs / 3.
   */
  async releaseLease(lease: HeldLease, unserved = false): Promise<void> {
    if (lease.released) return
    const wasLost = lease.lost
    lease.released = true
    this.held.delete(lease.id)
    if (lease.controller && !lease.controller.signal.aborted) lease.controller.abort(releasedError(lease))
    if (!wasLost && this.core.state !== 'crashed') this.ended(lease, null)
    if (wasLost && wasLost.reason !== 'expired' && wasLost.reason !== 'reset') return
    if (this.core.state === 'crashed') return
    const target: ReleaseTarget = unserved ? { ...lease, unserved } : lease
    try {
      await this.releaseInBackend(target, lease.kind === 'chat' && !this.othersWaiting(lease.key))
    } catch {
      this.retryLater(target)
    }
  }

  /**
   * Withdraw the queued ticket of an acquisition that gave up (timeout, abort), or pass on the turn
   * if it was granted meanwhile. When Redis cannot be reached, the withdrawal is kept with the failed
   * releases and retried every leaseMs / 3: a live ticket left behind would be granted to a replica
   * that no longer waits, blocking the chat for a lease and getting the replica's next ticket there
   * dropped as a dead holder's. A turn given back this way served nothing: `unserved`.
   */
  async withdrawTicket(key: string, ticket: number | null, requestId: string, lastWaiter = false): Promise<void> {
    const target: ReleaseTarget = { kind: 'chat', key, ticket, requestId, fence: 0, unserved: true }
    try {
      await this.releaseInBackend(target, lastWaiter)
    } catch {
      this.retryLater(target)
    }
  }

  /**
   * The release itself, in one script (conditioned on our incarnation, and ticket or fence). `lastWaiter`:
   * no other acquisition of ours waits in the chat (first sends only: a retry keeps the w: field, harmlessly).
   */
  async releaseInBackend(lease: ReleaseTarget, lastWaiter = false): Promise<void> {
    const { backend, incarnation, leaseMs } = this.core
    if (lease.kind === 'chat') {
      const sentAt = monotonicNow()
      const { key, ticket, requestId, unserved, queued } = lease
      const reply = await backend.turnRelease(key, incarnation, ticket, leaseMs, requestId, unserved, lastWaiter, queued)
      // Made after sentAt — unless a first run whose reply was lost made it ('not-ours': the waiter asks Redis).
      if (reply.handed) this.onHanded(lease.key, reply.outcome === 'not-ours' ? reply.handed : { ...reply.handed, sentAt })
    } else if (lease.kind === 'lead') {
      await backend.leadRelease(lease.key, incarnation, lease.fence, leaseMs)
      this.core.logEvent({ type: 'lead-released', name: lease.key, fence: lease.fence })
    }
    this.rememberRelease(lease)
  }

  /** Keep a release that went through for leaseMs: a lossy failover in that time may undo it. */
  private rememberRelease(target: ReleaseTarget): void {
    const now = monotonicNow()
    const { kind, key, ticket, fence, requestId, unserved } = target
    const list = this.recentReleases
    list.push(unserved ? { kind, key, ticket, fence, requestId, unserved, at: now } : { kind, key, ticket, fence, requestId, at: now })
    while (this.recentHead < list.length && now - list[this.recentHead]!.at > this.core.leaseMs) list[this.recentHead++] = undefined
    for (; list.length - this.recentHead > RECENT_RELEASES_CAP; this.recentOverCap++) list[this.recentHead++] = undefined
    // The slots of dropped entries leave the array in one copy once they are half of it (amortised
    // O(1) per release; what they named is freed at once).
    if (this.recentHead > 1024 && this.recentHead * 2 > list.length) {
      this.recentReleases = list.slice(this.recentHead)
      this.recentHead = 0
    }
  }

  /**
   * The server changed (a failover that may have lost the last writes): send the releases of the last
   * leaseMs again, or the chats and leads given back just before it stay blocked by our own lease
   * until it expires. Each is conditioned on our incarnation and its request or fence, so one that
   * did survive changes nothing. `reached`: only those (on a Cluster, the ones in the slots of the
   * masters that changed; the others are kept). Sent in batches of RESEND_BATCH, each one write.
   * Returns how many are sent, how many older ones the cap had dropped, and when they are done
   * (those that fail are retried later).
   */
  resendRecentReleases(reached: (target: ReleaseTarget) => boolean = () => true): { count: number; overCap: number; done: Promise<void> } {
    const now = monotonicNow()
    const recent: ReleaseTarget[] = []
    const kept: RecentRelease[] = []
    for (let i = this.recentHead; i < this.recentReleases.length; i++) {
      const r = this.recentReleases[i]
      if (!r || now - r.at > this.core.leaseMs) continue
      if (reached(r)) recent.push(r)
      else kept.push(r)
    }
    this.recentReleases = kept
    this.recentHead = 0
    const overCap = this.recentOverCap
    this.recentOverCap = 0
    const done = inBatches(recent, async (target) => {
      try {
        await this.releaseInBackend(target)
      } catch {
        this.retryLater(target)
      }
    })
    return { count: recent.length, overCap, done }
  }

  /**
   * Until 2 × leaseMs from now: by then Redis has expired it (a lease not renewed, a ticket not
   * polled — and a turn granted to that ticket meanwhile runs out a lease after its grant). The
   * release script is idempotent: a retry of one that went through finds nothing of ours.
   */
  private retryLater(target: ReleaseTarget): void {
    this.pendingReleases.add({ target, giveUpAt: monotonicNow() + this.core.leaseMs * 2 })
  }

  get pending(): number {
    return this.pendingReleases.size
  }

  /**
   * Retry the releases and withdrawals that failed (each until 2 × leaseMs after its failure); only
   * those of one chat with `chatKey` (a new acquisition there goes first behind nothing of its own).
   */
  async retryReleases(chatKey?: string): Promise<void> {
    const now = monotonicNow()
    const due = [...this.pendingReleases].filter((p) => chatKey === undefined || (p.target.kind === 'chat' && p.target.key === chatKey))
    // Sent together (a batch is one write), not one after another: a Redis that does not answer
    // then costs one commandTimeoutMs per batch, not one per release.
    await inBatches(due, async (p) => {
      if (now > p.giveUpAt) {
        this.pendingReleases.delete(p)
        return
      }
      try {
        await this.releaseInBackend(p.target)
        this.pendingReleases.delete(p)
      } catch {
        // still unreachable: next cycle
      }
    })
  }

  /** A checkpoint write with turn `fence` (null: any) on chat `key` was refused: those turns are lost. */
  supersede(key: string, fence: number | null): void {
    for (const lease of this.on('chat', key)) {
      if (fence === null || lease.fence <= fence) this.markLost(lease, 'superseded')
    }
  }

  /** The watchdog: a lease whose local deadline passed is lost now, whether or not a timer ran late. */
  expireOverdue(now: number): void {
    for (const lease of this.all()) if (now >= lease.deadline) this.markLost(lease, 'expired')
  }

  /** The process "died" (crash()): every lease goes quietly, nothing is given back. */
  dropAll(): void {
    for (const lease of this.all()) this.markLost(lease, 'stopped', true)
    this.pendingReleases.clear()
  }
}
