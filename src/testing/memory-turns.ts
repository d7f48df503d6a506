import type { Holder, PushedGrant, RenewItem, RenewReply, TurnReleaseReply, TurnReply } from '../wire/types.js'
import { grantable } from '../state/health.js'
import type { HubCore } from './memory-core.js'

interface Ticket {
  replicaId: string
  incarnation: string
  deadline: number
  enqueuedAt: number
  /** The stamp (see stamp()) of the take that queued it, as a push names it. */
  takenStamp: number
  /** The acquisition that took it ('' = none given). */
  requestId: string
}

interface LeaseRecord {
  /** `offered`: a grant pushed to a waiter that has not taken it up with a poll yet (as on Redis). */
  holder: (Holder & { ticket: number; exp: number; grantedAt: number; requestId?: string; offered?: boolean }) | null
  fence: number
  last: Holder | null
  previous: Holder | null
}

interface ChatRecord extends LeaseRecord {
  nextTicket: number
  queue: Map<number, Ticket> // insertion order is ticket order
  skipped: number
  /** The ticket each acquisition took, until it gives it back (rq:<id> on Redis). */
  requests: Map<string, number>
  /** Per incarnation: until when its queued tickets here live, set by its takes and polls (w:<inc> on Redis). */
  waiters: Map<string, number>
  /** When this record was made (a stamp): a chat made again has another (ep on Redis). */
  epoch: string
  /** Tickets skipped as presumed dead, by number: their incarnation (x:<ticket> on Redis). */
  presumedDead: Map<number, string>
}

/**
 * How long a grant pushed to a waiter stays offered after its ticket would have lapsed (lua/includes/turn.lua: take_up_ms).
 * A third of the lease as the renewal interval is (renewIntervalMs), but not that function on purpose:
 * it is what the Lua scripts compute (no 10 ms floor), and a change to how often replicas renew must
 * not move the offer window the hub shares with Redis.
 */
const takeUpMs = (leaseMs: number): number => Math.floor(leaseMs / 3)
/** How long a queued ticket lives after its last poll (lua/includes/turn.lua: ticket_life_ms). */
const ticketLifeMs = (leaseMs: number): number => leaseMs - takeUpMs(leaseMs)

/**
 * Is a ticket recorded for acquisition `recorded` the one of acquisition `requestId`? (A ticket number
 * is given again after an idle chat was evicted.) Nothing recorded or no id given: the incarnation decides.
 */
const owns = (recorded: string | undefined, requestId: string): boolean => !recorded || requestId === '' || recorded === requestId

/**
 * The chats' turns of a MemoryCoordinationHub: what the chat hashes and queues hold on Redis, and what
 * turn-acquire-2, turn-release-2 and lease-renew-1 do with them. Each method body runs without
 * awaiting, as atomic as a Lua script. Idle chats (no holder, no tickets) are remembered (last
 * holder, fence) up to maxIdleKeys, the least recently used evicted first.
 */
export class MemoryTurns {
  private readonly chats = new Map<string, ChatRecord>()
  /** Idle chats (no holder, no tickets), least recently used first. */
  private readonly idle = new Set<string>()
  private stamps = 0

  constructor(
    private readonly core: HubCore,
    private readonly maxIdleKeys: number,
  ) {}

  private now(): number {
    return this.core.now()
  }

  /**
   * What a script reads as Redis's clock (answeredAt, grantedAt in µs; a push's enqueuedAt in ms): here
   * a counter, strictly later at each call, read as ms (× 1000 for µs).
   */
  private stamp(): number {
    return ++this.stamps
  }

  /** Chats with state (held, queued or idle-but-remembered). */
  get size(): number {
    return this.chats.size
  }

  /** A chat's turn queue as a reader of Redis sees it: holder, queued tickets in grant order, dead tickets skipped. */
  chatState(
    key: string,
  ): { holder: (Holder & { ticket: number }) | null; tickets: Array<Holder & { ticket: number }>; skipped: number } | null {
    const c = this.chats.get(key)
    if (!c) return null
    const h = c.holder
    return {
      holder: h ? { replicaId: h.replicaId, incarnation: h.incarnation, ticket: h.ticket } : null,
      tickets: [...c.queue].map(([ticket, t]) => ({ replicaId: t.replicaId, incarnation: t.incarnation, ticket })),
      skipped: c.skipped,
    }
  }

  private chat(key: string, create: boolean): ChatRecord | undefined {
    let c = this.chats.get(key)
    if (!c && create) {
      c = {
        holder: null,
        fence: 0,
        last: null,
        previous: null,
        nextTicket: 0,
        queue: new Map(),
        skipped: 0,
        requests: new Map(),
        waiters: new Map(),
        epoch: String(this.stamp()),
        presumedDead: new Map(),
      }
      this.chats.set(key, c)
    }
    return c
  }

  /** A chat's current turn fence (0: never granted), what a fenced checkpoint write is compared with. */
  chatFence(key: string): number {
    return this.chats.get(key)?.fence ?? 0
  }

  /**
   * A chat's turn as a fenced store write is checked against it (lua/includes/fenced.lua on Redis):
   * its current fence, and whether that grant's holder let its lease run out unreleased.
   */
  chatTurn(key: string): { fence: number; expired: boolean } {
    const c = this.chats.get(key)
    return { fence: c?.fence ?? 0, expired: Boolean(c?.holder && c.holder.exp <= this.now()) }
  }

  /** Re-file a chat as idle or busy after a change; evict the least recently used idle chats. */
  private settle(key: string, c: ChatRecord): void {
    this.idle.delete(key)
    if (c.holder || c.queue.size) return
    this.idle.add(key)
    while (this.idle.size > this.maxIdleKeys) {
      const oldest = this.idle.values().next().value as string
      this.idle.delete(oldest)
      this.chats.delete(oldest)
    }
  }

  /**
   * Grant the oldest live ticket when the chat is free, waking its replica — unless it is the caller's
   * own ticket or one of `localIncarnation`'s (a release hands that one over in its reply).
   */
  private grantNext(key: string, c: ChatRecord, leaseMs: number, callerTicket: number | null, localIncarnation?: string): number | null {
    const now = this.now()
    // As on Redis: a holder whose lease ran out is presumed dead, and so are its own queued tickets.
    let deadIncarnation: string | null = null
    if (c.holder) {
      if (c.holder.exp > now) return null
      deadIncarnation = c.holder.incarnation
      c.presumedDead.set(c.holder.ticket, `l:${deadIncarnation}`) // as on Redis: an offer that lapsed untaken
      c.holder = null
    }
    for (const [ticket, t] of c.queue) {
      c.queue.delete(ticket)
      // As on Redis (ticket_live): its own deadline, or its incarnation's in this chat (grantable).
      const deadlineMs = Math.max(t.deadline, c.waiters.get(t.incarnation) ?? 0)
      if (grantable({ incarnation: t.incarnation, deadlineMs }, now, deadIncarnation)) {
        // As on Redis: a grant to another replica's waiter is an offer its next poll takes up, running
        // until the later of those two deadlines plus takeUpMs (offer_ms); one that lapses served
        // nothing (the last holder stays who it was).
        const offered = ticket !== callerTicket && t.incarnation !== localIncarnation
        const offerMs = deadlineMs - now + takeUpMs(leaseMs)
        c.previous = c.last
        c.fence = this.core.nextFence()
        c.holder = {
          replicaId: t.replicaId,
          incarnation: t.incarnation,
          ticket,
          exp: now + (offered ? offerMs : leaseMs),
          grantedAt: now,
          requestId: t.requestId,
          offered,
        }
        if (offered) {
          const grant = { ...this.grantOf(c, offerMs), grantedAt: this.stamp() * 1000, enqueuedAt: t.takenStamp }
          this.core.wake(t.incarnation, 'chat', key, ticket, grant)
        } else c.last = { replicaId: t.replicaId, incarnation: t.incarnation }
        return ticket
      }
      if (t.incarnation !== deadIncarnation) c.waiters.delete(t.incarnation)
      c.presumedDead.set(ticket, t.incarnation)
      c.skipped++
    }
    return null
  }

  /** The current holder's grant as a wake-up (or a release's reply) carries it. */
  private grantOf(c: ChatRecord, leaseMs: number): PushedGrant {
    const grant: PushedGrant = { fence: c.fence, previousHolder: c.previous, leaseMs }
    if (c.holder?.requestId) grant.requestId = c.holder.requestId
    return grant
  }

  /** turn-acquire-2 (MemoryCoordinationHub.turnAcquire): take a ticket, or poll with one. */
  turnAcquire(
    key: string,
    replicaId: string,
    incarnation: string,
    leaseMs: number,
    ticket: number | null,
    requestId = '',
    epoch = '',
  ): TurnReply {
    const now = this.now()
    let c: ChatRecord
    const request = `${incarnation}:${requestId}` // request ids are unique within an incarnation only
    const known = ticket === null && requestId !== '' ? this.chats.get(key)?.requests.get(request) : undefined
    let alone: { alone?: boolean } = {}
    let takenStamp: number | null = null
    if (ticket === null && known === undefined) {
      c = this.chat(key, true)!
      alone = { alone: !c.waiters.has(incarnation) } // as on Redis: no w: field of ours here
      // As on Redis's fast path: a holder whose lease ran out with nobody queued is not a dead holder.
      if (c.holder && c.holder.exp <= now && c.queue.size === 0) c.holder = null
      ticket = ++c.nextTicket
      takenStamp = this.stamp()
      c.queue.set(ticket, { replicaId, incarnation, deadline: now + ticketLifeMs(leaseMs), enqueuedAt: now, takenStamp, requestId })
      // As on Redis: a free chat is granted on the fast path, which writes no w: field.
      if (c.holder && (c.holder.exp > now || c.queue.size > 1)) c.waiters.set(incarnation, now + ticketLifeMs(leaseMs))
      if (requestId !== '') c.requests.set(request, ticket)
    } else {
      const found = this.chat(key, false)
      if (!found) return { status: 'dropped', stateLost: true }
      c = found
      if (ticket === null) ticket = known!
      const h = c.holder
      if (h && h.incarnation === incarnation && h.ticket === ticket && owns(h.requestId, requestId)) {
        if (h.exp > now) {
          h.exp = now + leaseMs
          if (h.offered) {
            h.offered = false // taken up: the last holder from here on
            c.last = { replicaId: h.replicaId, incarnation: h.incarnation }
            c.waiters.set(incarnation, now + ticketLifeMs(leaseMs))
          }
          return { status: 'granted', ticket, fence: c.fence, previousHolder: c.previous }
        }
        c.holder = null
        this.grantNext(key, c, leaseMs, ticket)
        this.settle(key, c)
        return { status: 'expired', ticket }
      }
      const t = c.queue.get(ticket)
      // Gone, or another's: with the chat's state when the chat was made again since our take (as on Redis).
      if (!t || t.incarnation !== incarnation || !owns(t.requestId, requestId)) {
        if (epoch !== '' && epoch !== c.epoch) return { status: 'dropped', stateLost: true }
        // As on Redis: skipped as presumed dead, or an offer that lapsed untaken (not an operator's skip).
        const mark = c.presumedDead.get(ticket)
        if (mark !== undefined) c.presumedDead.delete(ticket)
        if (mark === incarnation) return { status: 'dropped', presumedDead: true }
        if (mark === `l:${incarnation}`) return { status: 'expired', ticket }
        return { status: 'dropped' }
      }
      c.waiters.set(incarnation, now + ticketLifeMs(leaseMs)) // every queued ticket of ours here lives on
    }
    const granted = this.grantNext(key, c, leaseMs, ticket)
    this.settle(key, c)
    if (granted === ticket) return { status: 'granted', ticket, fence: c.fence, previousHolder: c.previous, ...alone }
    const holderLeftMs = c.holder ? Math.max(0, c.holder.exp - now) : leaseMs
    return { status: 'queued', ticket, holderLeftMs, answeredAt: (takenStamp ?? this.stamp()) * 1000, ...alone, epoch: c.epoch }
  }

  /** turn-release-2 (MemoryCoordinationHub.turnRelease): give a turn back, or withdraw a queued ticket. */
  turnRelease(
    key: string,
    incarnation: string,
    ticket: number | null,
    leaseMs: number,
    requestId = '',
    unserved = false,
    lastWaiter = false,
  ): TurnReleaseReply {
    const c = this.chat(key, false)
    if (!c) return { outcome: 'not-ours', handed: null }
    const request = `${incarnation}:${requestId}`
    if (ticket === null) {
      if (requestId === '') return { outcome: 'not-ours', handed: null }
      const known = c.requests.get(request)
      if (known === undefined) return { outcome: 'not-ours', handed: null }
      ticket = known
    }
    if (requestId !== '') c.requests.delete(request)
    let outcome: TurnReleaseReply['outcome'] = 'not-ours'
    const queued = c.queue.get(ticket)
    if (c.holder && c.holder.incarnation === incarnation && c.holder.ticket === ticket && owns(c.holder.requestId, requestId)) {
      const { offered, replicaId } = c.holder
      c.holder = null
      if (unserved)
        c.last = c.previous // served nothing: who served before it stays the last holder
      else if (offered) c.last = { replicaId, incarnation } // an offer used without its take-up served: as on Redis
      outcome = 'released'
    } else if (queued && queued.incarnation === incarnation && owns(queued.requestId, requestId)) {
      c.queue.delete(ticket)
      outcome = 'withdrawn'
    }
    // As on Redis: w: goes with a withdrawal (before the grant), a release (after the grant weighed
    // the tickets it popped), or a request id's field.
    const dropWaiter = lastWaiter && (outcome !== 'not-ours' || requestId !== '')
    if (dropWaiter && outcome !== 'released') c.waiters.delete(incarnation)
    let granted: number | null = null
    if (outcome !== 'not-ours') granted = this.grantNext(key, c, leaseMs, ticket, incarnation)
    if (dropWaiter) c.waiters.delete(incarnation)
    if (outcome !== 'not-ours') this.settle(key, c)
    // The turn is a ticket of ours now: handed over in this reply (with 'not-ours': a release sent
    // again whose first run handed it over, as on Redis).
    const h = c.holder
    if (h && h.incarnation === incarnation && h.exp > this.now() && (outcome === 'not-ours' || granted === h.ticket)) {
      return { outcome, handed: { ticket: h.ticket, ...this.grantOf(c, leaseMs) } }
    }
    return { outcome, handed: null }
  }

  renew(item: RenewItem, incarnation: string, leaseMs: number): RenewReply {
    const rec = this.chats.get(item.key)
    const h = rec?.holder
    if (!rec || !h || h.incarnation !== incarnation || rec.fence !== item.fence) return { ok: false, reason: 'revoked' }
    const now = this.now()
    if (h.exp <= now) return { ok: false, reason: 'expired' }
    h.exp = now + leaseMs
    if (h.offered) {
      // As on Redis: the renewal of an offer used without its take-up takes it up.
      h.offered = false
      rec.last = { replicaId: h.replicaId, incarnation: h.incarnation }
    }
    return { ok: true, yieldRequest: null }
  }
}
