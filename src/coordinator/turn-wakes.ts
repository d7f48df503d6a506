/**
 * Chat turns, the wake-ups: the acquisitions sleeping between polls, by (chat, ticket), and the
 * pushes that wake them — an offer of the turn published by another replica's script, a grant our own
 * release handed over in its reply, a dropped ticket, or an operator's revocation of a turn of ours.
 */
import { monotonicNow, sleep } from '../clock.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import type { PushedGrant } from '../wire/types.js'

/**
 * How a pause ended: its time, or a push (with the grant itself, when it was one; `handed`: our own
 * release handed it over in its reply — a full lease, not an offer to take up).
 */
export type PauseResult = { woken: boolean; grant?: PushedGrant; handed?: boolean }

/**
 * How long a pause lasts from now (ms; 0 or less: it ends at once). Asked when it begins and again
 * each time it is rescheduled (its acquisition became its chat's keeper: when to poll changed).
 */
export type PauseDelay = () => number

const MAX_TIMER_MS = 2 ** 31 - 1

export const waitingId = (key: string, ticket: number) => `${key}\u0000${ticket}`

/**
 * One acquisition asleep on (chat, ticket). A plain object with one timer, no closures of its own:
 * a backlog of thousands of waiting messages per replica costs their memory, and the garbage
 * collector's time grows with it.
 */
class Sleeper {
  private timer: NodeJS.Timeout | null = null
  private done = false
  private onAbort: (() => void) | null = null

  constructor(
    private readonly wakes: TurnWakes,
    readonly id: string,
    private readonly delay: PauseDelay,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (r: PauseResult) => void,
  ) {}

  /** Start (or restart) the timer for what `delay` says now; false: the pause ended at once. */
  arm(): boolean {
    const ms = this.delay()
    if (!(ms > 0)) {
      this.finish(false)
      return false
    }
    // A later message of a chat sleeps until its push (ms may be a whole long wait): a timer cannot
    // wait longer than 2^31 - 1 ms (Node fires a longer one at once). Whole milliseconds: timers of
    // one duration share Node's list for it.
    this.timer = setTimeout(timeUp, Math.min(Math.ceil(ms), MAX_TIMER_MS), this)
    return true
  }

  listen(): void {
    if (!this.signal) return
    this.onAbort = () => this.finish(false)
    this.signal.addEventListener('abort', this.onAbort, { once: true })
  }

  wake(grant?: PushedGrant, handed?: boolean): void {
    this.finish(true, grant, handed)
  }

  /** When to end this pause changed: work it out again. */
  reschedule(): void {
    if (this.done) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.arm()
  }

  finish(woken: boolean, grant?: PushedGrant, handed?: boolean): void {
    if (this.done) return
    this.done = true
    if (this.timer) clearTimeout(this.timer)
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort)
    this.wakes.unregister(this)
    this.resolve(grant ? { woken, grant, handed } : { woken })
  }
}

function timeUp(s: Sleeper): void {
  s.finish(false)
}

export class TurnWakes {
  /**
   * Acquisitions sleeping between polls, by (chat, ticket): one, or several. More than one can sleep
   * on one number: a failover that lost our tickets lets the new server give a number again to
   * another acquisition of ours while the one that had it still sleeps. A wake-up reaches them all;
   * each asks Redis (a poll names its request) or checks the grant's request id, so only the ticket's
   * owner takes it.
   */
  private readonly waiters = new Map<string, Sleeper | Sleeper[]>()
  /** Wake-ups that came while no waiter slept for them (its poll was in flight). */
  private readonly early = new Map<string, { grant: PushedGrant | undefined; handed: boolean; at: number }>()
  /** Per chat: when an operator's revocation of one of our turns was last pushed to us. */
  private readonly revokes = new Map<string, number>()

  /**
   * Wait for a wake-up on (key, ticket), for what `delay` says (asked again at each reschedule), or an
   * abort. `since`: when the acquisition began.
   */
  pause(key: string, ticket: number | null, delay: PauseDelay, since: number, signal?: AbortSignal): Promise<PauseResult> {
    if (ticket === null) return sleep(delay(), signal).then(() => ({ woken: false }))
    const id = waitingId(key, ticket)
    // A push that came while our last poll was in flight.
    const early = this.early.get(id)
    if (early) {
      this.early.delete(id)
      // Only a push received during this acquisition is about its ticket (ticket numbers repeat
      // after a chat's key expired; a late copy of an old grant must not be taken for a new one).
      if (early.at >= since) return Promise.resolve({ woken: true, grant: early.grant, handed: early.handed })
    }
    return new Promise<PauseResult>((resolve) => {
      const s = new Sleeper(this, id, delay, signal, resolve)
      if (!s.arm()) return
      s.listen()
      const same = this.waiters.get(id)
      if (!same) this.waiters.set(id, s)
      else if (Array.isArray(same)) same.push(s)
      else this.waiters.set(id, [same, s])
    })
  }

  /** @internal A sleeper's pause ended: it no longer waits on its id. */
  unregister(s: Sleeper): void {
    const same = this.waiters.get(s.id)
    if (same === s) this.waiters.delete(s.id)
    else if (Array.isArray(same)) {
      const i = same.indexOf(s)
      if (i >= 0) same.splice(i, 1)
      if (same.length === 1) this.waiters.set(s.id, same[0]!)
      else if (same.length === 0) this.waiters.delete(s.id)
    }
  }

  /** The sleepers on `id`, as a list apart from the map (waking one changes the map). */
  private sleepers(id: string): Sleeper[] {
    const same = this.waiters.get(id)
    return same === undefined ? [] : Array.isArray(same) ? [...same] : [same]
  }

  /**
   * A push for (key, ticket): wake its sleeping acquisition, or keep it for one whose poll is in flight
   * (`expected`: an acquisition of this chat is between polls). Returns nothing; a push nobody expects is dropped.
   */
  deliver(key: string, ticket: number, grant: PushedGrant | undefined, handed: boolean, expected: (id: string) => boolean): void {
    const id = waitingId(key, ticket)
    const sleeping = this.sleepers(id)
    if (sleeping.length) for (const w of sleeping) w.wake(grant, handed)
    else if (expected(id)) this.early.set(id, { grant, handed, at: monotonicNow() })
  }

  /** When to poll next changed for (key, ticket) (it became its chat's keeper): its pause, if it sleeps, works it out again. */
  reschedule(key: string, ticket: number): void {
    for (const w of this.sleepers(waitingId(key, ticket))) w.reschedule()
  }

  /** An operator revoked a turn of ours on `key` (a handed grant not taken yet is confirmed by a poll). */
  noteRevoke(key: string): void {
    this.revokes.set(key, monotonicNow())
  }

  /** Did a revocation on `key` come at or after `since` (monotonic ms)? */
  revokedSince(key: string, since: number): boolean {
    return (this.revokes.get(key) ?? -Infinity) >= since
  }

  /** A ticket's acquisition ended: a push kept for it is no longer anyone's. */
  forget(id: string): void {
    this.early.delete(id)
  }

  /** Forget pushes older than `maxAgeMs` (the watchdog). */
  prune(now: number, maxAgeMs: number): void {
    for (const [id, w] of this.early) if (now - w.at > maxAgeMs) this.early.delete(id)
    for (const [key, at] of this.revokes) if (now - at > maxAgeMs) this.revokes.delete(key)
  }

  /** Wake every sleeping acquisition (stopping, evicted, crashed): each sees the state and gives up. */
  wakeAll(): void {
    for (const id of [...this.waiters.keys()]) for (const w of this.sleepers(id)) w.wake()
  }
}

/**
 * `call`, or — at the wait's end `giveUpAt` — a timeout, told to `late` (a timer may fire a little
 * before the clock reads giveUpAt). The call's outcome is then unknown. Only a call that can outlive
 * the wait (less than a lease of it left) gets a timer.
 */
export function answeredBy<T>(call: Promise<T>, giveUpAt: number, leaseMs: number, key: string, late: () => void): Promise<T> {
  const left = giveUpAt - monotonicNow()
  if (left > leaseMs) return call
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        late()
        reject(
          new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} within its wait (Redis did not answer)`, { key }),
        )
      },
      Math.max(0, left),
    )
    call.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}
