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
import type { PushedGrant, TurnReply } from '../wire/types.js'
import { ArrivalLines, keeperPollMs, type PollTiming, type Place } from './arrival-line.js'
import type { CoordinatorContext } from './context.js'
import type { LeaseTable } from './lease-table.js'
import { WaitBook } from './wait-book.js'
import { TurnWakes } from './turn-wakes.js'
import { Acquisition } from './acquisition.js'
import type { Renewer } from './renewer.js'
import type { AcquireTurnOptions, Turn } from './types.js'

export class TurnQueue {
  /** @internal Pushes and sleeping waits (acquisition.ts). */
  readonly wakes = new TurnWakes()
  /** @internal Per chat: this replica's acquisitions in arrival order (each takes a ticket after the ones before it). */
  readonly lines = new ArrivalLines()
  /** Background steps in flight (withdrawals after a wait ended): settled() waits for them. */
  private readonly inflight = new Set<Promise<unknown>>()
  /** Acquisitions begun and not ended, and who waits for none to be left (settled()). */
  private active = 0
  private readonly idle: Array<() => void> = []
  /** What the waiting acquisitions look like from outside (the heartbeat record, metrics). */
  readonly book = new WaitBook()
  private requestSeq = 0
  private lastGapNudge = -Infinity

  constructor(
    /** @internal (the context, the lease table and the renewer are the acquisitions' too) */
    readonly core: CoordinatorContext,
    readonly leases: LeaseTable,
    readonly renewer: Renewer,
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

  /**
   * Take the turn of a chat: FIFO across replicas, one holder at a time. The coordinator is running.
   * The steps of one acquisition are in acquisition.ts; here: the shedding bound, and the wait's
   * book-keeping (the heartbeat's count of waiting messages, settled()) — without a wrapper around
   * run(): a promise and an async frame fewer per waiting message.
   */
  acquire(key: string, options: AcquireTurnOptions): Promise<Turn> {
    const waitMs = timerDuration(options.waitMs ?? this.turnWaitMs, 'waitMs')
    if (this.book.waiting >= this.maxWaiting) {
      this.core.stats.turnsShed++
      return Promise.reject(
        new CoordinationUnavailableError('overloaded', `${this.book.waiting} messages wait for a turn already (maxWaiting)`, { key }),
      )
    }
    const started = monotonicNow()
    // Request ids are unique within this incarnation (the scripts add it where needed).
    const acquisition = new Acquisition(this, key, String(++this.requestSeq), started, waitMs, options.signal)
    this.book.began(acquisition, started)
    this.active++
    // run() ends with ended(): the book's count of waiting messages, and settled().
    return acquisition.run()
  }

  /** @internal An acquisition's wait ended (granted or failed): its last step. */
  ended(acquisition: Acquisition): void {
    this.book.ended(acquisition)
    if (--this.active === 0 && this.idle.length) for (const resolve of this.idle.splice(0)) resolve()
  }

  /** @internal How long a waiter sleeps before it polls again (a push may wake it sooner; becoming keeper recomputes it). */
  pollDelay(key: string, place: Place, backoff: number): number {
    return this.lines.pollDelay(key, place, this.pollTiming(backoff))
  }

  /** What pollDelay needs: is the push channel up, the backoff, how often to keep our tickets alive. */
  private pollTiming(backoff: number): PollTiming {
    const core = this.core
    return { pushReady: core.backend.pushReady(), backoff, keeperMs: keeperPollMs(core.leaseMs), minPollMs: core.minPollMs }
  }

  /** A call failed: pushes may be lost too. The other keepers poll now — at most once per keeper interval. */
  /** @internal */
  pushMayBeLost(except: Place): void {
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
  /** @internal */
  async poll(key: string, ticket: number | null, requestId: string, epoch: string): Promise<TurnReply> {
    const { backend, replicaId, incarnation, leaseMs } = this.core
    const first = ticket === null
    if (first) this.book.taking(key, +1)
    try {
      const reply = await backend.turnAcquire(key, replicaId, incarnation, leaseMs, ticket, requestId, epoch)
      if (first && reply.status === 'queued') this.book.queued(key, reply.ticket)
      return reply
    } finally {
      if (first) this.book.taking(key, -1)
    }
  }

  /** Keep a background step (a withdrawal after the wait ended) in flight for settled(). */
  /** @internal */
  track(p: Promise<unknown>): void {
    this.inflight.add(p)
    void p.finally(() => this.inflight.delete(p))
  }

  /**
   * A push for a chat: a ticket of ours was offered the turn (or handed it by our own release:
   * `handed`; or dropped: poll now), or — without a ticket — an operator revoked a turn of ours.
   */
  onWake(key: string, ticket: number | null, grant?: PushedGrant, handed = false): void {
    if (ticket !== null) {
      // A pushed offer is used only on the server it came from, after the call that bounds it
      // (pushed-offer.ts): note which server we knew, and when it came.
      if (grant && !handed) {
        grant.receivedIn = this.renewer.checkUnderWay ? -1 : this.renewer.generation
        grant.receivedAt = monotonicNow()
      }
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

  /** Resolves when every acquisition in flight has ended, and the withdrawals they left. */
  async settled(): Promise<void> {
    if (this.active > 0) await new Promise<void>((resolve) => this.idle.push(resolve))
    await Promise.allSettled([...this.inflight])
  }
}
