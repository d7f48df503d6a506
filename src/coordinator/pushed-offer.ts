/**
 * Chat turns, an offer pushed to us by another replica's release, used at once without the poll that
 * takes it up (docs/turns.md, step 4a). Redis runs an offer `grant.leaseMs` from the moment it made it
 * (until our ticket would have lapsed, plus a third of the granter's lease: a lease after our last take
 * or poll in the chat); we can use it without asking only when we know a moment of our own clock that
 * came before that grant, and that the grant is of the ticket we hold now.
 */
import { monotonicNow } from '../clock.js'
import { renewIntervalMs } from '../defaults.js'
import { isLate } from '../state/health.js'
import type { PushedGrant } from '../wire/types.js'
import type { HeldLease } from './lease-table.js'

/** How many recent (sent, answered) pairs ServerClock keeps. */
const PAIRS = 8

/**
 * Recent calls of ours in one chat that Redis answered with its clock: when each was sent (monotonic
 * ms of this process), Redis's clock when it ran it (µs), and the server generation it was sent and
 * answered at. A grant in that chat whose own Redis time is later than one of them was made after
 * that call was sent: both times are the clock of the server that holds the chat (on a Cluster each
 * master has its own clock, so calls of other chats would not do). Kept per chat line (ArrivalLines).
 */
export class ServerClock {
  private readonly pairs: Array<{ sentAt: number; answeredAt: number; generation: number }> = []

  note(sentAt: number, answeredAt: number, generation: number): void {
    if (this.pairs.length >= PAIRS) this.pairs.shift()
    this.pairs.push({ sentAt, answeredAt, generation })
  }

  /** The latest sent call answered before `redisTimeUs` at `generation`: when it was sent, and Redis's clock (µs) when it ran (null: none known). */
  callBefore(redisTimeUs: number, generation: number): { sentAt: number; answeredAt: number } | null {
    let best: { sentAt: number; answeredAt: number } | null = null
    for (const p of this.pairs)
      if (p.generation === generation && p.answeredAt < redisTimeUs && (best === null || p.sentAt > best.sentAt)) best = p
    return best
  }
}

/** How to hold a pushed offer: the lease from `since` to `deadline`, renewed (taken up) at `takeUpAt`. */
export interface OfferUse {
  since: number
  deadline: number
  takeUpAt: number
}

/** What offerUse weighs besides the push: our acquisition, and the server as we know it. */
export interface OfferContext {
  requestId: string
  /** Redis's clock (ms) when our take queued the ticket we wait with (null: not known, e.g. a take sent again). */
  takenAt: number | null
  /** Is our ticket seen in the queue on the server we know now (its generation, no identity check under way)? */
  seenHere: boolean
  generation: number
  /** Our recent calls in this chat that Redis answered (null: none). */
  clock: ServerClock | null
  /** Did an operator's revocation of a turn of ours on the chat come at or after `at`? */
  revokedSince: (at: number) => boolean
  leaseMs: number
  renewMarginMs: number
}

/** The parts of a queue (AcquisitionHost) offerContext reads. */
interface OfferHost {
  core: { leaseMs: number; renewMarginMs: number }
  renewer: { generation: number; checkUnderWay: boolean }
  wakes: { revokedSince(key: string, at: number): boolean }
  lines: { clockOf(key: string): ServerClock | null }
}

/** The context of one acquisition's offer on `key`: its queue's parts, and its own state (`seenAt`: its place's). */
export function offerContext(q: OfferHost, key: string, requestId: string, takenAt: number | null, seenAt: number | null): OfferContext {
  const { generation, checkUnderWay } = q.renewer
  return {
    requestId,
    takenAt,
    seenHere: seenAt === generation && !checkUnderWay,
    generation,
    clock: q.lines.clockOf(key),
    revokedSince: (at) => q.wakes.revokedSince(key, at),
    leaseMs: q.core.leaseMs,
    renewMarginMs: q.core.renewMarginMs,
  }
}

/**
 * Can the offer `grant`, pushed to us (received at `grant.receivedAt`), be used now, and for how long?
 * Only when it is a grant of the ticket we hold now — it names our acquisition's request and the
 * moment our take queued it (so not a grant kept from before the chat's state was lost and the ticket
 * taken again), and that ticket was seen on the server we know now, which we knew when the push came
 * too — and when a call of ours in the chat was answered before it on that server's clock
 * (ServerClock). Redis ran that call after we sent it, and runs the offer until its grant time plus
 * its length: we hold it from when that call was sent for as long as Redis then had left of it, no
 * longer than our own lease, less `renewMarginMs` (a lease granted when that call was sent), and take
 * it up with a renewal when that lease would be renewed (two thirds of our lease less the margin left;
 * at once if less is): a pause of half a lease after it is used loses it no more than any lease.
 * With less than a quarter of it left, or with that call older than a late renewal (the lease would
 * not read held: LeaseTable.isHeld), it is not used. Null: ask Redis (the take-up poll) — a push from
 * an older script, one we cannot place, after an operator's revocation on the chat, or too late.
 */
export function offerUse(grant: PushedGrant, o: OfferContext): OfferUse | null {
  const { grantedAt, enqueuedAt, receivedAt = -Infinity } = grant
  if (grantedAt === undefined || grant.requestId !== o.requestId || o.takenAt === null || enqueuedAt !== o.takenAt) return null
  if (!o.seenHere || grant.receivedIn !== o.generation) return null
  const call = o.clock?.callBefore(grantedAt, o.generation) ?? null
  if (call === null || receivedAt <= call.sentAt || o.revokedSince(call.sentAt)) return null
  const since = call.sentAt
  const left = Math.floor((grantedAt - call.answeredAt) / 1000) + grant.leaseMs // Redis's ms from that call to the lapse
  const usable = Math.min(left, o.leaseMs) - o.renewMarginMs
  const now = monotonicNow()
  if (usable <= 0 || since + (usable * 3) / 4 <= now || isLate(now - since, renewIntervalMs(o.leaseMs))) return null
  const deadline = since + usable
  // Taken up when a lease granted at `since` would be renewed: the renewer's interval after it, with
  // that much less of a whole lease (less the margin) left.
  const leftAtRenewal = o.leaseMs - o.renewMarginMs - renewIntervalMs(o.leaseMs)
  return { since, deadline, takeUpAt: Math.max(deadline - leftAtRenewal, now) }
}

/**
 * Take up an offer we hold without its take-up at `at`, by renewing it (`renew`: the renewer's check
 * of one lease), if the turn is still held then; a renewal Redis did not answer is sent again every
 * `retryMs` while the lease lasts. A release before it needs nothing more.
 */
export function takeUpLater(lease: HeldLease, at: number, retryMs: number, renew: (lease: HeldLease) => Promise<void>): void {
  let timer: NodeJS.Timeout
  const arm = (ms: number) => {
    timer = setTimeout(() => void attempt(), ms)
    timer.unref?.()
  }
  const attempt = async () => {
    const sentAt = monotonicNow()
    await renew(lease)
    if (lease.released || lease.lost || lease.confirmedAt >= sentAt) return // ended, or taken up
    if (monotonicNow() + retryMs < lease.deadline) arm(retryMs)
  }
  arm(Math.max(0, at - monotonicNow()))
  const onEnd = lease.onEnd
  lease.onEnd = (lost) => {
    clearTimeout(timer)
    onEnd?.(lost)
  }
}
