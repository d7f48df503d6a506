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
import type { HubCore } from './memory-core.js'
import { MemoryLeads } from './memory-leads.js'
import { MemoryTurns } from './memory-turns.js'

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
  private readonly replicas = new Map<string, ReplicaRecord>()
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

  /** The chats' turns (memory-turns.ts) and the leads (memory-leads.ts), sharing this hub's clock, fences and wake-ups. */
  private readonly turns: MemoryTurns
  private readonly leads: MemoryLeads

  constructor(options: MemoryCoordinationHubOptions = {}) {
    this.maxIdleKeys = options.maxIdleKeys ?? DEFAULTS.maxIdleKeys
    this.clock = options.now ?? (() => globalThis.performance.timeOrigin + globalThis.performance.now())
    const core: HubCore = {
      now: () => this.now(),
      nextFence: () => this.nextFence(),
      wake: (incarnation, kind, key, ticket, grant) => this.wake(incarnation, kind, key, ticket, grant),
    }
    this.turns = new MemoryTurns(core, this.maxIdleKeys)
    this.leads = new MemoryLeads(core)
  }

  /** The hub's clock: shared by every coordinator on it (Redis's clock in the real thing). */
  now(): number {
    return this.clock()
  }

  /** Chats with state (held, queued or idle-but-remembered). */
  get size(): number {
    return this.turns.size
  }

  /** A chat's turn queue as a reader of Redis sees it: holder, queued tickets in grant order, dead tickets skipped. */
  chatState(
    key: string,
  ): { holder: (Holder & { ticket: number }) | null; tickets: Array<Holder & { ticket: number }>; skipped: number } | null {
    return this.turns.chatState(key)
  }

  /** A lead as a reader of Redis sees it: holder, fence, pending yield request, standing replicas. */
  leadState(
    name: string,
  ): { holder: Holder | null; fence: number; yieldRequest: { by: string; target: string | null } | null; candidates: string[] } | null {
    return this.leads.leadState(name)
  }

  /** The next fence of the hub: fences (and checkpoint revisions) of every key come from it, so they only grow. */
  nextFence(): number {
    return ++this.fenceSeq
  }

  /** A chat's current turn fence (0: never granted), what a fenced checkpoint write is compared with. */
  chatFence(key: string): number {
    return this.turns.chatFence(key)
  }

  /**
   * A chat's turn as a fenced store write is checked against it (lua/includes/fenced.lua on Redis):
   * its current fence, and whether that grant's holder let its lease run out unreleased.
   */
  chatTurn(key: string): { fence: number; expired: boolean } {
    return this.turns.chatTurn(key)
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
   * Take a ticket (ticket null) or poll with one. `requestId` (unique per acquisition) makes taking a
   * ticket idempotent, as on Redis: a take sent again after its reply was lost polls with the ticket
   * the first one took instead of queueing a second one.
   */
  turnAcquire(
    key: string,
    replicaId: string,
    incarnation: string,
    leaseMs: number,
    ticket: number | null,
    requestId = '',
    epoch = '',
  ): TurnReply {
    return this.turns.turnAcquire(key, replicaId, incarnation, leaseMs, ticket, requestId, epoch)
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
    return this.turns.turnRelease(key, incarnation, ticket, leaseMs, requestId, unserved, lastWaiter)
  }

  renew(item: RenewItem, incarnation: string, leaseMs: number): RenewReply {
    return item.kind === 'lead' ? this.leads.renew(item, incarnation, leaseMs) : this.turns.renew(item, incarnation, leaseMs)
  }

  leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): LeadReply {
    return this.leads.leadAcquire(name, replicaId, incarnation, leaseMs, stand)
  }

  leadRelease(name: string, incarnation: string, fence: number | null): boolean {
    return this.leads.leadRelease(name, incarnation, fence)
  }

  /** lead-transport-1: the leader's transport down (since, yields at) or up, while it holds the lead with that fence. */
  leadTransport(name: string, incarnation: string, fence: number, down: boolean, yieldAfterMs: number): boolean {
    return this.leads.leadTransport(name, incarnation, fence, down, yieldAfterMs)
  }

  requestYield(name: string, req: YieldRequestInput): YieldResult {
    return this.leads.requestYield(name, req)
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
    epoch = '',
  ): Promise<TurnReply> {
    return this.call(() => this.hub.turnAcquire(key, replicaId, incarnation, leaseMs, ticket, requestId, epoch))
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
