/**
 * One acquisition of a chat's turn (TurnQueue.acquire), as named steps over its own state
 * (docs/turns.md has the whole algorithm):
 *
 *   run           give back a ticket a failed withdrawal left here, then: send → the reply's step
 *   send          take a ticket (once every earlier acquisition of ours in the chat has its own) or poll
 *   callFailed    Redis did not answer: end the wait at waitMs, else back off and poll again
 *   onGranted     a take or poll answered 'granted': take the turn
 *   onDropped     our ticket is gone: queue again after a failover or a flush, else fail ('dropped'; 'stale-grant': too late)
 *   onQueued      still queued: sleep until a push, a hand-off or our poll time
 *   afterSleep    woken: take the turn pushed or handed to us, or poll again
 *   giveBack      the wait failed: withdraw the ticket (or pass on a turn granted meanwhile)
 *   end           leave the chat's line and forget the wait
 */
import { monotonicNow } from '../clock.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { isConnectionError } from '../errors/from-redis.js'
import type { Holder, TurnReply } from '../wire/types.js'
import type { ArrivalLines, Place } from './arrival-line.js'
import { leaseDeadline, type CoordinatorContext } from './context.js'
import type { LeaseTable } from './lease-table.js'
import { offerContext, offerUse, takeUpLater } from './pushed-offer.js'
import type { Renewer } from './renewer.js'
import { TurnHandle } from './turn-handle.js'
import { answeredBy, waitingId, type PauseResult, type TurnWakes } from './turn-wakes.js'
import type { Turn } from './types.js'
import type { WaitBook } from './wait-book.js'

/** What an acquisition uses of its queue (TurnQueue): the shared parts and the calls that touch Redis. */
export interface AcquisitionHost {
  readonly core: CoordinatorContext
  readonly leases: LeaseTable
  readonly renewer: Renewer
  readonly wakes: TurnWakes
  readonly lines: ArrivalLines
  readonly book: WaitBook
  /** Take a ticket (null) or poll with one; `epoch`: the chat state's as our ticket's replies named it. */
  poll(key: string, ticket: number | null, requestId: string, epoch: string): Promise<TurnReply>
  /** How long a waiter with `backoff` sleeps before it polls again, unless a push wakes it (pollDelay). */
  pollDelay(key: string, place: Place, backoff: number): number
  /** A call failed: the other keepers poll (pushes may be lost). */
  pushMayBeLost(except: Place): void
  /** Keep a background step in flight for settled(). */
  track(p: Promise<unknown>): void
  /** A push (or our own nudge) for a ticket of ours. */
  onWake(key: string, ticket: number | null): void
  /** The acquisition's wait ended (its last step). */
  ended(acquisition: Acquisition): void
}

/** What a step decided: go round again (send the next take or poll), sleep (then afterSleep), or the turn is ours. */
type Next = 'again' | 'sleep' | { turn: Turn }
type AfterSleep = Exclude<Next, 'sleep'>
const AGAIN = 'again'
const SLEEP = 'sleep'

/** Its own place in its chat's line (arrival-line.ts): one object per waiting message, no closures of its own (a backlog is paid in GC time). */
export class Acquisition implements Place {
  /** Place: the server generation at which our ticket was last seen in the queue (arrival-line.ts). */
  seenAt: number | null = null
  /** Place: when another take of ours found our ticket gone with the chat's state. */
  lostAt = -Infinity
  /** The ticket Redis knows as ours (null: none yet, or handed back); a turn taken clears it. */
  private ticket: number | null = null
  private backoff: number
  /** The last call that failed, while Redis has not answered since. */
  private lastError: unknown = null
  /** Redis's clock (ms) when our take queued our ticket (a pushed grant names it: pushed-offer.ts). */
  private takenAt: number | null = null
  private epoch = '' // the chat state's epoch as the replies that found our ticket queued named it ('': not known)
  /** A take-ticket was sent and not answered: Redis may hold a ticket of ours we do not know (yet). */
  private takeInDoubt = false
  /** The wait ended with Redis not answering (a poll unanswered, or failing, at waitMs). */
  private unanswered = false
  /** Tickets of this acquisition registered as waiting (made at its first 'queued'; more after a failover re-queued it). */
  private waitingIds: string | string[] | null = null
  private readonly giveUpAt: number

  constructor(
    private readonly q: AcquisitionHost,
    private readonly key: string,
    private readonly requestId: string,
    private readonly started: number,
    private readonly waitMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.giveUpAt = started + waitMs
    this.backoff = q.core.minPollMs
    // Messages of this replica for one chat take their tickets in arrival order: each acquisition
    // takes one (first, or again after a failover lost it) only once every earlier one has its own
    // on the server known now, or gave up. Normally that is one round trip apart; when Redis is
    // unreachable or failed over, it keeps retries and re-queues from reordering them.
    q.lines.join(key, this)
  }

  /** Place: poll now (our ticket may have been lost with a failover). */
  nudge(): void {
    if (this.ticket !== null) this.q.onWake(this.key, this.ticket)
  }

  /** Place: we became the chat's keeper: our pause works out when to poll. */
  reschedule(): void {
    if (this.ticket !== null) this.q.wakes.reschedule(this.key, this.ticket)
  }

  async run(): Promise<Turn> {
    const { q, key } = this
    try {
      // A ticket of ours left here by a withdrawal that failed (or the turn granted to it) would
      // hold this chat until it lapsed, and this replica then be presumed dead in it: give it back first.
      if (q.leases.pending) await q.leases.retryReleases(key)
      for (;;) {
        this.checkLive()
        let next: Next = await this.send()
        if (next === SLEEP) {
          // Asleep, a waiting message is this frame and its pause: no other step of it is suspended.
          const ticket = this.ticket!
          const delay = () => Math.min(q.pollDelay(key, this, this.backoff), this.giveUpAt - monotonicNow())
          next = this.afterSleep(ticket, await q.wakes.pause(key, ticket, delay, this.started, this.signal))
        }
        if (next !== AGAIN) return next.turn
      }
    } catch (err) {
      throw await this.giveBack(err)
    } finally {
      this.end()
    }
  }

  private checkLive(): void {
    const { key } = this
    if (this.signal?.aborted) throw new CoordinationUnavailableError('aborted', `wait for ${JSON.stringify(key)} aborted`, { key })
    const state = this.q.core.state
    if (state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${state}`, { key })
  }

  /** Take a ticket (none yet) or poll with ours, and go on with what Redis answered. */
  private async send(): Promise<Next> {
    const { q, key } = this
    const taking = this.ticket === null
    if (taking && !q.lines.clear(key, this, q.renewer.generation)) {
      await q.lines.wait(key, this, () => q.renewer.generation, this.giveUpAt, q.core.maxPollMs, this.signal)
    }
    const sentAt = monotonicNow()
    const generationAtSend = q.renewer.generation
    if (taking) [this.takenAt, this.epoch] = [null, ''] // a new ticket: not queued yet, in no state known
    let reply: TurnReply
    try {
      if (taking) this.takeInDoubt = true
      const call = q.poll(key, this.ticket, this.requestId, this.epoch)
      reply = await answeredBy(call, this.giveUpAt, q.core.leaseMs, key, () => (this.unanswered = true))
      this.takeInDoubt = false
    } catch (err) {
      return this.callFailed(err)
    }
    this.lastError = null
    // A take or poll answered 'queued' (or a poll 'granted') kept our tickets in this chat alive.
    if (reply.status === 'queued') q.lines.refreshed(key, sentAt, reply.holderLeftMs)
    else if (reply.status === 'granted' && !taking) q.lines.refreshed(key, sentAt, null)
    // A ticket taken is registered as waiting by poll(); forgotten when this acquisition ends.
    if (taking && reply.status === 'queued') {
      const id = waitingId(key, reply.ticket)
      this.waitingIds = this.waitingIds === null ? id : ([] as string[]).concat(this.waitingIds, id)
    }
    if (
      taking &&
      (reply.status === 'granted' || reply.status === 'queued') &&
      (await this.tookAheadOfEarlier(reply, sentAt, generationAtSend))
    ) {
      // The take reached a server, or a chat's state, that lost earlier messages' tickets, before
      // they queued again: give this ticket (or turn) back and queue behind them.
      q.book.forget(waitingId(key, reply.ticket))
      await q.leases.withdrawTicket(key, reply.ticket, this.requestId)
      this.ticket = null
      return AGAIN
    }
    switch (reply.status) {
      case 'granted':
        this.ticket = reply.ticket
        return { turn: this.take(reply.ticket, reply.fence, reply.previousHolder, sentAt, leaseDeadline(q.core, sentAt)) }
      case 'dropped':
        return this.onDropped(reply)
      case 'expired':
        this.ticket = null
        throw new CoordinationUnavailableError(
          'stale-grant',
          `turn of ${JSON.stringify(key)} was granted but expired before it was taken`,
          {
            key,
          },
        )
      default:
        return this.onQueued(reply, sentAt, generationAtSend)
    }
  }

  /** The take or poll failed: at waitMs the wait ends (unanswered), else back off and try again. */
  private async callFailed(err: unknown): Promise<Next> {
    const { q, key } = this
    if (!(err instanceof CoordinationUnavailableError) && !isConnectionError(err)) throw err
    // The wait ended with a poll unanswered: a timeout, or Redis unreachable if it was failing already.
    if (monotonicNow() >= this.giveUpAt) this.unanswered = true
    if (err instanceof CoordinationUnavailableError && err.reason === 'timeout' && !this.lastError) throw err
    const before = this.lastError
    this.lastError = err
    if (this.unanswered) {
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
    q.pushMayBeLost(this)
    const until = monotonicNow() + Math.min(this.backoff, this.giveUpAt - monotonicNow())
    await q.wakes.pause(key, this.ticket, () => until - monotonicNow(), this.started, this.signal)
    this.backoff = Math.min(this.backoff * 2, q.core.maxPollMs)
    return AGAIN
  }

  /**
   * After a take: did it stand ahead of an earlier acquisition of ours whose ticket is lost? Either it found no other
   * ticket of ours (`alone`) while others believe theirs queued (gone with the chat's state: all re-take, earlier ones
   * first), or it landed on a server that changed since it was sent while an earlier one of ours has no ticket there yet.
   */
  private async tookAheadOfEarlier(reply: { alone?: boolean }, sentAt: number, generationAtSend: number): Promise<boolean> {
    const { renewer, lines } = this.q
    // (A take sent again may have found its first run's ticket: `alone` unknown, the others re-check.)
    if (reply.alone !== false && lines.lostWith(this.key, this, sentAt)) return true
    if (renewer.generation === generationAtSend && !renewer.checkUnderWay) return false
    await renewer.checked()
    if (renewer.generation === generationAtSend) return false
    return lines.blockers(this.key, this, renewer.generation).length > 0
  }

  /**
   * Our ticket is no longer queued: gone with a failover or a flush (queue again; `seenAt`, the server
   * generation it was last seen on, changed since), skipped by an operator ('dropped'), or skipped as
   * a dead replica's: we polled it too late (froze, cut off, too slow), as with a grant that lapsed.
   */
  private async onDropped({ stateLost, presumedDead }: { stateLost?: boolean; presumedDead?: boolean }): Promise<Next> {
    const { q, key, seenAt } = this
    this.ticket = null
    q.lines.mark(key, this, null)
    const late = presumedDead && `ticket for ${JSON.stringify(key)} was skipped: this replica did not poll it in time`
    if (late) throw new CoordinationUnavailableError('stale-grant', late, { key })
    await q.renewer.checkServer()
    if (q.renewer.generation !== seenAt || stateLost) {
      this.backoff = q.core.minPollMs
      return AGAIN
    }
    throw new CoordinationUnavailableError('dropped', `ticket for ${JSON.stringify(key)} was removed from the queue`, { key })
  }

  /** Still queued with `ticket`: sleep until the grant or the time to poll again (then afterSleep). */
  private onQueued(reply: Extract<TurnReply, { status: 'queued' }>, sentAt: number, generationAtSend: number): Next {
    const { q, key } = this
    const { ticket, answeredAt } = reply
    // Seen in the queue on the server of that generation (survived any failover before it), and in the state of that epoch.
    this.ticket = ticket
    if (reply.epoch !== undefined) this.epoch = reply.epoch
    q.lines.mark(key, this, generationAtSend, sentAt)
    if (answeredAt !== undefined && q.renewer.generation === generationAtSend && !q.renewer.checkUnderWay) {
      q.lines.answered(key, sentAt, answeredAt, generationAtSend)
      // The take that queued our ticket (not one sent again, which found it: `alone` absent).
      if (reply.alone !== undefined) this.takenAt = Math.floor(answeredAt / 1000)
    }
    if (monotonicNow() >= this.giveUpAt) {
      throw new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} within ${this.waitMs}ms`, { key })
    }
    return SLEEP
  }

  /**
   * Woken from sleep with `ticket` queued. An offer pushed by another replica's script is used at once when it is of the ticket our take
   * queued and came after a call of ours in the chat (offerUse). Otherwise a grant pushed to us is polled for (the poll takes it up) when
   * it is such an offer (Redis runs the lease from there, and an offer to a waiter that died lapses and passes on); when an operator
   * revoked a turn of ours on this chat since; or when it names another acquisition of ours (Redis lost our ticket and gave its number
   * again). A grant our own release handed over, made with our leaseMs after that release was sent (`sentAt`), is taken without another
   * round trip; one whose release time is not known is asked of Redis.
   */
  private afterSleep(ticket: number, woke: PauseResult): AfterSleep {
    const { q, key } = this
    const grant = woke.grant
    if (grant) {
      const offer = woke.handed ? null : offerUse(grant, offerContext(q, key, this.requestId, this.takenAt, this.seenAt))
      if (offer) return { turn: this.take(ticket, grant.fence, grant.previousHolder, offer.since, offer.deadline, offer.takeUpAt) }
      const sentAt = woke.handed ? grant.sentAt : undefined
      if (sentAt === undefined || q.wakes.revokedSince(key, sentAt) || (!!grant.requestId && grant.requestId !== this.requestId)) {
        this.backoff = q.core.minPollMs
        return AGAIN
      }
      // Redis expires a handed grant leaseMs after it was made, which was after its release was sent.
      return { turn: this.take(ticket, grant.fence, grant.previousHolder, sentAt, leaseDeadline(q.core, sentAt)) }
    }
    this.backoff = woke.woken ? q.core.minPollMs : Math.min(this.backoff * 2, q.core.maxPollMs)
    return AGAIN
  }

  /** The turn is ours: track its lease, count the grant, hand the caller its handle. */
  private take(t: number, fence: number, previousHolder: Holder | null, sentAt: number, deadline: number, takeUpAt?: number): TurnHandle {
    const { q, key } = this
    if (monotonicNow() >= deadline) {
      // Frozen between the grant and now: the lease may already be someone else's.
      throw new CoordinationUnavailableError('stale-grant', `grant of ${JSON.stringify(key)} arrived too late to use`, { key })
    }
    if (q.core.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${q.core.state}`, { key })
    const lease = q.leases.track('chat', key, fence, t, sentAt, deadline, this.requestId)
    if (this.waitingIds !== null) lease.queued = true // its take was queued: others likely are behind it
    if (takeUpAt !== undefined) takeUpLater(lease, takeUpAt, q.core.minPollMs, (l) => q.renewer.checkLeaseNow(l)) // an offer used untaken
    this.ticket = null // ours now: release() gives it back
    const waitedMs = monotonicNow() - this.started
    q.book.granted(waitedMs)
    q.core.stats.turnsGranted++
    q.core.emit('coordination:turn-granted', { key, waitedMs })
    return new TurnHandle(q.leases, lease, previousHolder, waitedMs)
  }

  /**
   * The wait failed: withdraw the ticket (or pass on a turn granted in the meantime), retried until
   * Redis answers — also one whose take-ticket is unanswered: the client may send it again once it
   * reconnects, and Redis then queues a ticket nobody polls (found by its request id). Returns the
   * error to throw.
   */
  private async giveBack(err: unknown): Promise<unknown> {
    const { q, key } = this
    if ((this.ticket !== null || this.takeInDoubt) && q.core.state !== 'crashed') {
      // Ours the only place left in this chat's line: the withdrawal deletes our w: field too.
      const withdrawn = q.leases.withdrawTicket(key, this.ticket, this.requestId, q.lines.size(key) <= 1)
      // Redis did not answer within waitMs: reject now; the withdrawal goes on (stop() waits for it).
      if (this.unanswered) q.track(withdrawn)
      else await withdrawn
    }
    if (err instanceof CoordinationUnavailableError && err.reason === 'unreachable' && this.lastError && !err.cause) {
      return new CoordinationUnavailableError('unreachable', err.message, { key, cause: this.lastError })
    }
    return err
  }

  /** Leave the chat's line and forget this wait (its tickets' pushes and its place in the book). */
  private end(): void {
    const { q, key } = this
    try {
      q.lines.leave(key, this)
      for (const id of typeof this.waitingIds === 'string' ? [this.waitingIds] : (this.waitingIds ?? [])) {
        q.wakes.forget(id)
        q.book.forget(id)
      }
    } finally {
      q.ended(this)
    }
  }
}
