import type { CoordinationBackend, WakeHandler, Warning } from '../coordinator/backend.js'
import type {
  BeatRecord,
  BeatReply,
  Holder,
  LeadReply,
  PushedGrant,
  RenewItem,
  RenewReply,
  TurnReleaseReply,
  TurnReply,
  YieldRequestInput,
  YieldResult,
} from '../wire/types.js'
import { DEFAULTS } from '../defaults.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { grantable } from '../state/health.js'

/**
 * What a call to an unreachable hub rejects with: what RedisCoordinator and RedisStore give when
 * Redis is down or the connection dropped (ioredis's error mapped by errorFromRedis), so a bot's
 * tests see on the hub exactly the error it handles in production.
 */
export function hubUnreachable(): CoordinationUnavailableError {
  return new CoordinationUnavailableError('unreachable', 'Redis unreachable: Connection is closed.')
}

export interface MemoryCoordinationHubOptions {
  /** Idle keys kept (last holder, fence) before the least recently used is evicted. Default 10,000. */
  maxIdleKeys?: number
  /**
   * The hub's clock in ms — what Redis's TIME is to replicas: lease expiries and ticket deadlines are
   * measured on it. Default: the process's monotonic clock (read through the global `performance`,
   * so fake timers drive it); pass your own to move the shared clock apart from the replicas' clocks.
   */
  now?: () => number
}

interface Ticket {
  replicaId: string
  incarnation: string
  deadline: number
  enqueuedAt: number
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
}

/**
 * How long a grant pushed to a waiter stays offered before it lapses (lua/includes/turn.lua: take_up_ms).
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

interface LeadRecord {
  holder: (Holder & { exp: number; since: number; transportDown?: { since: number; yieldsAt: number } }) | null
  fence: number
  last: Holder | null
  previous: Holder | null
  releasedAt: number | null
  handoverMs: number | null
  yieldRequest: { by: string; target: string | null; exp: number; at: number } | null
  candidates: Map<string, { replicaId: string; deadline: number }>
}

interface ReplicaRecord {
  incarnation: string
  exp: number
  beat: number
  record: BeatRecord
}

/**
 * The in-process reference of the shared state: what Redis holds for replicas, kept in one object
 * that several MemoryCoordinators share. Each method body runs without awaiting, so it is as atomic
 * as a Lua script. Fences come from one hub-wide counter, so they stay monotonic for a key even
 * after its idle record was evicted.
 */
export class MemoryCoordinationHub {
  readonly maxIdleKeys: number
  private readonly clock: () => number
  private fenceSeq = 0
  private readonly chats = new Map<string, ChatRecord>()
  /** Idle chats (no holder, no tickets), least recently used first. */
  private readonly idle = new Set<string>()
  private readonly replicas = new Map<string, ReplicaRecord>()
  private readonly leads = new Map<string, LeadRecord>()
  private readonly subscribers = new Map<string, WakeHandler>()
  private readonly pushCounts = new Map<string, number>()
  readonly events: Array<Record<string, unknown>> = []
  /** Changes when the hub "restarts" (tests): coordinators drop every lease, as after a Redis failover. */
  identity = 'memory-1'
  /**
   * Tests: while true, the hub is down (Redis unreachable): every call of a coordinator or a
   * MemoryStore on it rejects with CoordinationUnavailableError, reason 'unreachable'.
   */
  unavailable = false

  constructor(options: MemoryCoordinationHubOptions = {}) {
    this.maxIdleKeys = options.maxIdleKeys ?? DEFAULTS.maxIdleKeys
    this.clock = options.now ?? (() => globalThis.performance.timeOrigin + globalThis.performance.now())
  }

  /** The hub's clock: shared by every coordinator on it (Redis's clock in the real thing). */
  now(): number {
    return this.clock()
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

  /** A lead as a reader of Redis sees it: holder, fence, pending yield request, standing replicas. */
  leadState(
    name: string,
  ): { holder: Holder | null; fence: number; yieldRequest: { by: string; target: string | null } | null; candidates: string[] } | null {
    const l = this.leads.get(name)
    if (!l) return null
    return {
      holder: l.holder ? { replicaId: l.holder.replicaId, incarnation: l.holder.incarnation } : null,
      fence: l.fence,
      yieldRequest: l.yieldRequest ? { by: l.yieldRequest.by, target: l.yieldRequest.target } : null,
      candidates: [...this.liveCandidates(l).values()].map((c) => c.replicaId),
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
      }
      this.chats.set(key, c)
    }
    return c
  }

  /** The next fence of the hub: fences (and checkpoint revisions) of every key come from it, so they only grow. */
  nextFence(): number {
    return ++this.fenceSeq
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

  /** Wake-ups sent to an incarnation so far (tests: a grant handed over in a reply sends none). */
  pushesTo(incarnation: string): number {
    return this.pushCounts.get(incarnation) ?? 0
  }

  private wake(incarnation: string, kind: 'chat' | 'lead', key: string, ticket: number | null, grant?: PushedGrant): void {
    this.pushCounts.set(incarnation, this.pushesTo(incarnation) + 1)
    const handler = this.subscribers.get(incarnation)
    if (handler) queueMicrotask(() => handler(kind, key, ticket, grant))
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
      c.holder = null
    }
    for (const [ticket, t] of c.queue) {
      c.queue.delete(ticket)
      // As on Redis (ticket_live): its own deadline, or its incarnation's in this chat (grantable).
      const deadlineMs = Math.max(t.deadline, c.waiters.get(t.incarnation) ?? 0)
      if (grantable({ incarnation: t.incarnation, deadlineMs }, now, deadIncarnation)) {
        // As on Redis: a grant to another replica's waiter is an offer its next poll takes up; one
        // that lapses served nothing (the last holder stays who it was).
        const offered = ticket !== callerTicket && t.incarnation !== localIncarnation
        c.previous = c.last
        c.fence = this.nextFence()
        c.holder = {
          replicaId: t.replicaId,
          incarnation: t.incarnation,
          ticket,
          exp: now + (offered ? takeUpMs(leaseMs) : leaseMs),
          grantedAt: now,
          requestId: t.requestId,
          offered,
        }
        if (offered) this.wake(t.incarnation, 'chat', key, ticket, this.grantOf(c, takeUpMs(leaseMs)))
        else c.last = { replicaId: t.replicaId, incarnation: t.incarnation }
        return ticket
      }
      if (t.incarnation !== deadIncarnation) c.waiters.delete(t.incarnation)
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

  /**
   * Take a ticket (ticket null) or poll with one. `requestId` (unique per acquisition) makes taking a
   * ticket idempotent, as on Redis: a take sent again after its reply was lost polls with the ticket
   * the first one took instead of queueing a second one.
   */
  turnAcquire(key: string, replicaId: string, incarnation: string, leaseMs: number, ticket: number | null, requestId = ''): TurnReply {
    const now = this.now()
    let c: ChatRecord
    const request = `${incarnation}:${requestId}` // request ids are unique within an incarnation only
    const known = ticket === null && requestId !== '' ? this.chats.get(key)?.requests.get(request) : undefined
    if (ticket === null && known === undefined) {
      c = this.chat(key, true)!
      ticket = ++c.nextTicket
      c.queue.set(ticket, { replicaId, incarnation, deadline: now + ticketLifeMs(leaseMs), enqueuedAt: now, requestId })
      c.waiters.set(incarnation, now + ticketLifeMs(leaseMs))
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
      if (!t || t.incarnation !== incarnation || !owns(t.requestId, requestId)) return { status: 'dropped' }
      c.waiters.set(incarnation, now + ticketLifeMs(leaseMs)) // every queued ticket of ours here lives on
    }
    const granted = this.grantNext(key, c, leaseMs, ticket)
    this.settle(key, c)
    if (granted === ticket) return { status: 'granted', ticket, fence: c.fence, previousHolder: c.previous }
    return { status: 'queued', ticket, holderLeftMs: c.holder ? Math.max(0, c.holder.exp - now) : leaseMs }
  }

  /**
   * Give a turn back or withdraw a queued ticket; ticket null: the one acquisition `requestId` took
   * (a waiter that gave up while its take-ticket was unanswered). With a request id, only a turn or
   * ticket of that acquisition is given back.
   */
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
    if (lastWaiter) c.waiters.delete(incarnation)
    let outcome: TurnReleaseReply['outcome'] = 'not-ours'
    const queued = c.queue.get(ticket)
    if (c.holder && c.holder.incarnation === incarnation && c.holder.ticket === ticket && owns(c.holder.requestId, requestId)) {
      c.holder = null
      if (unserved) c.last = c.previous // served nothing: who served before it stays the last holder
      outcome = 'released'
    } else if (queued && queued.incarnation === incarnation && owns(queued.requestId, requestId)) {
      c.queue.delete(ticket)
      outcome = 'withdrawn'
    }
    let granted: number | null = null
    if (outcome !== 'not-ours') {
      granted = this.grantNext(key, c, leaseMs, ticket, incarnation)
      this.settle(key, c)
    }
    // The turn is a ticket of ours now: handed over in this reply (with 'not-ours': a release sent
    // again whose first run handed it over, as on Redis).
    const h = c.holder
    if (h && h.incarnation === incarnation && h.exp > this.now() && (outcome === 'not-ours' || granted === h.ticket)) {
      return { outcome, handed: { ticket: h.ticket, ...this.grantOf(c, leaseMs) } }
    }
    return { outcome, handed: null }
  }

  renew(item: RenewItem, incarnation: string, leaseMs: number): RenewReply {
    if (item.kind === 'lead') return this.renewLead(item, incarnation, leaseMs)
    const rec = this.chats.get(item.key)
    const h = rec?.holder
    if (!rec || !h || h.incarnation !== incarnation || rec.fence !== item.fence) return { ok: false, reason: 'revoked' }
    const now = this.now()
    if (h.exp <= now) return { ok: false, reason: 'expired' }
    h.exp = now + leaseMs
    return { ok: true, yieldRequest: null }
  }

  private lead(name: string): LeadRecord {
    let l = this.leads.get(name)
    if (!l) {
      l = {
        holder: null,
        fence: 0,
        last: null,
        previous: null,
        releasedAt: null,
        handoverMs: null,
        yieldRequest: null,
        candidates: new Map(),
      }
      this.leads.set(name, l)
    }
    return l
  }

  private liveCandidates(l: LeadRecord): Map<string, { replicaId: string; deadline: number }> {
    const now = this.now()
    for (const [inc, c] of l.candidates) if (c.deadline <= now) l.candidates.delete(inc)
    return l.candidates
  }

  leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): LeadReply {
    const now = this.now()
    const l = this.lead(name)
    const standby = () => {
      if (stand) l.candidates.set(incarnation, { replicaId, deadline: now + leaseMs })
    }
    if (l.holder && l.holder.exp > now) {
      if (l.holder.incarnation === incarnation) {
        l.holder.exp = now + leaseMs
        return { status: 'mine', fence: l.fence, previousHolder: l.previous }
      }
      standby()
      return {
        status: 'held',
        holder: { replicaId: l.holder.replicaId, incarnation: l.holder.incarnation },
        fence: l.fence,
        msLeft: l.holder.exp - now,
      }
    }
    if (l.holder) {
      l.releasedAt = l.holder.exp
      l.holder = null
    }
    const y = l.yieldRequest
    if (
      y &&
      y.target &&
      y.exp > now &&
      y.target !== replicaId &&
      [...this.liveCandidates(l).values()].some((c) => c.replicaId === y.target)
    ) {
      standby()
      return { status: 'reserved', target: y.target, msLeft: y.exp - now }
    }
    l.previous = l.last
    l.fence = this.nextFence()
    l.holder = { replicaId, incarnation, exp: now + leaseMs, since: now }
    l.last = { replicaId, incarnation }
    l.handoverMs = l.releasedAt === null ? null : now - l.releasedAt
    l.releasedAt = null
    l.yieldRequest = null
    l.candidates.delete(incarnation)
    return { status: 'granted', fence: l.fence, previousHolder: l.previous }
  }

  leadRelease(name: string, incarnation: string, fence: number | null): boolean {
    const l = this.leads.get(name)
    if (!l) return false
    l.candidates.delete(incarnation)
    if (fence === null || !l.holder || l.holder.incarnation !== incarnation || l.fence !== fence) return false
    l.holder = null
    l.releasedAt = this.now()
    for (const inc of this.liveCandidates(l).keys()) this.wake(inc, 'lead', name, null)
    return true
  }

  /** lead-transport-1: the leader's transport down (since, yields at) or up, while it holds the lead with that fence. */
  leadTransport(name: string, incarnation: string, fence: number, down: boolean, yieldAfterMs: number): boolean {
    const now = this.now()
    const l = this.leads.get(name)
    if (!l?.holder || l.holder.incarnation !== incarnation || l.fence !== fence || l.holder.exp <= now) return false
    l.holder.transportDown = down ? { since: l.holder.transportDown?.since ?? now, yieldsAt: now + yieldAfterMs } : undefined
    return true
  }

  requestYield(name: string, req: YieldRequestInput): YieldResult {
    const now = this.now()
    const l = this.leads.get(name)
    if (!l?.holder || l.holder.exp <= now) return { status: 'no-leader' }
    if (req.ifFence !== null && l.fence !== req.ifFence) return { status: 'fence-changed', fence: l.fence }
    if (req.target && ![...this.liveCandidates(l).values()].some((c) => c.replicaId === req.target)) {
      return { status: 'target-not-standing' }
    }
    l.yieldRequest = { by: req.by, target: req.target, exp: now + req.ttlMs, at: now }
    this.wake(l.holder.incarnation, 'lead', name, null)
    return { status: 'requested', leader: { replicaId: l.holder.replicaId, incarnation: l.holder.incarnation }, fence: l.fence }
  }

  private renewLead(item: RenewItem, incarnation: string, leaseMs: number): RenewReply {
    const l = this.leads.get(item.key)
    const now = this.now()
    if (!l?.holder || l.holder.incarnation !== incarnation || l.fence !== item.fence) return { ok: false, reason: 'revoked' }
    if (l.holder.exp <= now) return { ok: false, reason: 'expired' }
    l.holder.exp = now + leaseMs
    const y = l.yieldRequest
    return { ok: true, yieldRequest: y && y.exp > now ? { by: y.by, target: y.target } : null }
  }

  beat(replicaId: string, incarnation: string, leaseMs: number, record: BeatRecord): BeatReply {
    const now = this.now()
    const cur = this.replicas.get(replicaId)
    const other = cur && cur.incarnation !== incarnation && cur.exp > now ? cur.incarnation : null
    this.replicas.set(replicaId, { incarnation, exp: now + leaseMs, beat: now, record })
    return { evicted: false, otherIncarnation: other }
  }

  replicaStop(replicaId: string, incarnation: string): void {
    if (this.replicas.get(replicaId)?.incarnation === incarnation) this.replicas.delete(replicaId)
  }

  /** Live replicas (heartbeat not expired). */
  liveReplicas(): Array<{ replicaId: string; incarnation: string; record: BeatRecord }> {
    const now = this.now()
    return [...this.replicas.entries()]
      .filter(([, r]) => r.exp > now)
      .map(([replicaId, r]) => ({ replicaId, incarnation: r.incarnation, record: r.record }))
  }

  subscribe(incarnation: string, onWake: WakeHandler): () => void {
    this.subscribers.set(incarnation, onWake)
    return () => {
      if (this.subscribers.get(incarnation) === onWake) this.subscribers.delete(incarnation)
    }
  }

  appendEvent(event: Record<string, unknown>): void {
    this.events.push({ at: Date.now(), ...event })
    if (this.events.length > DEFAULTS.eventsMaxLen) this.events.splice(0, this.events.length - DEFAULTS.eventsMaxLen)
  }
}

/** One coordinator's view of a hub (so that crash() cuts just this replica off). */
export class MemoryBackend implements CoordinationBackend {
  readonly kind = 'memory' as const
  /** Every call answers at once (or fails at once): stop() never waits on the hub. */
  readonly stopBudgetMs = 2 * DEFAULTS.commandTimeoutMs
  private unsub: (() => void) | null = null
  private dead = false
  /** Tests: this replica's link to the hub is cut (its calls fail, pushes to it are lost). */
  linkCut = false
  /** Tests: this replica's calls reach the hub and take effect, but their replies are lost (they fail). */
  repliesLost = false

  constructor(readonly hub: MemoryCoordinationHub) {}

  private check(): void {
    if (this.dead || this.linkCut || this.hub.unavailable) throw hubUnreachable()
  }

  /** One call to the hub, as one script on Redis: it runs whole or not at all; its reply may be lost. */
  private call<T>(run: () => T): T {
    this.check()
    const reply = run()
    if (this.repliesLost) throw hubUnreachable()
    return reply
  }

  async init(): Promise<Warning[]> {
    return []
  }
  async turnAcquire(
    key: string,
    replicaId: string,
    incarnation: string,
    leaseMs: number,
    ticket: number | null,
    requestId: string,
  ): Promise<TurnReply> {
    return this.call(() => this.hub.turnAcquire(key, replicaId, incarnation, leaseMs, ticket, requestId))
  }
  async turnRelease(
    key: string,
    incarnation: string,
    ticket: number | null,
    leaseMs: number,
    requestId = '',
    unserved = false,
    lastWaiter = false,
  ): Promise<TurnReleaseReply> {
    return this.call(() => this.hub.turnRelease(key, incarnation, ticket, leaseMs, requestId, unserved, lastWaiter))
  }
  async leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): Promise<LeadReply> {
    return this.call(() => this.hub.leadAcquire(name, replicaId, incarnation, leaseMs, stand))
  }
  async leadRelease(name: string, incarnation: string, fence: number | null): Promise<boolean> {
    return this.call(() => this.hub.leadRelease(name, incarnation, fence))
  }
  async leadTransport(name: string, incarnation: string, fence: number, down: boolean, yieldAfterMs: number): Promise<boolean> {
    return this.call(() => this.hub.leadTransport(name, incarnation, fence, down, yieldAfterMs))
  }
  async requestYield(name: string, request: YieldRequestInput): Promise<YieldResult> {
    return this.call(() => this.hub.requestYield(name, request))
  }
  async renew(items: RenewItem[], incarnation: string, leaseMs: number): Promise<Array<RenewReply | Error>> {
    return this.call(() => items.map((i) => this.hub.renew(i, incarnation, leaseMs)))
  }
  async beat(replicaId: string, incarnation: string, leaseMs: number, record: BeatRecord): Promise<BeatReply> {
    return this.call(() => this.hub.beat(replicaId, incarnation, leaseMs, record))
  }
  async replicaStop(replicaId: string, incarnation: string): Promise<void> {
    this.call(() => this.hub.replicaStop(replicaId, incarnation))
  }
  /** Told when the link comes back (pushes sent while it was cut were lost). */
  private onPushGap: () => void = () => {}

  /** Tests: the link is back (see MemoryCoordinator.restoreLink). */
  restore(): void {
    const wasCut = this.linkCut || this.repliesLost
    this.linkCut = false
    this.repliesLost = false
    if (wasCut && this.unsub) this.onPushGap()
  }

  async subscribe(incarnation: string, onWake: WakeHandler, onPushGap: () => void = () => {}): Promise<() => Promise<void>> {
    this.onPushGap = onPushGap
    this.unsub = this.hub.subscribe(incarnation, (...wake) => {
      if (!this.linkCut && !this.repliesLost) onWake(...wake)
    })
    return async () => {
      this.unsub?.()
      this.unsub = null
    }
  }
  async serverIdentity(_leaseMs?: number): Promise<string | null> {
    return this.call(() => this.hub.identity)
  }
  pushReady(): boolean {
    return this.unsub !== null && !this.dead && !this.linkCut && !this.repliesLost && !this.hub.unavailable
  }
  async appendEvent(event: Record<string, unknown>): Promise<void> {
    if (!this.dead && !this.linkCut) this.hub.appendEvent(event)
  }
  async close(): Promise<void> {
    this.unsub?.()
    this.unsub = null
  }
  crash(): void {
    this.dead = true
    this.unsub?.()
    this.unsub = null
  }
}
