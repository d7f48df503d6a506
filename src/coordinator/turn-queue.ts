/**
 * Chat turns, the waiting side (docs/turns.md): take a ticket in the chat's FIFO queue and wait for
 * its grant — an offer pushed by another replica's release (taken up with one poll) or a hand-off in
 * our own release's reply. Only the chat's keeper (our oldest acquisition there, arrival-line.ts)
 * polls on a timer: every sixth of a lease (keeping all our tickets there alive, catching an offer
 * whose push was lost) and when the holder's lease would lapse. Our later tickets sleep until a push
 * or until they become keeper. While the push channel is down the keeper polls with backoff up to
 * maxPollMs; when it drops or comes back, every keeper polls at once.
 */
import { monotonicNow } from '../clock.js'
import { timerDuration } from '../duration.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { isConnectionError } from '../errors/from-redis.js'
import type { Holder, PushedGrant, TurnReply } from '../wire/types.js'
import { ArrivalLines, keeperPollMs, type PollTiming, type Place } from './arrival-line.js'
import { leaseDeadline, type CoordinatorContext } from './context.js'
import type { LeaseTable } from './lease-table.js'
import { TurnHandle } from './turn-handle.js'
import { WaitBook } from './wait-book.js'
import { answeredBy, TurnWakes, waitingId } from './turn-wakes.js'
import type { Renewer } from './renewer.js'
import type { AcquireTurnOptions, Turn } from './types.js'

const NONE: ReadonlySet<string> = new Set()

export class TurnQueue {
  private readonly wakes = new TurnWakes()
  /** Per chat: this replica's acquisitions in arrival order (each takes a ticket after the ones before it). */
  private readonly lines = new ArrivalLines()
  private readonly inflight = new Set<Promise<unknown>>()
  /** What the waiting acquisitions look like from outside (the heartbeat record, metrics). */
  readonly book = new WaitBook()
  private requestSeq = 0
  private lastGapNudge = -Infinity

  constructor(
    private readonly core: CoordinatorContext,
    private readonly leases: LeaseTable,
    private readonly renewer: Renewer,
    /** The coordinator's default wait (turnWaitMs). */
    private readonly turnWaitMs: number,
    /** Most acquisitions waiting at once (maxWaiting): one more is refused with 'overloaded'. */
    private readonly maxWaiting: number,
  ) {
    // A grant our own release made to one of our tickets is routed as a wake-up carrying it would be.
    leases.onHanded = (key, grant) => this.onWake(key, grant.ticket, grant, true)
    // A release when no acquisition of ours waits in the chat deletes our w: field there.
    leases.othersWaiting = (key) => this.lines.size(key) > 0
  }

  /** Take the turn of a chat: FIFO across replicas, one holder at a time. The coordinator is running. */
  acquire(key: string, options: AcquireTurnOptions): Promise<Turn> {
    const core = this.core
    const waitMs = timerDuration(options.waitMs ?? this.turnWaitMs, 'waitMs')
    if (this.book.waiting >= this.maxWaiting) {
      core.stats.turnsShed++
      return Promise.reject(
        new CoordinationUnavailableError('overloaded', `${this.book.waiting} messages wait for a turn already (maxWaiting)`, { key }),
      )
    }
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
    let unanswered = false // the wait ended with Redis not answering (a poll unanswered, or failing, at waitMs)
    /** Tickets of this acquisition registered as waiting (made at its first 'queued'). */
    let waitingIds: Set<string> | null = null
    const take = (t: number, fence: number, previousHolder: Holder | null, sentAt: number, deadline: number): TurnHandle => {
      if (monotonicNow() >= deadline) {
        // Frozen between the grant and now: the lease may already be someone else's.
        throw new CoordinationUnavailableError('stale-grant', `grant of ${JSON.stringify(key)} arrived too late to use`, { key })
      }
      if (core.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${core.state}`, { key })
      const lease = this.leases.track('chat', key, fence, t, sentAt, deadline, requestId)
      ticket = null // ours now: release() gives it back
      const waitedMs = monotonicNow() - started
      this.book.granted(waitedMs)
      core.stats.turnsGranted++
      core.emit('coordination:turn-granted', { key, waitedMs })
      return new TurnHandle(this.leases, lease, previousHolder, waitedMs)
    }
    // Messages of this replica for one chat take their tickets in arrival order: each acquisition
    // takes one (first, or again after a failover lost it) only once every earlier one has its own
    // on the server known now, or gave up. Normally that is one round trip apart; when Redis is
    // unreachable or failed over, it keeps retries and re-queues from reordering them.
    const place = this.lines.join(
      key,
      () => {
        if (ticket !== null) this.onWake(key, ticket)
      },
      () => {
        if (ticket !== null) this.wakes.reschedule(key, ticket)
      },
    )
    const waitToken = {}
    this.book.began(waitToken, started)
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
            reply = await answeredBy(this.poll(key, ticket, requestId), giveUpAt, core.leaseMs, key, () => (unanswered = true))
            takeInDoubt = false
          } catch (err) {
            if (!(err instanceof CoordinationUnavailableError) && !isConnectionError(err)) throw err
            // The wait ended with a poll unanswered: a timeout, or Redis unreachable if it was failing already.
            if (monotonicNow() >= giveUpAt) unanswered = true
            if (err instanceof CoordinationUnavailableError && err.reason === 'timeout' && !lastError) throw err
            const before = lastError
            lastError = err
            if (unanswered) {
              // Redis answered, refusing writes (out of memory): say so, not "unreachable".
              const oom = [err, before].find((e) => e instanceof CoordinationUnavailableError && e.reason === 'redis-oom')
              if (oom)
                throw new CoordinationUnavailableError('redis-oom', `Redis out of memory while waiting for ${JSON.stringify(key)}`, {
                  key,
                  cause: oom,
                })
              throw new CoordinationUnavailableError('unreachable', `Redis unreachable while waiting for ${JSON.stringify(key)}`, {
                key,
                cause: err,
              })
            }
            // Pushes may be lost while Redis does not answer: every chat's keeper polls (and backs off) too.
            this.pushMayBeLost(place)
            await this.wakes.pause(key, ticket, Math.min(backoff, giveUpAt - monotonicNow()), started, signal)
            backoff = Math.min(backoff * 2, core.maxPollMs)
            continue
          }
          lastError = null
          // A take or poll answered 'queued' (or a poll 'granted') kept our tickets in this chat alive.
          if (reply.status === 'queued') this.lines.refreshed(key, sentAt, reply.holderLeftMs)
          else if (reply.status === 'granted' && !taking) this.lines.refreshed(key, sentAt, null)
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
            this.book.forget(waitingId(key, reply.ticket))
            await this.leases.withdrawTicket(key, reply.ticket, requestId)
            ticket = null
            continue
          }
          if (reply.status === 'granted') {
            ticket = reply.ticket
            return take(reply.ticket, reply.fence, reply.previousHolder, sentAt, leaseDeadline(core, sentAt))
          }
          if (reply.status === 'dropped') {
            // The server generation our ticket was last seen on: a change since means a failover may have lost it.
            const seenAt = place.seenAt
            ticket = null
            this.lines.mark(key, place, null)
            // Gone because the server changed under it (a failover that lost the last writes) or the
            // chat's keys went whole (flushed), not because an operator skipped it: queue again.
            await this.renewer.checkServer()
            if (this.renewer.generation !== seenAt || reply.stateLost) {
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
          if (monotonicNow() >= giveUpAt) {
            throw new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} within ${waitMs}ms`, { key })
          }
          const woke = await this.sleep(key, ticket, place, backoff, started, giveUpAt, signal)
          // Poll instead of taking a grant pushed to us when it is an offer from another replica's
          // script (the poll takes it up: Redis runs the lease from there, and an offer to a waiter that
          // died lapses and passes on); when an operator revoked a turn of ours on this chat since; or
          // when it names another acquisition of ours (Redis lost our ticket and gave its number again).
          // A handed grant was made after the release that carried it was sent (`sentAt`; a far later
          // bound than our last poll: only the keeper polls). Not known when: ask Redis.
          const grantedAfter = woke.grant?.sentAt ?? queuedSentAt
          const askRedis =
            woke.grant &&
            (!woke.handed ||
              woke.grant.sentAt === undefined ||
              this.wakes.revokedSince(key, grantedAfter) ||
              (!!woke.grant.requestId && woke.grant.requestId !== requestId))
          if (askRedis) {
            backoff = core.minPollMs
            continue
          }
          if (woke.grant) {
            // Handed over by our own release, made with our leaseMs: taken without another round trip.
            // Redis expires it leaseMs after the grant, which came after the release that carried it was sent.
            return take(ticket, woke.grant.fence, woke.grant.previousHolder, grantedAfter, leaseDeadline(core, grantedAfter))
          }
          backoff = woke.woken ? core.minPollMs : Math.min(backoff * 2, core.maxPollMs)
        }
      } catch (err) {
        // Withdraw the ticket (or pass on a turn granted in the meantime), retried until Redis answers —
        // also one whose take-ticket is unanswered: the client may send it again once it reconnects,
        // and Redis then queues a ticket nobody polls (found by its request id).
        if ((ticket !== null || takeInDoubt) && core.state !== 'crashed') {
          // Ours the only place left in this chat's line: the withdrawal deletes our w: field too.
          const withdrawn = this.leases.withdrawTicket(key, ticket, requestId, this.lines.size(key) <= 1)
          // Redis did not answer within waitMs: reject now; the withdrawal goes on (stop() waits for it).
          if (unanswered) this.track(withdrawn)
          else await withdrawn
        }
        if (err instanceof CoordinationUnavailableError && err.reason === 'unreachable' && lastError && !err.cause) {
          throw new CoordinationUnavailableError('unreachable', err.message, { key, cause: lastError })
        }
        throw err
      } finally {
        this.lines.leave(key, place)
        this.book.ended(waitToken)
        for (const id of waitingIds ?? NONE) {
          this.wakes.forget(id)
          this.book.forget(id)
        }
        // In flight until here (not a reaction on the task: a promise and two closures per turn).
        ended = true
        if (task) this.inflight.delete(task)
      }
    })()
    if (!ended) this.inflight.add(task)
    return task
  }

  /** Sleep until it is time to poll again (pollDelay), a push, or the wait's end; becoming keeper recomputes when. */
  private async sleep(key: string, ticket: number, place: Place, backoff: number, started: number, giveUpAt: number, signal?: AbortSignal) {
    for (;;) {
      const ms = Math.min(this.lines.pollDelay(key, place, this.pollTiming(backoff)), giveUpAt - monotonicNow())
      const woke = await this.wakes.pause(key, ticket, ms, started, signal)
      if (!woke.reschedule || monotonicNow() >= giveUpAt) return woke
    }
  }

  /** What pollDelay needs: is the push channel up, the backoff, how often to keep our tickets alive. */
  private pollTiming(backoff: number): PollTiming {
    const core = this.core
    return { pushReady: core.backend.pushReady(), backoff, keeperMs: keeperPollMs(core.leaseMs), minPollMs: core.minPollMs }
  }

  /** A call failed: pushes may be lost too. The other keepers poll now — at most once per keeper interval. */
  private pushMayBeLost(except: Place): void {
    const now = monotonicNow()
    if (now - this.lastGapNudge < keeperPollMs(this.core.leaseMs)) return
    this.lastGapNudge = now
    this.lines.nudgeKeepers(except)
  }

  /** The push channel may have lost pushes (it dropped, or came back): every chat's keeper polls now. */
  onPushGap(): void {
    this.lines.nudgeKeepers()
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
    if (first) this.book.taking(key, +1)
    try {
      const reply = await backend.turnAcquire(key, replicaId, incarnation, leaseMs, ticket, requestId)
      if (first && reply.status === 'queued') this.book.queued(key, reply.ticket)
      return reply
    } finally {
      if (first) this.book.taking(key, -1)
    }
  }

  /** Keep a background step (a withdrawal after the wait ended) in flight for settled(). */
  private track(p: Promise<unknown>): void {
    this.inflight.add(p)
    void p.finally(() => this.inflight.delete(p))
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

  /**
   * A push for a chat: a ticket of ours was offered the turn (or handed it by our own release:
   * `handed`; or dropped: poll now), or — without a ticket — an operator revoked a turn of ours.
   */
  onWake(key: string, ticket: number | null, grant?: PushedGrant, handed = false): void {
    if (ticket !== null) {
      // An acquisition of this chat between polls (its request in flight) gets it at its next pause.
      this.wakes.deliver(key, ticket, grant, handed, (id) => this.book.expects(key, id))
      return
    }
    // Learn it now, not at the next renewal — also for a grant handed to us that we have not taken
    // yet (see the revocation check in acquire()).
    this.wakes.noteRevoke(key)
    for (const lease of this.leases.on('chat', key)) void this.renewer.checkLeaseNow(lease)
  }

  /** Forget pushes older than a lease (the watchdog). */
  pruneWakes(now: number): void {
    this.wakes.prune(now, this.core.leaseMs)
  }

  /** Wake every sleeping acquisition (stopping, evicted, crashed): each sees the state and gives up. */
  wakeAll(): void {
    this.wakes.wakeAll()
  }

  /** Resolves when every acquisition in flight has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inflight])
  }
}
