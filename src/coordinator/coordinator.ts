/**
 * The coordinator every replica runs, as one object: its options, its life (start, stop, crash), and
 * the parts that do the work — the lease table (lease-table.ts), the renewal cycle (renewer.ts), the
 * chat turns (turn-queue.ts) and the leads (leadership.ts). The shared state behind them is a
 * CoordinationBackend (Redis via Lua scripts, or the in-memory hub), so `RedisCoordinator` and
 * `MemoryCoordinator` differ only in their backend.
 */
import { EventEmitter } from 'node:events'
import { hostname } from 'node:os'
import { randomBytes, randomUUID } from 'node:crypto'
import { monotonicNow } from '../clock.js'
import { timerDuration } from '../duration.js'
import { validateId } from '../keys.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { PACKAGE_VERSION } from '../version.js'
import { DEFAULTS, renewIntervalMs } from '../defaults.js'
import type { CoordinationBackend } from './backend.js'
import type { BeatRecord, PushedGrant } from '../wire/types.js'
import { heldSummary } from '../wire/heartbeat.js'
import type { CoordinatorContext, CoordinatorState } from './context.js'
import type { Election } from './election.js'
import { LeaseTable } from './lease-table.js'
import { Leadership } from './leadership.js'
import { Renewer } from './renewer.js'
import { TurnQueue } from './turn-queue.js'
import { replicaStats } from './wait-book.js'
import { registerIncarnation, unregisterIncarnation } from './incarnations.js'
import type { AcquireTurnOptions, CampaignOptions, CoordinatorEvents, CoordinatorOptions, HandoverEvent, Lead, Turn } from './types.js'

/** Resolves when `p` settles or after `ms`, whichever comes first (never rejects). */
function settledWithin(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))
  return Promise.race([p.then(noop, noop), late]).finally(() => clearTimeout(timer))
}

function noop(): void {}

/** The default replicaId: one random UUID per process, shared by every coordinator made without one. */
export const PROCESS_REPLICA_ID = randomUUID()

/**
 * The coordination logic every replica runs: heartbeats, chat turns, renewals, local deadlines and
 * events. Made by `RedisCoordinator` or `MemoryCoordinator`.
 */
export abstract class Coordinator extends EventEmitter<CoordinatorEvents> {
  readonly replicaId: string
  readonly incarnation: string
  readonly leaseMs: number
  readonly maxPollMs: number
  readonly minPollMs: number
  readonly turnWaitMs: number
  readonly maxWaiting: number
  readonly renewMarginMs: number

  #state: CoordinatorState = 'new'
  readonly #backend: CoordinationBackend
  readonly #core: CoordinatorContext
  readonly #leases: LeaseTable
  readonly #renewer: Renewer
  readonly #turns: TurnQueue
  readonly #leadership: Leadership
  readonly #meta: { host: string; pid: number; version: string }
  readonly #startedAtMs = Date.now()
  readonly #stats = { turnsGranted: 0, leasesLost: 0, turnsShed: 0 }
  #startPromise: Promise<void> | null = null
  #renewTimer: NodeJS.Timeout | null = null
  #watchdogTimer: NodeJS.Timeout | null = null
  #unsubscribe: (() => Promise<void>) | null = null
  #unwatchServer: (() => void) | null = null

  /** @internal By RedisCoordinator and MemoryCoordinator, with their backend. */
  constructor(backend: CoordinationBackend, options: CoordinatorOptions = {}) {
    super()
    this.#backend = backend
    this.replicaId = options.replicaId === undefined ? PROCESS_REPLICA_ID : validateId(options.replicaId, 'replicaId')
    this.incarnation = randomBytes(8).toString('hex')
    this.leaseMs = timerDuration(options.leaseMs ?? DEFAULTS.leaseMs, 'leaseMs')
    this.maxPollMs = timerDuration(options.maxPollMs ?? DEFAULTS.maxPollMs, 'maxPollMs')
    this.minPollMs = timerDuration(options.minPollMs ?? DEFAULTS.minPollMs, 'minPollMs')
    this.turnWaitMs = timerDuration(options.turnWaitMs ?? DEFAULTS.turnWaitMs, 'turnWaitMs')
    this.maxWaiting = options.maxWaiting ?? DEFAULTS.maxWaiting
    this.renewMarginMs = timerDuration(options.renewMarginMs ?? Math.round(this.leaseMs / 10), 'renewMarginMs')
    if (this.leaseMs < 300) throw new ConfigurationError('leaseMs must be at least 300 ms')
    if (this.renewMarginMs >= this.leaseMs / 2) throw new ConfigurationError('renewMarginMs must be below leaseMs / 2')
    if (this.minPollMs < 1 || this.maxPollMs < this.minPollMs) throw new ConfigurationError('need 1 <= minPollMs <= maxPollMs')
    if (!(this.maxWaiting >= 1)) throw new ConfigurationError('maxWaiting must be at least 1')
    this.#meta = {
      host: options.meta?.host ?? hostname(),
      pid: options.meta?.pid ?? process.pid,
      version: options.meta?.version ?? PACKAGE_VERSION,
    }
    const state = () => this.#state
    this.#core = {
      backend,
      replicaId: this.replicaId,
      incarnation: this.incarnation,
      leaseMs: this.leaseMs,
      minPollMs: this.minPollMs,
      maxPollMs: this.maxPollMs,
      renewMarginMs: this.renewMarginMs,
      get state() {
        return state()
      },
      stats: this.#stats,
      // EventEmitter<T>'s emit() takes a conditional tuple TypeScript cannot match to a generic E.
      emit: (event, ...payload) => void (this.emit as (e: string, ...p: unknown[]) => boolean)(event, ...payload),
      logEvent: (event) => this.#logEvent(event),
      reportError: (err) =>
        void this.emit('coordination:warning', {
          code: 'callback-error',
          message: err instanceof Error ? err.message : String(err),
          error: err,
        }),
    }
    this.#leases = new LeaseTable(this.#core)
    this.#renewer = new Renewer(this.#core, this.#leases, { record: () => this.#beatRecord(), onEvicted: () => this.#evicted() })
    this.#turns = new TurnQueue(this.#core, this.#leases, this.#renewer, this.turnWaitMs, this.maxWaiting)
    this.#leadership = new Leadership(this.#core, this.#leases, this.#renewer)
    registerIncarnation(this.incarnation, this)
  }

  /**
   * @internal A store refused a checkpoint write of this incarnation on chat `key` with turn `fence`
   * (null: unfenced) as superseded: that turn is lost here too (its signal aborts, assertHeld()
   * throws, `coordination:lease-lost` with reason 'superseded' is emitted once).
   */
  supersedeTurn(key: string, fence: number | null): void {
    this.#leases.supersede(key, fence)
  }

  /** @internal Was our turn on chat `key` with `fence` declared lost here? A store refuses a fenced write under it. */
  turnLost(key: string, fence: number): boolean {
    return this.#leases.fences.turnLost(key, fence)
  }

  /** @internal `store.leases()` was granted lead `name` at `fence` under our incarnation: tryLead leaves it alone. */
  noteSchedulerLease(name: string, fence: number): void {
    this.#leases.fences.noteSchedulerLead(name, fence)
  }

  /** @internal May `store.leases()` take up lead `name`, ours at `fence` in Redis, as a grant whose reply was lost? */
  leaseAdoptable(name: string, fence: number): boolean {
    return (
      !this.#leases.on('lead', name).length &&
      !this.#leases.fences.leadOnceHeld(name, fence) &&
      this.#leases.fences.schedulerLead(name) !== fence
    )
  }

  /** Start heartbeating. Rejects with CoordinationUnavailableError when Redis does not answer. */
  start(): Promise<void> {
    if (!this.#startPromise) this.#startPromise = this.#doStart()
    return this.#startPromise
  }

  async #doStart(): Promise<void> {
    if (this.#state !== 'new') throw new CoordinationUnavailableError('stopped', 'coordinator was stopped; create a new one')
    this.#state = 'starting'
    try {
      const warnings = await this.#backend.init()
      for (const w of warnings) this.emit('coordination:warning', w)
      this.#unsubscribe = await this.#backend.subscribe(
        this.incarnation,
        (kind, key, ticket, grant) => this.#onWake(kind, key, ticket, grant),
        () => this.#turns.onPushGap(),
      )
      await this.#renewer.begin()
      // A reconnect or a Cluster's new masters: ask the server's identity at once, so a lease a new
      // server does not know is dropped about a round trip after the switch, not at the next renewal.
      this.#unwatchServer =
        this.#backend.watchServer?.(() => {
          if (this.#state === 'running') void this.#renewer.checkServer(this.leaseMs).catch(() => {})
        }) ?? null
    } catch (err) {
      this.#state = 'stopped'
      await this.#unsubscribe?.().catch(() => {})
      const named = await this.#backend.explainRefusal?.(err).catch(() => err)
      await this.#backend.close().catch(() => {})
      throw named ?? err
    }
    this.#state = 'running'
    this.#renewTimer = setInterval(() => void this.#renewer.cycle(), renewIntervalMs(this.leaseMs))
    this.#watchdogTimer = setInterval(() => this.#watchdog(), Math.max(5, Math.floor(this.renewMarginMs / 2)))
    this.#renewTimer.unref?.()
    this.#watchdogTimer.unref?.()
    this.#logEvent({ type: 'replica-start' })
  }

  async #ensureRunning(): Promise<void> {
    if (this.#state === 'new' || this.#state === 'starting') await this.start()
    if (this.#state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${this.#state}`)
  }

  /** Take the turn of a chat: FIFO across replicas, one holder at a time. */
  acquireTurn(key: string, options: AcquireTurnOptions = {}): Promise<Turn> {
    // Not an async function: that would add its own promise and ticks to every turn.
    try {
      validateId(key, 'chat key')
      if (this.#state === 'running') return this.#turns.acquire(key, options)
    } catch (err) {
      return Promise.reject(err as Error)
    }
    return this.#ensureRunning().then(() => this.#turns.acquire(key, options))
  }

  /**
   * Take a lead if nobody holds it: `{ name, fence, signal, assertHeld(), release() }`, or null.
   * Renewed with the replica's other leases and lost locally before Redis expiry, like turns.
   */
  async tryLead(name: string): Promise<Lead | null> {
    validateId(name, 'lead name')
    await this.#ensureRunning()
    const { lead } = await this.#leadership.attemptLead(name, false, true)
    return lead
  }

  /** Stand for a lead: lead when elected, yield when asked, stand again. One campaign per name. */
  campaign(name: string, options: CampaignOptions = {}): Election {
    validateId(name, 'lead name')
    this.#leadership.assertNotCampaigning(name)
    if (this.#state !== 'new' && this.#state !== 'starting' && this.#state !== 'running') {
      throw new CoordinationUnavailableError('stopped', `coordinator is ${this.#state}`)
    }
    return this.#leadership.campaign(name, options, () => this.start())
  }

  /**
   * The runtime took over a chat whose conversation came from another replica (a checkpoint resumed,
   * or a handover marker's fallback applied): emits `coordination:handover` and records it in the
   * shared event stream. Call it once per handover, never per message.
   */
  reportHandover(info: HandoverEvent): void {
    validateId(info.key, 'chat key')
    this.emit('coordination:handover', info)
    this.#logEvent({ type: 'handover', ...info })
  }

  /** Renew now (tests, and callers that just woke up and want a fresh deadline). */
  renewNow(): Promise<void> {
    return this.#renewer.now()
  }

  /** Counters as the heartbeat record carries them. */
  get metrics(): BeatRecord['stats'] {
    return this.#stats_()
  }

  get running(): boolean {
    return this.#state === 'running'
  }

  /** Stopped or crashed: it cannot start again (make a new one). */
  get ended(): boolean {
    return this.#state === 'stopped' || this.#state === 'crashed'
  }

  /**
   * Orderly stop: withdraws waiting tickets, releases everything held, removes the heartbeat. Bounded:
   * when Redis does not answer (every server or every sentinel gone), it gives up giving back after
   * about 2 × commandTimeoutMs (what it held then expires in Redis a lease later) and closes anyway.
   */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'crashed') return
    if (this.#state === 'new') {
      this.#state = 'stopped'
      unregisterIncarnation(this.incarnation)
      await this.#backend.close().catch(() => {})
      return
    }
    if (this.#state === 'starting') await this.#startPromise?.catch(() => {})
    if ((this.#state as string) === 'stopped') return
    const wasEvicted = this.#state === 'evicted'
    this.#state = 'stopping'
    this.#clearTimers()
    const giveBack = async () => {
      await this.#leadership.stopAll().catch(() => {})
      this.#turns.wakeAll()
      await this.#turns.settled()
      // Every release at once (one write), with the ones that failed before.
      await Promise.allSettled([...this.#leases.all().map((l) => this.#leases.releaseLease(l)), this.#leases.retryReleases()])
      if (!wasEvicted) await this.#backend.replicaStop(this.replicaId, this.incarnation).catch(() => {})
    }
    // Past the budget, closing the connections fails whatever is still under way at once.
    await settledWithin(giveBack(), this.#backend.stopBudgetMs)
    this.#logEvent({ type: 'replica-stop' })
    this.#state = 'stopped'
    unregisterIncarnation(this.incarnation)
    await Promise.allSettled([this.#unsubscribe?.(), this.#backend.close()])
  }

  /** Tests: stop every timer and connection WITHOUT releasing anything, as if the process died. */
  crash(): void {
    if (this.#state === 'stopped' || this.#state === 'crashed') return
    this.#state = 'crashed'
    unregisterIncarnation(this.incarnation)
    this.#clearTimers()
    this.#leadership.killAll()
    this.#leases.dropAll()
    this.#turns.wakeAll()
    this.#backend.crash()
  }

  /** A push from the backend: a ticket of ours was granted, a turn revoked, or a lead changed. */
  #onWake(kind: 'chat' | 'lead', key: string, ticket: number | null, grant?: PushedGrant): void {
    if (kind === 'chat') this.#turns.onWake(key, ticket, grant)
    else this.#leadership.onWake(key)
  }

  /** Drop what is overdue, whether or not a timer ran late (the local deadline is the truth). */
  #watchdog(): void {
    const now = monotonicNow()
    this.#turns.pruneWakes(now)
    this.#leases.expireOverdue(now)
  }

  /** An operator evicted this incarnation: everything goes, and the renewal cycle stops. */
  #evicted(): void {
    this.#state = 'evicted'
    for (const lease of this.#leases.all()) {
      this.#leases.markLost(lease, 'revoked')
      // The renewals sent with this heartbeat may have extended what the operator's eviction did
      // not reach (leases taken since our last beat): give them back (conditioned on our incarnation).
      void this.#leases.releaseInBackend(lease).catch(() => {})
    }
    this.#turns.wakeAll()
    this.#clearTimers()
    this.emit('coordination:evicted', { replicaId: this.replicaId, incarnation: this.incarnation })
  }

  #beatRecord(): BeatRecord {
    const info = { ...this.#meta, startedAt: this.#startedAtMs, leaseMs: this.leaseMs, renewMs: renewIntervalMs(this.leaseMs) }
    return { info, stats: this.#stats_(), leases: heldSummary(this.#leases.all(), this.#turns.book.list(), this.#leadership.names()) }
  }

  #stats_(): BeatRecord['stats'] {
    return replicaStats(this.#stats, this.#turns.book, this.#leases.all())
  }

  #logEvent(event: Record<string, unknown>): void {
    if (this.#state === 'crashed') return
    void this.#backend.appendEvent({ replicaId: this.replicaId, incarnation: this.incarnation, ...event }).catch(() => {})
  }

  #clearTimers(): void {
    this.#unwatchServer?.()
    this.#unwatchServer = null
    if (this.#renewTimer) clearInterval(this.#renewTimer)
    if (this.#watchdogTimer) clearInterval(this.#watchdogTimer)
    this.#renewTimer = this.#watchdogTimer = null
  }
}
