/**
 * Chat turns, the wake-ups: the acquisitions sleeping between polls, by (chat, ticket), and the
 * pushes that wake them — an offer of the turn published by another replica's script, a grant our own
 * release handed over in its reply, a dropped ticket, or an operator's revocation of a turn of ours.
 */
import { monotonicNow, sleep } from '../clock.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import type { PushedGrant } from '../wire/types.js'

/**
 * How a pause ended: the poll interval, or a push (with the grant itself, when it was one; `handed`:
 * our own release handed it over in its reply — a full lease, not an offer to take up), or
 * `reschedule`: nothing to poll for yet, but when to poll next has changed (it became its chat's keeper).
 */
export type PauseResult = { woken: boolean; grant?: PushedGrant; handed?: boolean; reschedule?: boolean }

interface Waiter {
  wake: (grant?: PushedGrant, handed?: boolean) => void
  reschedule: () => void
}

const MAX_TIMER_MS = 2 ** 31 - 1

export const waitingId = (key: string, ticket: number) => `${key}\u0000${ticket}`

export class TurnWakes {
  /**
   * Acquisitions sleeping between polls, by (chat, ticket). More than one can sleep on one number:
   * a failover that lost our tickets lets the new server give a number again to another acquisition
   * of ours while the one that had it still sleeps. A wake-up reaches them all; each asks Redis
   * (a poll names its request) or checks the grant's request id, so only the ticket's owner takes it.
   */
  private readonly waiters = new Map<string, Set<Waiter>>()
  /** Wake-ups that came while no waiter slept for them (its poll was in flight). */
  private readonly early = new Map<string, { grant: PushedGrant | undefined; handed: boolean; at: number }>()
  /** Per chat: when an operator's revocation of one of our turns was last pushed to us. */
  private readonly revokes = new Map<string, number>()

  /** Wait for a wake-up on (key, ticket), `ms`, or an abort. `since`: when the acquisition began. */
  pause(key: string, ticket: number | null, ms: number, since: number, signal?: AbortSignal): Promise<PauseResult> {
    if (ticket === null) return sleep(ms, signal).then(() => ({ woken: false }))
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
      let done = false
      const finish = (woken: boolean, grant?: PushedGrant, handed?: boolean, reschedule?: boolean) => {
        if (done) return
        done = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        const same = this.waiters.get(id)
        same?.delete(waiter)
        if (same?.size === 0) this.waiters.delete(id)
        resolve(reschedule ? { woken, reschedule } : { woken, grant, handed })
      }
      const onAbort = () => finish(false)
      const waiter: Waiter = {
        wake: (grant, handed) => finish(true, grant, handed),
        reschedule: () => finish(false, undefined, undefined, true),
      }
      // A later message of a chat sleeps until its push (ms may be a whole long wait): a timer cannot
      // wait longer than 2^31 - 1 ms (Node fires a longer one at once).
      const timer = setTimeout(() => finish(false), Math.min(Math.max(0, ms), MAX_TIMER_MS))
      signal?.addEventListener('abort', onAbort, { once: true })
      const same = this.waiters.get(id)
      if (same) same.add(waiter)
      else this.waiters.set(id, new Set([waiter]))
    })
  }

  /**
   * A push for (key, ticket): wake its sleeping acquisition, or keep it for one whose poll is in flight
   * (`expected`: an acquisition of this chat is between polls). Returns nothing; a push nobody expects is dropped.
   */
  deliver(key: string, ticket: number, grant: PushedGrant | undefined, handed: boolean, expected: (id: string) => boolean): void {
    const id = waitingId(key, ticket)
    const sleeping = this.waiters.get(id)
    if (sleeping) for (const w of [...sleeping]) w.wake(grant, handed)
    else if (expected(id)) this.early.set(id, { grant, handed, at: monotonicNow() })
  }

  /** When to poll next changed for (key, ticket) (it became its chat's keeper): end its pause, if it sleeps, to work it out. */
  reschedule(key: string, ticket: number): void {
    for (const w of [...(this.waiters.get(waitingId(key, ticket)) ?? [])]) w.reschedule()
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
    for (const same of [...this.waiters.values()]) for (const w of [...same]) w.wake()
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
