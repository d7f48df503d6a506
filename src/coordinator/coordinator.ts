import { EventEmitter } from 'node:events'
import { hostname } from 'node:os'
import { randomBytes, randomUUID } from 'node:crypto'
import { monotonicNow, sleep } from '../clock.js'
import { parseDuration, type Duration } from '../duration.js'
import { validateId } from '../keys.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { LeaseLostError, type LeaseLostReason } from '../errors/lease-lost-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { isConnectionError } from '../errors/from-redis.js'
import { PACKAGE_VERSION } from '../version.js'
import { COORDINATOR_DEFAULTS } from '../defaults.js'
import type {
  BeatRecord,
  CoordinationBackend,
  Holder,
  LeadReply,
  LeaseKind,
  PushedGrant,
  RenewReply,
  TurnReply,
  YieldRequest,
} from './backend.js'
import { LatencyWindow } from './latency-window.js'
import { LeaseHandle } from './lease-handle.js'
import { Election, LeadHandle, type CampaignOptions, type FollowerReason, type Lead, type LeadPort } from './election.js'

export interface CoordinatorOptions {
  /** Unique among running replicas; a random UUID unless given (a pod or host name works). */
  replicaId?: string
  /** Lease length: failover time after a crash, and how long a replica may freeze. Default 15 s. */
  leaseMs?: Duration
  /** Longest pause between two polls of a waiting turn. Default 100 ms. */
  maxPollMs?: Duration
  /** First pause between polls (doubles up to maxPollMs). Default 5 ms. */
  minPollMs?: Duration
  /** How long a message waits for its chat's turn by default. Default 2 min. */
  turnWaitMs?: Duration
  /** How far before the Redis expiry a lease that could not be renewed is dropped locally. Default leaseMs / 10. */
  renewMarginMs?: Duration
  /** A stable description of this process for operators (defaults: hostname, pid, package version). */
  meta?: { host?: string; pid?: number; version?: string }
}

export interface AcquireTurnOptions {
  /** Give up after this long with CoordinationUnavailableError (default: the coordinator's turnWaitMs). */
  waitMs?: Duration
  /** Abort the wait (rejects with CoordinationUnavailableError, reason 'aborted'). */
  signal?: AbortSignal
}

/** A held lease: a chat turn or a lead. Valid until `signal` aborts; check with `assertHeld()` before acting. */
export interface Lease {
  readonly key: string
  readonly kind: LeaseKind
  /** Strictly grows for this key forever: pass it to whatever the holder writes, so late writes can be refused. */
  readonly fence: number
  /** Aborts (with a LeaseLostError as reason) the moment the lease is known lost. */
  readonly signal: AbortSignal
  /** True while held, by the local deadline (checked against the monotonic clock now). */
  readonly held: boolean
  /** Throws LeaseLostError once the lease is lost — including right after waking from a freeze. */
  assertHeld(): void
  /** Give the lease back (the next waiter is granted at once). Idempotent; never throws for network errors. */
  release(): Promise<void>
}

export interface Turn extends Lease {
  readonly kind: 'chat'
  readonly ticket: number
  /** Who held this chat before this grant; null when the key was new or had been cleaned up. */
  readonly previousHolder: Holder | null
  /** How long this turn waited in the queue (ms, local clock). */
  readonly waitedMs: number
}

export interface LeaseLostEvent {
  key: string
  kind: LeaseKind
  fence: number
  reason: LeaseLostReason
}

export interface HandoverEvent {
  /** The chat key. */
  key: string
  /** The flow or async conversation handed over. */
  name: string
  /** What happened: 'resumed' (from a checkpoint), 'notify', 'restart', 'custom', 'drop', 'changed'. */
  outcome: string
  /** The replica that had the conversation, when known. */
  from?: string | null
}

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

interface Waiter {
  wake: (grant?: PushedGrant) => void
}

/** How a pause ended: the poll interval, or a push (with the grant itself, when it was one). */
type PauseResult = { woken: boolean; grant?: PushedGrant }

let leaseIds = 0

const waitingId = (key: string, ticket: number) => `${key}\u0000${ticket}`

function releasedError(lease: HeldLease): LeaseLostError {
  return new LeaseLostError(lease.key, 'stopped', `lease on ${JSON.stringify(lease.key)} was released`)
}

/**
 * The coordination logic every replica runs: heartbeats, chat turns, renewals, local deadlines and
 * events. The shared state behind it is a CoordinationBackend (Redis via Lua scripts, or the
 * in-memory hub), so `RedisCoordinator` and `MemoryCoordinator` differ only in their backend.
 */
export class Coordinator extends EventEmitter implements LeadPort {
  readonly replicaId: string
  readonly incarnation: string
  readonly leaseMs: number
  readonly maxPollMs: number
  readonly minPollMs: number
  readonly turnWaitMs: number
  readonly renewMarginMs: number
  protected readonly backend: CoordinationBackend

  protected readonly held = new Map<number, HeldLease>()
  private readonly waiters = new Map<string, Waiter>()
  /** Wake-ups that came while no waiter slept for them (its poll was in flight). */
  private readonly earlyWakes = new Map<string, { grant: PushedGrant | undefined; at: number }>()
  /** Per chat: when an operator's revocation of one of our turns was last pushed to us. */
  private readonly revokeWakes = new Map<string, number>()
  /** Per chat: acquisitions whose first take-ticket is in flight (their ticket is not known yet). */
  private readonly enqueuing = new Map<string, number>()
  private readonly pendingReleases = new Set<PendingRelease>()
  private readonly inflight = new Set<Promise<unknown>>()
  private readonly meta: { host: string; pid: number; version: string }
  private readonly startedAtMs = Date.now()
  private readonly waitTimes = new LatencyWindow(1024)
  private stats = { turnsGranted: 0, waitingNow: 0, leasesLost: 0 }
  private startPromise: Promise<void> | null = null
  private renewTimer: NodeJS.Timeout | null = null
  private watchdogTimer: NodeJS.Timeout | null = null
  private renewing = false
  private unsubscribe: (() => Promise<void>) | null = null
  protected state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' | 'crashed' | 'evicted' = 'new'
  private warnedDuplicate = false
  private requestSeq = 0
  /** The server identity (run_ids) seen at start and at each renewal. */
  private serverId: string | null = null
  /** Waiting acquisitions (one per chat and ticket), for the heartbeat record. */
  private readonly waitingTickets = new Map<string, { key: string; ticket: number }>()
  private readonly elections = new Map<string, Election>()
  /** Per chat: resolves when this replica's latest acquisition has its ticket (arrival order). */
  private readonly ticketOrder = new Map<string, Promise<void>>()

  constructor(backend: CoordinationBackend, options: CoordinatorOptions = {}) {
    super()
    this.backend = backend
    this.replicaId = options.replicaId === undefined ? randomUUID() : validateId(options.replicaId, 'replicaId')
    this.incarnation = randomBytes(8).toString('hex')
    this.leaseMs = parseDuration(options.leaseMs ?? COORDINATOR_DEFAULTS.leaseMs, 'leaseMs')
    this.maxPollMs = parseDuration(options.maxPollMs ?? COORDINATOR_DEFAULTS.maxPollMs, 'maxPollMs')
    this.minPollMs = parseDuration(options.minPollMs ?? COORDINATOR_DEFAULTS.minPollMs, 'minPollMs')
    this.turnWaitMs = parseDuration(options.turnWaitMs ?? COORDINATOR_DEFAULTS.turnWaitMs, 'turnWaitMs')
    this.renewMarginMs = parseDuration(options.renewMarginMs ?? Math.round(this.leaseMs / 10), 'renewMarginMs')
    if (this.leaseMs < 300) throw new ConfigurationError('leaseMs must be at least 300 ms')
    if (this.renewMarginMs >= this.leaseMs / 2) throw new ConfigurationError('renewMarginMs must be below leaseMs / 2')
    if (this.minPollMs < 1 || this.maxPollMs < this.minPollMs) {
      throw new ConfigurationError('need 1 <= minPollMs <= maxPollMs')
    }
    this.meta = {
      host: options.meta?.host ?? hostname(),
      pid: options.meta?.pid ?? process.pid,
      version: options.meta?.version ?? PACKAGE_VERSION,
    }
  }

  /** Start heartbeating. Rejects with CoordinationUnavailableError when Redis does not answer. */
  start(): Promise<void> {
    if (!this.startPromise) this.startPromise = this.doStart()
    return this.startPromise
  }

  private async doStart(): Promise<void> {
    if (this.state !== 'new') throw new CoordinationUnavailableError('stopped', 'coordinator was stopped; create a new one')
    this.state = 'starting'
    try {
      const warnings = await this.backend.init()
      for (const w of warnings) this.emit('coordination:warning', w)
      this.unsubscribe = await this.backend.subscribe(this.incarnation, (kind, key, ticket, grant) => this.onWake(kind, key, ticket, grant))
      const [beat, id] = await Promise.all([
        this.backend.beat(this.replicaId, this.incarnation, this.leaseMs, this.beatRecord()),
        this.backend.serverIdentity(),
      ])
      this.serverId = id
      this.checkBeat(beat)
    } catch (err) {
      this.state = 'stopped'
      await this.unsubscribe?.().catch(() => {})
      await this.backend.close().catch(() => {})
      throw err
    }
    this.state = 'running'
    this.renewTimer = setInterval(() => void this.renewCycle(), Math.max(10, Math.floor(this.leaseMs / 3)))
    this.watchdogTimer = setInterval(() => this.checkDeadlines(), Math.max(5, Math.floor(this.renewMarginMs / 2)))
    this.renewTimer.unref?.()
    this.watchdogTimer.unref?.()
    this.logEvent({ type: 'replica-start' })
  }

  protected async ensureRunning(): Promise<void> {
    if (this.state === 'new' || this.state === 'starting') await this.start()
    if (this.state !== 'running') {
      throw new CoordinationUnavailableError('stopped', `coordinator is ${this.state}`)
    }
  }

  /** Take the turn of a chat: FIFO across replicas, one holder at a time. */
  async acquireTurn(key: string, options: AcquireTurnOptions = {}): Promise<Turn> {
    validateId(key, 'chat key')
    await this.ensureRunning()
    const waitMs = parseDuration(options.waitMs ?? this.turnWaitMs, 'waitMs')
    const started = monotonicNow()
    const giveUpAt = started + waitMs
    const signal = options.signal
    let ticket: number | null = null
    const requestId = `${this.incarnation}:${++this.requestSeq}`
    let backoff = this.minPollMs
    let lastError: unknown = null
    let queuedSentAt = started
    const waitingIds = new Set<string>()
    const take = (t: number, fence: number, previousHolder: Holder | null, deadline: number): Turn => {
      if (monotonicNow() >= deadline) {
        // Frozen between the grant and now: the lease may already be someone else's.
        throw new CoordinationUnavailableError('stale-grant', `grant of ${JSON.stringify(key)} arrived too late to use`, { key })
      }
      if (this.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${this.state}`, { key })
      const lease = this.track('chat', key, fence, t, deadline, requestId)
      ticket = null // ours now: release() gives it back
      const waitedMs = monotonicNow() - started
      this.waitTimes.add(waitedMs)
      this.stats.turnsGranted++
      return new TurnHandle(this, lease, previousHolder, waitedMs)
    }
    // Messages of this replica for one chat take their tickets in arrival order: each acquisition
    // sends its first take-ticket only once the one before it has its ticket (or gave up). Normally
    // that is one round trip apart; when Redis is unreachable it keeps retries from reordering them.
    const before = this.ticketOrder.get(key)
    let openGate!: () => void
    const gate = new Promise<void>((resolve) => (openGate = resolve))
    const myTurnInLine = (before ?? Promise.resolve()).then(() => gate)
    this.ticketOrder.set(key, myTurnInLine)
    void myTurnInLine.then(() => {
      if (this.ticketOrder.get(key) === myTurnInLine) this.ticketOrder.delete(key)
    })
    this.stats.waitingNow++
    const task = (async (): Promise<Turn> => {
      try {
        if (before) await this.waitInLine(before, giveUpAt, key, signal)
        for (;;) {
          if (signal?.aborted) throw new CoordinationUnavailableError('aborted', `wait for ${JSON.stringify(key)} aborted`, { key })
          if (this.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${this.state}`, { key })
          const sentAt = monotonicNow()
          let reply: TurnReply
          try {
            const first = ticket === null
            if (first) this.enqueuing.set(key, (this.enqueuing.get(key) ?? 0) + 1)
            try {
              reply = await this.backend.turnAcquire(key, this.replicaId, this.incarnation, this.leaseMs, ticket, requestId)
            } finally {
              if (first) {
                const n = (this.enqueuing.get(key) ?? 1) - 1
                if (n > 0) this.enqueuing.set(key, n)
                else this.enqueuing.delete(key)
              }
            }
          } catch (err) {
            if (!(err instanceof CoordinationUnavailableError) && !isConnectionError(err)) throw err
            lastError = err
            if (monotonicNow() >= giveUpAt) {
              throw new CoordinationUnavailableError('unreachable', `Redis unreachable while waiting for ${JSON.stringify(key)}`, {
                key,
                cause: err,
              })
            }
            await this.pause(key, ticket, Math.min(backoff, giveUpAt - monotonicNow()), started, signal)
            backoff = Math.min(backoff * 2, this.maxPollMs)
            continue
          }
          lastError = null
          openGate()
          if (reply.status === 'granted') {
            ticket = reply.ticket
            return take(reply.ticket, reply.fence, reply.previousHolder, sentAt + this.leaseMs - this.renewMarginMs)
          }
          if (reply.status === 'dropped') {
            ticket = null
            throw new CoordinationUnavailableError('dropped', `ticket for ${JSON.stringify(key)} was removed from the queue`, { key })
          }
          if (reply.status === 'expired') {
            ticket = null
            throw new CoordinationUnavailableError(
              'stale-grant',
              `turn of ${JSON.stringify(key)} was granted but expired before it was taken`,
              { key },
            )
          }
          ticket = reply.ticket
          // This poll was sent before any grant that comes after it: a safe start for a pushed lease.
          queuedSentAt = sentAt
          waitingIds.add(waitingId(key, ticket))
          this.waitingTickets.set(waitingId(key, ticket), { key, ticket })
          const left = giveUpAt - monotonicNow()
          if (left <= 0) {
            throw new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} within ${waitMs}ms`, { key })
          }
          // With the push wake-up working, polling is only the safety net: every maxPollMs. Without
          // it (subscriber reconnecting), poll with backoff from minPollMs.
          const interval = this.backend.pushReady() ? this.maxPollMs : backoff
          const woke = await this.pause(key, ticket, Math.min(interval, left), started, signal)
          if (woke.grant && (this.revokeWakes.get(key) ?? -Infinity) >= queuedSentAt) {
            // A revocation of a turn of ours on this chat came since: confirm with a poll instead.
            backoff = this.minPollMs
            continue
          }
          if (woke.grant) {
            // Granted by the releaser's script: take it without another round trip. Redis expires
            // it leaseMs after the grant, which came after our last 'queued' poll was sent.
            const lease = Math.min(this.leaseMs, woke.grant.leaseMs || this.leaseMs)
            const turn = take(ticket, woke.grant.fence, woke.grant.previousHolder, queuedSentAt + lease - this.renewMarginMs)
            // Granted with a shorter lease than ours (an operator's grant, a replica with a shorter
            // leaseMs): renew it now rather than at our next cycle.
            if (lease < this.leaseMs) void this.checkLeaseNow((turn as TurnHandle).lease)
            return turn
          }
          backoff = woke.woken ? this.minPollMs : Math.min(backoff * 2, this.maxPollMs)
        }
      } catch (err) {
        if (ticket !== null && this.state !== 'crashed') {
          // Withdraw the ticket (or pass on a turn granted in the meantime); if Redis is unreachable
          // the ticket simply expires unrefreshed within leaseMs.
          const t = ticket
          await this.backend.turnRelease(key, this.incarnation, t, this.leaseMs, requestId).catch(() => {})
        }
        if (err instanceof CoordinationUnavailableError && err.reason === 'unreachable' && lastError && !err.cause) {
          throw new CoordinationUnavailableError('unreachable', err.message, { key, cause: lastError })
        }
        throw err
      } finally {
        openGate()
        this.stats.waitingNow--
        for (const id of waitingIds) {
          this.earlyWakes.delete(id)
          this.waitingTickets.delete(id)
        }
      }
    })()
    this.inflight.add(task)
    task.then(
      () => this.inflight.delete(task),
      () => this.inflight.delete(task),
    )
    return task
  }

  /** Wait until the previous acquisition of this chat by this replica has its ticket (bounded by waitMs, abortable). */
  private async waitInLine(before: Promise<void>, giveUpAt: number, key: string, signal?: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const outcome = await Promise.race([
      before.then(() => 'ok' as const),
      new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(0, giveUpAt - monotonicNow())))),
      new Promise<'aborted'>((resolve) => {
        onAbort = () => resolve('aborted')
        if (signal?.aborted) onAbort()
        else signal?.addEventListener('abort', onAbort, { once: true })
      }),
    ])
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
    if (outcome === 'timeout') throw new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} in time`, { key })
    if (outcome === 'aborted') throw new CoordinationUnavailableError('aborted', `wait for ${JSON.stringify(key)} aborted`, { key })
  }

  /** Wait for a wake-up on (key, ticket), the poll interval, or an abort. Resolves true when woken. */
  private pause(key: string, ticket: number | null, ms: number, since: number, signal?: AbortSignal): Promise<PauseResult> {
    if (ticket === null) return sleep(ms, signal).then(() => ({ woken: false }))
    const id = waitingId(key, ticket)
    // A push that came while our last poll was in flight.
    const early = this.earlyWakes.get(id)
    if (early) {
      this.earlyWakes.delete(id)
      // Only a push received during this acquisition is about its ticket (ticket numbers repeat
      // after a chat's key expired; a late copy of an old grant must not be taken for a new one).
      if (early.at >= since) return Promise.resolve({ woken: true, grant: early.grant })
    }
    return new Promise<PauseResult>((resolve) => {
      let done = false
      const finish = (woken: boolean, grant?: PushedGrant) => {
        if (done) return
        done = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        if (this.waiters.get(id) === waiter) this.waiters.delete(id)
        resolve({ woken, grant })
      }
      const onAbort = () => finish(false)
      const waiter: Waiter = { wake: (grant) => finish(true, grant) }
      const timer = setTimeout(() => finish(false), Math.max(0, ms))
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiters.set(id, waiter)
    })
  }

  /** A push from the backend: a ticket of ours was granted, or a lead of ours was asked to yield. */
  protected onWake(kind: 'chat' | 'lead', key: string, ticket: number | null, grant?: PushedGrant): void {
    if (kind === 'chat' && ticket !== null) {
      const id = waitingId(key, ticket)
      const waiter = this.waiters.get(id)
      if (waiter) waiter.wake(grant)
      else if (this.waitingTickets.has(id) || (this.enqueuing.get(key) ?? 0) > 0) {
        // An acquisition of this chat is between polls (its request in flight): keep it for it.
        this.earlyWakes.set(id, { grant, at: monotonicNow() })
      }
      return
    }
    if (kind === 'chat') {
      // An operator revoked a turn of ours (`chat release`): learn it now, not at the next renewal —
      // also for a grant pushed to us that we have not taken yet (see the adoption in acquireTurn).
      this.revokeWakes.set(key, monotonicNow())
      for (const lease of this.held.values()) if (lease.kind === 'chat' && lease.key === key) void this.checkLeaseNow(lease)
      return
    }
    this.onLeadWake(key)
  }

  /** Hook for leadership (yield requests pushed to the leader, releases pushed to standbys). */
  protected onLeadWake(name: string): void {
    this.elections.get(name)?.wake()
    for (const lease of this.held.values()) {
      if (lease.kind === 'lead' && lease.key === name && !this.elections.has(name)) void this.checkLeaseNow(lease)
    }
  }

  /** Register a lease this coordinator now holds. */
  protected track(kind: LeaseKind, key: string, fence: number, ticket: number, deadline: number, requestId = ''): HeldLease {
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

  protected markLost(lease: HeldLease, reason: LeaseLostReason, quiet = false): void {
    if (lease.lost || lease.released) return
    const err = new LeaseLostError(lease.key, reason)
    lease.lost = err
    this.held.delete(lease.id)
    lease.controller?.abort(err)
    if (quiet) return
    this.stats.leasesLost++
    if (reason === 'expired' || reason === 'reset') {
      // Redis may still think we hold it (we could not renew, or it restarted with the data): give it
      // back as soon as Redis answers.
      this.pendingReleases.add({ lease, giveUpAt: monotonicNow() + this.leaseMs * 2 })
    }
    const event: LeaseLostEvent = { key: lease.key, kind: lease.kind, fence: lease.fence, reason }
    lease.onLost?.(err)
    this.emit('coordination:lease-lost', event)
    this.logEvent({ type: 'lease-lost', ...event })
  }

  /** Give a lease back. Network failures are retried by the watchdog every leaseMs / 3. */
  async releaseLease(lease: HeldLease): Promise<void> {
    if (lease.released) return
    const wasLost = lease.lost
    lease.released = true
    this.held.delete(lease.id)
    if (lease.controller && !lease.controller.signal.aborted) lease.controller.abort(releasedError(lease))
    if (wasLost && wasLost.reason !== 'expired' && wasLost.reason !== 'reset') return
    if (this.state === 'crashed') return
    try {
      await this.releaseInBackend(lease)
    } catch {
      this.pendingReleases.add({ lease, giveUpAt: monotonicNow() + this.leaseMs * 2 })
    }
  }

  protected async releaseInBackend(lease: HeldLease): Promise<void> {
    if (lease.kind === 'chat') {
      await this.backend.turnRelease(lease.key, this.incarnation, lease.ticket, this.leaseMs, lease.requestId)
    } else {
      await this.releaseLeadInBackend(lease)
    }
  }

  protected async releaseLeadInBackend(lease: HeldLease): Promise<void> {
    await this.backend.leadRelease(lease.key, this.incarnation, lease.fence, this.leaseMs)
    this.logEvent({ type: 'lead-released', name: lease.key, fence: lease.fence })
  }

  /**
   * Take a lead if nobody holds it: `{ name, fence, signal, assertHeld(), release() }`, or null.
   * Renewed with the replica's other leases and lost locally before Redis expiry, like turns.
   */
  async tryLead(name: string): Promise<Lead | null> {
    validateId(name, 'lead name')
    await this.ensureRunning()
    const { lead } = await this.attemptLead(name, false)
    return lead
  }

  /** Stand for a lead: lead when elected, yield when asked, stand again. One campaign per name. */
  campaign(name: string, options: CampaignOptions = {}): Election {
    validateId(name, 'lead name')
    if (this.elections.has(name)) throw new ConfigurationError(`already campaigning for ${JSON.stringify(name)}`)
    if (this.state !== 'new' && this.state !== 'starting' && this.state !== 'running') {
      throw new CoordinationUnavailableError('stopped', `coordinator is ${this.state}`)
    }
    const election = new Election(this, name, options)
    this.elections.set(name, election)
    void this.start()
      .then(() => election.begin())
      .catch((err: unknown) => this.reportError(err))
    return election
  }

  /** @internal */
  async withdrawCandidacy(name: string): Promise<void> {
    this.elections.delete(name)
    if (this.state === 'crashed') return
    await this.backend.leadRelease(name, this.incarnation, null, this.leaseMs)
  }

  /** @internal One attempt at a lead; a grant becomes a held lease. */
  async attemptLead(name: string, stand: boolean): Promise<{ lead: LeadHandle | null; reply: LeadReply | null }> {
    if (this.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${this.state}`)
    const sentAt = monotonicNow()
    const reply = await this.backend.leadAcquire(name, this.replicaId, this.incarnation, this.leaseMs, stand)
    if (reply.status !== 'granted') return { lead: null, reply }
    const deadline = sentAt + this.leaseMs - this.renewMarginMs
    if (monotonicNow() >= deadline || this.state !== 'running') {
      // Frozen between asking and hearing back (or stopped meanwhile): give it back, stand again.
      await this.backend.leadRelease(name, this.incarnation, reply.fence, this.leaseMs).catch(() => {})
      return { lead: null, reply: null }
    }
    const lease = this.track('lead', name, reply.fence, 0, deadline)
    this.emit('coordination:leader', { name, fence: reply.fence, previousHolder: reply.previousHolder })
    this.logEvent({ type: 'leader', name, fence: reply.fence, previous: reply.previousHolder?.replicaId ?? null })
    return { lead: new LeadHandle(this, lease, reply.previousHolder), reply }
  }

  /** @internal Renew one lease now (a push said something changed: e.g. a yield request). */
  async checkLeaseNow(lease: HeldLease): Promise<void> {
    if (lease.lost || lease.released || this.state !== 'running') return
    const sentAt = monotonicNow()
    const [r] = await this.backend
      .renew([{ kind: lease.kind, key: lease.key, fence: lease.fence }], this.incarnation, this.leaseMs)
      .catch(() => [undefined])
    this.applyRenewal(lease, r, sentAt)
  }

  private applyRenewal(lease: HeldLease, r: RenewReply | Error | undefined, sentAt: number): void {
    if (!r || r instanceof Error || lease.lost || lease.released) return
    if (r.ok) {
      lease.deadline = Math.max(lease.deadline, sentAt + this.leaseMs - this.renewMarginMs)
      if (r.yieldRequest) lease.onYieldRequest?.(r.yieldRequest)
    } else {
      this.markLost(lease, r.reason === 'expired' ? 'expired' : 'revoked')
    }
  }

  /**
   * The runtime took over a chat whose conversation came from another replica (a checkpoint resumed,
   * or a handover marker's fallback applied): emits `coordination:handover` and records it in the
   * shared event stream. Call it once per handover, never per message.
   */
  reportHandover(info: HandoverEvent): void {
    validateId(info.key, 'chat key')
    this.emit('coordination:handover', info)
    this.logEvent({ type: 'handover', ...info })
  }

  /** @internal */
  announceFollower(name: string, reason: FollowerReason): void {
    this.emit('coordination:follower', { name, reason })
    if (reason !== 'standby') this.logEvent({ type: 'follower', name, reason })
  }

  /** @internal */
  reportError(err: unknown): void {
    this.emit('coordination:warning', {
      code: 'callback-error',
      message: err instanceof Error ? err.message : String(err),
      error: err,
    })
  }

  private checkDeadlines(): void {
    const now = monotonicNow()
    for (const [id, w] of this.earlyWakes) if (now - w.at > this.leaseMs) this.earlyWakes.delete(id)
    for (const [key, at] of this.revokeWakes) if (now - at > this.leaseMs) this.revokeWakes.delete(key)
    for (const lease of [...this.held.values()]) {
      if (now >= lease.deadline) this.markLost(lease, 'expired')
    }
  }

  private async retryReleases(): Promise<void> {
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

  /** Heartbeat + renewal of every held lease, every leaseMs / 3, in one round trip per Redis node. */
  protected async renewCycle(): Promise<void> {
    if (this.renewing || this.state !== 'running') return
    this.renewing = true
    try {
      const sentAt = monotonicNow()
      const leases = [...this.held.values()]
      const [beat, replies] = await Promise.all([
        this.backend.beat(this.replicaId, this.incarnation, this.leaseMs, this.beatRecord()).catch((e: unknown) => e as Error),
        leases.length
          ? this.backend.renew(
              leases.map((l) => ({ kind: l.kind, key: l.key, fence: l.fence })),
              this.incarnation,
              this.leaseMs,
            )
          : Promise.resolve([] as Array<RenewReply | Error>),
      ])
      // Which server answered: asked AFTER the renewals, so a renewal that reached a restarted or
      // failed-over server (the client re-sends commands after a reconnect) is never trusted
      // unless the server is still the one we knew. Unknown (INFO failed) means: extend nothing.
      const id = await this.backend.serverIdentity(this.leaseMs).catch(() => undefined)
      if (id !== undefined && id !== null && this.serverId !== null && id !== this.serverId) {
        // Restarted or failed over: whatever the new server says about our leases, it may have lost
        // writes (a grant, a release). Fail closed: drop every lease; fences keep growing past it.
        this.serverId = id
        for (const lease of [...this.held.values()]) this.markLost(lease, 'reset')
        this.emit('coordination:warning', { code: 'server-changed', message: 'Redis restarted or failed over: every lease was dropped' })
        this.logEvent({ type: 'server-changed' })
      } else if (id) {
        this.serverId = id
      }
      if (!(beat instanceof Error)) this.checkBeat(beat)
      const trusted = id !== undefined
      leases.forEach((lease, i) => {
        const r = replies[i]
        if (!trusted && r && !(r instanceof Error) && r.ok) return // cannot tell which server renewed it
        this.applyRenewal(lease, r, sentAt)
      })
      if (this.pendingReleases.size) await this.retryReleases()
    } catch {
      // the watchdog drops what cannot be renewed in time
    } finally {
      this.renewing = false
    }
  }

  /** Renew now (tests, and callers that just woke up and want a fresh deadline). */
  async renewNow(): Promise<void> {
    while (this.renewing) await sleep(1)
    await this.renewCycle()
  }

  private checkBeat(beat: { evicted: boolean; otherIncarnation: string | null }): void {
    if (beat.evicted) {
      this.state = 'evicted'
      for (const lease of [...this.held.values()]) {
        this.markLost(lease, 'revoked')
        // The renewals sent with this heartbeat may have extended what the operator's eviction did
        // not reach (leases taken since our last beat): give them back (conditioned on our incarnation).
        void this.releaseInBackend(lease).catch(() => {})
      }
      this.wakeAll()
      this.clearTimers()
      this.emit('coordination:evicted', { replicaId: this.replicaId, incarnation: this.incarnation })
      return
    }
    if (beat.otherIncarnation && !this.warnedDuplicate) {
      this.warnedDuplicate = true
      this.emit('coordination:warning', {
        code: 'duplicate-replica-id',
        message: `another live process (incarnation ${beat.otherIncarnation}) uses replicaId ${JSON.stringify(this.replicaId)}`,
      })
    }
  }

  protected beatRecord(): BeatRecord {
    const held = [...this.held.values()]
    const cap = 100
    const waiting = [...this.waitingTickets.values()]
    return {
      info: { ...this.meta, startedAt: this.startedAtMs, leaseMs: this.leaseMs },
      stats: {
        turnsGranted: this.stats.turnsGranted,
        waitingNow: this.stats.waitingNow,
        waitP99Ms: this.waitTimes.quantile(0.99),
        leasesLost: this.stats.leasesLost,
        leadsHeld: held.filter((l) => l.kind === 'lead').length,
        turnsHeld: held.filter((l) => l.kind === 'chat').length,
      },
      leases: {
        held: held.slice(0, cap).map((l) => ({ kind: l.kind, key: l.key, fence: l.fence })),
        waiting: waiting.slice(0, cap).map(({ key, ticket }) => ({ key, ticket })),
        campaigns: [...this.elections.keys()].slice(0, cap),
        more: Math.max(0, held.length - cap) + Math.max(0, waiting.length - cap),
      },
    }
  }

  /** Counters as the heartbeat record carries them. */
  get metrics(): BeatRecord['stats'] {
    return this.beatRecord().stats
  }

  get running(): boolean {
    return this.state === 'running'
  }

  protected logEvent(event: Record<string, unknown>): void {
    if (this.state === 'crashed') return
    void this.backend.appendEvent({ replicaId: this.replicaId, incarnation: this.incarnation, ...event }).catch(() => {})
  }

  private wakeAll(): void {
    for (const w of [...this.waiters.values()]) w.wake()
  }

  private clearTimers(): void {
    if (this.renewTimer) clearInterval(this.renewTimer)
    if (this.watchdogTimer) clearInterval(this.watchdogTimer)
    this.renewTimer = this.watchdogTimer = null
  }

  /** Stop elections (they step down and stop standing) before the other leases go. */
  protected async stopLeadership(): Promise<void> {
    await Promise.allSettled([...this.elections.values()].map((e) => e.stop()))
  }

  /** Orderly stop: withdraws waiting tickets, releases everything held, removes the heartbeat. */
  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'crashed') return
    if (this.state === 'new') {
      this.state = 'stopped'
      await this.backend.close().catch(() => {})
      return
    }
    if (this.state === 'starting') await this.startPromise?.catch(() => {})
    if ((this.state as string) === 'stopped') return
    const wasEvicted = this.state === 'evicted'
    this.state = 'stopping'
    this.clearTimers()
    await this.stopLeadership().catch(() => {})
    this.wakeAll()
    await Promise.allSettled([...this.inflight])
    await Promise.allSettled([...this.held.values()].map((l) => this.releaseLease(l)))
    if (this.pendingReleases.size) await this.retryReleases()
    if (!wasEvicted) await this.backend.replicaStop(this.replicaId, this.incarnation).catch(() => {})
    this.logEvent({ type: 'replica-stop' })
    await this.unsubscribe?.().catch(() => {})
    this.state = 'stopped'
    await this.backend.close().catch(() => {})
  }

  /** Tests: stop every timer and connection WITHOUT releasing anything, as if the process died. */
  crash(): void {
    if (this.state === 'stopped' || this.state === 'crashed') return
    this.state = 'crashed'
    this.clearTimers()
    for (const e of this.elections.values()) e.kill()
    this.elections.clear()
    for (const lease of [...this.held.values()]) this.markLost(lease, 'stopped', true)
    this.pendingReleases.clear()
    this.wakeAll()
    this.backend.crash()
  }
}

class TurnHandle extends LeaseHandle implements Turn {
  readonly kind = 'chat' as const
  constructor(
    owner: Coordinator,
    lease: HeldLease,
    previousHolder: Holder | null,
    readonly waitedMs: number,
  ) {
    super(owner, lease, previousHolder)
  }
  get ticket(): number {
    return this.lease.ticket
  }
}
