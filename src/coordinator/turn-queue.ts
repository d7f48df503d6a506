/**
 * Chat turns, the waiting side: take a ticket in the chat's FIFO queue (lua/turn-acquire-2.lua),
 * poll with it until it is granted, and take a grant pushed by the releaser's script
 * (grant_next in lua/includes/turn.lua) without another round trip. Polling is the safety net; the
 * push makes a handoff one hop. The maps below route each push to the acquisition it is for.
 */
import { monotonicNow, sleep } from '../clock.js'
import { parseDuration } from '../duration.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { isConnectionError } from '../errors/from-redis.js'
import type { Holder, PushedGrant, TurnReply } from '../wire/types.js'
import { ArrivalLines, type Place } from './arrival-line.js'
import { leaseDeadline, type CoordinatorContext } from './context.js'
import { LatencyWindow } from './latency-window.js'
import { LeaseHandle } from './lease-handle.js'
import type { HeldLease, LeaseTable } from './lease-table.js'
import type { Renewer } from './renewer.js'
import type { AcquireTurnOptions, Turn } from './types.js'

interface Waiter {
  wake: (grant?: PushedGrant) => void
}

/** How a pause ended: the poll interval, or a push (with the grant itself, when it was one). */
type PauseResult = { woken: boolean; grant?: PushedGrant }

const waitingId = (key: string, ticket: number) => `${key}\u0000${ticket}`
const NONE: ReadonlySet<string> = new Set()

class TurnHandle extends LeaseHandle implements Turn {
  readonly kind = 'chat' as const
  constructor(
    table: LeaseTable,
    lease: HeldLease,
    previousHolder: Holder | null,
    readonly waitedMs: number,
  ) {
    super(table, lease, previousHolder)
  }
  get ticket(): number {
    return this.lease.ticket
  }
}

export class TurnQueue {
  /** Acquisitions sleeping between polls, by (chat, ticket). */
  private readonly waiters = new Map<string, Waiter>()
  /** Wake-ups that came while no waiter slept for them (its poll was in flight). */
  private readonly earlyWakes = new Map<string, { grant: PushedGrant | undefined; at: number }>()
  /** Per chat: when an operator's revocation of one of our turns was last pushed to us. */
  private readonly revokeWakes = new Map<string, number>()
  /** Per chat: acquisitions whose first take-ticket is in flight (their ticket is not known yet). */
  private readonly enqueuing = new Map<string, number>()
  /** Waiting acquisitions (one per chat and ticket), for the heartbeat record. */
  private readonly waitingTickets = new Map<string, { key: string; ticket: number }>()
  /** Per chat: this replica's acquisitions in arrival order (each takes a ticket after the ones before it). */
  private readonly lines = new ArrivalLines()
  private readonly inflight = new Set<Promise<unknown>>()
  private readonly waitTimes = new LatencyWindow(1024)
  private requestSeq = 0

  constructor(
    private readonly core: CoordinatorContext,
    private readonly leases: LeaseTable,
    private readonly renewer: Renewer,
    /** The coordinator's default wait (turnWaitMs). */
    private readonly turnWaitMs: number,
  ) {
    // A grant our own release made to one of our tickets is routed as a wake-up carrying it would be.
    leases.onHanded = (key, grant) => this.onWake(key, grant.ticket, grant)
  }

  /** Take the turn of a chat: FIFO across replicas, one holder at a time. The coordinator is running. */
  acquire(key: string, options: AcquireTurnOptions): Promise<Turn> {
    const core = this.core
    const waitMs = parseDuration(options.waitMs ?? this.turnWaitMs, 'waitMs')
    const started = monotonicNow()
    const giveUpAt = started + waitMs
    const signal = options.signal
    let ticket: number | null = null
    const requestId = String(++this.requestSeq) // unique within this incarnation (the scripts add it where needed)
    let backoff = core.minPollMs
    let lastError: unknown = null
    let queuedSentAt = started
    /** A take-ticket was sent and not answered: Redis may hold a ticket of ours we do not know (yet). */
    let takeInDoubt = false
    /** Tickets of this acquisition registered as waiting (made at its first 'queued'). */
    let waitingIds: Set<string> | null = null
    const take = (t: number, fence: number, previousHolder: Holder | null, deadline: number): TurnHandle => {
      if (monotonicNow() >= deadline) {
        // Frozen between the grant and now: the lease may already be someone else's.
        throw new CoordinationUnavailableError('stale-grant', `grant of ${JSON.stringify(key)} arrived too late to use`, { key })
      }
      if (core.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${core.state}`, { key })
      const lease = this.leases.track('chat', key, fence, t, deadline, requestId)
      ticket = null // ours now: release() gives it back
      const waitedMs = monotonicNow() - started
      this.waitTimes.add(waitedMs)
      core.stats.turnsGranted++
      core.emit('coordination:turn-granted', { key, waitedMs })
      return new TurnHandle(this.leases, lease, previousHolder, waitedMs)
    }
    // Messages of this replica for one chat take their tickets in arrival order: each acquisition
    // takes one (first, or again after a failover lost it) only once every earlier one has its own
    // on the server known now, or gave up. Normally that is one round trip apart; when Redis is
    // unreachable or failed over, it keeps retries and re-queues from reordering them.
    const place = this.lines.join(key, () => {
      if (ticket !== null) this.onWake(key, ticket)
    })
    core.stats.waitingNow++
    let task: Promise<Turn> | null = null
    let ended = false // ended before task was assigned: it never waited (nothing to settle)
    task = (async (): Promise<Turn> => {
      try {
        // A ticket of ours left here by a withdrawal that failed (or the turn granted to it) would
        // hold this chat until it lapsed, and this replica then be presumed dead in it: give it back first.
        if (this.leases.pending) await this.leases.retryReleases(key)
        for (;;) {
          if (signal?.aborted) throw new CoordinationUnavailableError('aborted', `wait for ${JSON.stringify(key)} aborted`, { key })
          if (core.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${core.state}`, { key })
          const taking = ticket === null
          if (taking && !this.lines.clear(key, place, this.renewer.generation)) {
            await this.lines.wait(key, place, () => this.renewer.generation, giveUpAt, core.maxPollMs, signal)
          }
          const sentAt = monotonicNow()
          const generationAtSend = this.renewer.generation
          let reply: TurnReply
          try {
            if (taking) takeInDoubt = true
            reply = await this.poll(key, ticket, requestId)
            takeInDoubt = false
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
            backoff = Math.min(backoff * 2, core.maxPollMs)
            continue
          }
          lastError = null
          // A ticket taken is registered as waiting by poll(); forgotten when this acquisition ends.
          if (taking && reply.status === 'queued') (waitingIds ??= new Set()).add(waitingId(key, reply.ticket))
          const mayHaveMoved = this.renewer.generation !== generationAtSend || this.renewer.checkUnderWay
          if (
            taking &&
            mayHaveMoved &&
            (reply.status === 'granted' || reply.status === 'queued') &&
            (await this.tookAheadOfEarlier(key, place, generationAtSend))
          ) {
            // The take reached a server that lost earlier messages' tickets, before they queued again:
            // give this ticket (or turn) back and queue behind them.
            this.waitingTickets.delete(waitingId(key, reply.ticket))
            await this.leases.withdrawTicket(key, reply.ticket, requestId)
            ticket = null
            continue
          }
          if (reply.status === 'granted') {
            ticket = reply.ticket
            return take(reply.ticket, reply.fence, reply.previousHolder, leaseDeadline(core, sentAt))
          }
          if (reply.status === 'dropped') {
            // The server generation our ticket was last seen on: a change since means a failover may have lost it.
            const seenAt = place.seenAt
            ticket = null
            this.lines.mark(key, place, null)
            // Gone because the server changed under it (a failover that lost the last writes), not
            // because an operator skipped it: queue again, the wait goes on (bounded by waitMs).
            await this.renewer.checkServer()
            if (this.renewer.generation !== seenAt) {
              backoff = core.minPollMs
              continue
            }
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
          // Seen in the queue on the server of that generation (survived any failover before it).
          ticket = reply.ticket
          this.lines.mark(key, place, generationAtSend)
          // This poll was sent before any grant that comes after it: a safe start for a pushed lease.
          queuedSentAt = sentAt
          const left = giveUpAt - monotonicNow()
          if (left <= 0) {
            throw new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} within ${waitMs}ms`, { key })
          }
          // With the push wake-up working, polling is only the safety net: every maxPollMs. Without
          // it (subscriber reconnecting), poll with backoff from minPollMs.
          const interval = core.backend.pushReady() ? core.maxPollMs : backoff
          const woke = await this.pause(key, ticket, Math.min(interval, left), started, signal)
          if (woke.grant && (this.revokeWakes.get(key) ?? -Infinity) >= queuedSentAt) {
            // A revocation of a turn of ours on this chat came since: confirm with a poll instead.
            backoff = core.minPollMs
            continue
          }
          if (woke.grant?.requestId && woke.grant.requestId !== requestId) {
            // Another acquisition of ours was given the same ticket number (Redis lost ours and gave
            // the number again): the grant is its, not ours. Ask Redis what became of our ticket.
            backoff = core.minPollMs
            continue
          }
          if (woke.grant) {
            // Granted by the releaser's script: take it without another round trip. Redis expires
            // it leaseMs after the grant, which came after our last 'queued' poll was sent.
            const lease = Math.min(core.leaseMs, woke.grant.leaseMs || core.leaseMs)
            const turn = take(ticket, woke.grant.fence, woke.grant.previousHolder, leaseDeadline(core, queuedSentAt, lease))
            // Granted with a shorter lease than ours (an operator's grant, a replica with a shorter
            // leaseMs): renew it now rather than at our next cycle.
            if (lease < core.leaseMs) void this.renewer.checkLeaseNow(turn.lease)
            return turn
          }
          backoff = woke.woken ? core.minPollMs : Math.min(backoff * 2, core.maxPollMs)
        }
      } catch (err) {
        // Withdraw the ticket (or pass on a turn granted in the meantime), retried until Redis answers —
        // also one whose take-ticket is unanswered: the client may send it again once it reconnects,
        // and Redis then queues a ticket nobody polls (found by its request id).
        if ((ticket !== null || takeInDoubt) && core.state !== 'crashed') await this.leases.withdrawTicket(key, ticket, requestId)
        if (err instanceof CoordinationUnavailableError && err.reason === 'unreachable' && lastError && !err.cause) {
          throw new CoordinationUnavailableError('unreachable', err.message, { key, cause: lastError })
        }
        throw err
      } finally {
        this.lines.leave(key, place)
        core.stats.waitingNow--
        for (const id of waitingIds ?? NONE) {
          this.earlyWakes.delete(id)
          this.waitingTickets.delete(id)
        }
        // In flight until here (not a reaction on the task: a promise and two closures per turn).
        ended = true
        if (task) this.inflight.delete(task)
      }
    })()
    if (!ended) this.inflight.add(task)
    return task
  }

  /**
   * Take a ticket (ticket null) or poll with one; while the first take is in flight, a push for it is
   * kept. A ticket taken is registered as waiting in the same step that ends "in flight": a grant our
   * own release hands to it (its reply can be processed between the two) is never dropped for want of
   * a waiter.
   */
  private async poll(key: string, ticket: number | null, requestId: string): Promise<TurnReply> {
    const { backend, replicaId, incarnation, leaseMs } = this.core
    const first = ticket === null
    if (first) this.enqueuing.set(key, (this.enqueuing.get(key) ?? 0) + 1)
    try {
      const reply = await backend.turnAcquire(key, replicaId, incarnation, leaseMs, ticket, requestId)
      if (first && reply.status === 'queued') this.waitingTickets.set(waitingId(key, reply.ticket), { key, ticket: reply.ticket })
      return reply
    } finally {
      if (first) {
        const n = (this.enqueuing.get(key) ?? 1) - 1
        if (n > 0) this.enqueuing.set(key, n)
        else this.enqueuing.delete(key)
      }
    }
  }

  /**
   * After a take: did it land on a server that changed since it was sent (a failover, found by the
   * identity check a reconnect starts) while an earlier acquisition of ours has no ticket there yet?
   * Then it may stand ahead of that one's ticket, which the failover lost.
   */
  private async tookAheadOfEarlier(key: string, place: Place, generationAtSend: number): Promise<boolean> {
    await this.renewer.checked()
    if (this.renewer.generation === generationAtSend) return false
    return this.lines.blockers(key, place, this.renewer.generation).length > 0
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

  /**
   * A push for a chat: a ticket of ours was granted (or dropped: poll now), or — without a ticket —
   * an operator revoked a turn of ours (`chat release`).
   */
  onWake(key: string, ticket: number | null, grant?: PushedGrant): void {
    if (ticket !== null) {
      const id = waitingId(key, ticket)
      const waiter = this.waiters.get(id)
      if (waiter) waiter.wake(grant)
      else if (this.waitingTickets.has(id) || (this.enqueuing.get(key) ?? 0) > 0) {
        // An acquisition of this chat is between polls (its request in flight): keep it for it.
        this.earlyWakes.set(id, { grant, at: monotonicNow() })
      }
      return
    }
    // Learn it now, not at the next renewal — also for a grant pushed to us that we have not taken
    // yet (see the revocation check in acquire()).
    this.revokeWakes.set(key, monotonicNow())
    for (const lease of this.leases.on('chat', key)) void this.renewer.checkLeaseNow(lease)
  }

  /** Forget pushes older than a lease (the watchdog). */
  pruneWakes(now: number): void {
    for (const [id, w] of this.earlyWakes) if (now - w.at > this.core.leaseMs) this.earlyWakes.delete(id)
    for (const [key, at] of this.revokeWakes) if (now - at > this.core.leaseMs) this.revokeWakes.delete(key)
  }

  /** Wake every sleeping acquisition (stopping, evicted, crashed): each sees the state and gives up. */
  wakeAll(): void {
    for (const w of [...this.waiters.values()]) w.wake()
  }

  /** Resolves when every acquisition in flight has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inflight])
  }

  /** What this replica waits for, for the heartbeat record. */
  waiting(): Array<{ key: string; ticket: number }> {
    return [...this.waitingTickets.values()]
  }

  /** The 99th percentile of recent waits (ms), for the heartbeat record. */
  waitP99(): number | null {
    return this.waitTimes.quantile(0.99)
  }
}
