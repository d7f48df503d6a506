import { monotonicNow } from '../clock.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'

/**
 * How often a chat's keeper polls while pushes work: a sixth of the lease. So a grant offered to it
 * whose push was lost (a subscriber moving to another node, a cluster bus that dropped it) is still
 * taken up — an offer runs a third of the lease (lua/includes/turn.lua take_up_ms) — and our queued
 * tickets there never reach the end of their life (two thirds: ticket_life_ms).
 */
export function keeperPollMs(leaseMs: number): number {
  return Math.floor(leaseMs / 6)
}

/** What a waiter's next poll depends on besides its chat's line. */
export interface PollTiming {
  /** Is the push channel subscribed now? */
  pushReady: boolean
  /** The waiter's backoff (minPollMs doubling up to maxPollMs): the interval while pushes do not work. */
  backoff: number
  /** The keeper's interval while pushes work (keeperPollMs). */
  keeperMs: number
  minPollMs: number
}

/** One waiting acquisition's place in its chat's line (this replica's acquisitions, in arrival order). */
export interface Place {
  /** The server generation at which its ticket was last seen in the queue; null while it has none. */
  seenAt: number | null
  /** Ask it to poll now: its ticket may have been lost with a failover. */
  nudge(): void
  /** It became its chat's keeper (the first place): it works out when to poll again. */
  reschedule(): void
}

/** An acquisition waiting in wait(): its place, and the server generation it waits at. */
interface Waiting {
  place: Place
  generation: () => number
}

interface Line {
  places: Place[]
  /** Acquisitions waiting for an earlier place to get (again) a ticket, by wake-up (made when one first waits). */
  listeners: Map<() => void, Waiting> | null
  /** When the last take or poll that kept our queued tickets here alive was sent (monotonic ms). */
  refreshedAt: number
  /** When the chat's holder's lease (or offer) ends unless renewed, as the last reply said (monotonic ms). */
  holderDueAt: number
}

/**
 * Per chat, this replica's acquisitions in arrival order. Each takes a ticket — the first one, or
 * again after a failover lost it — only once every earlier acquisition has one seen on the server
 * known now, or has ended. So a replica's messages for a chat queue in the order they came, across
 * outages (retries on independent timers) and lossy failovers (tickets re-taken as each poll finds
 * its own gone).
 *
 * The first place is the chat's keeper: the only one of ours there that polls on a timer. Our later
 * tickets stand behind it in the queue, so no grant can reach them first, and each poll keeps them
 * all alive (one w:<incarnation> field per chat): waiting costs per chat, not per message. When the
 * keeper leaves, the next place becomes keeper and is told to reschedule.
 */
export class ArrivalLines {
  private readonly lines = new Map<string, Line>()

  join(key: string, nudge: () => void, reschedule: () => void): Place {
    let line = this.lines.get(key)
    if (!line) this.lines.set(key, (line = { places: [], listeners: null, refreshedAt: -Infinity, holderDueAt: Infinity }))
    const place: Place = { seenAt: null, nudge, reschedule }
    line.places.push(place)
    return place
  }

  /** Its ticket was seen at server generation `seenAt`, or is gone (null). */
  mark(key: string, place: Place, seenAt: number | null): void {
    if (place.seenAt === seenAt) return
    place.seenAt = seenAt
    this.changed(key)
  }

  /** The acquisition ended (granted, or gave up). */
  leave(key: string, place: Place): void {
    const line = this.lines.get(key)
    if (!line) return
    const i = line.places.indexOf(place)
    if (i >= 0) line.places.splice(i, 1)
    if (line.places.length === 0 && !line.listeners?.size) this.lines.delete(key)
    else this.changed(key)
    if (i === 0) line.places[0]?.reschedule()
  }

  /** How many acquisitions of ours are in this chat's line. */
  size(key: string): number {
    return this.lines.get(key)?.places.length ?? 0
  }

  /**
   * A take or poll sent at `sentAt` kept our tickets here alive (Redis answered it); `holderLeftMs`:
   * how long the holder's lease runs unless renewed, as its reply said (null: not said).
   */
  refreshed(key: string, sentAt: number, holderLeftMs: number | null): void {
    const line = this.lines.get(key)
    if (!line) return
    if (sentAt > line.refreshedAt) line.refreshedAt = sentAt
    if (holderLeftMs !== null) line.holderDueAt = monotonicNow() + holderLeftMs + 1
  }

  /**
   * How long a waiting acquisition sleeps before it polls again (a push may end it sooner). Only the
   * chat's keeper polls: while the push channel works, to keep our tickets alive and when the holder's
   * lease would lapse; while it does not, with the backoff. The others sleep until a push, or until
   * they become keeper (reschedule).
   */
  pollDelay(key: string, place: Place, t: PollTiming): number {
    const line = this.lines.get(key)
    if (line?.places[0] !== place) return Infinity
    if (!t.pushReady) return t.backoff
    const due = Math.min(line.refreshedAt + t.keeperMs, line.holderDueAt)
    return Math.max(t.minPollMs, due - monotonicNow())
  }

  /** Ask every chat's keeper to poll now (pushes may have been lost: the subscriber reconnected). */
  nudgeKeepers(except?: Place): void {
    for (const line of this.lines.values()) if (line.places[0] !== except) line.places[0]?.nudge()
  }

  /** Is no earlier place without a ticket seen at `generation`? (blockers() without the list) */
  clear(key: string, place: Place, generation: number): boolean {
    const places = this.lines.get(key)?.places
    if (!places) return true
    for (const p of places) {
      if (p === place) return true
      if (p.seenAt !== generation) return false
    }
    return true
  }

  /** The earlier places without a ticket seen at `generation` (the ones this place must wait for). */
  blockers(key: string, place: Place, generation: number): Place[] {
    const places = this.lines.get(key)?.places ?? []
    const out: Place[] = []
    for (const p of places) {
      if (p === place) break
      if (p.seenAt !== generation) out.push(p)
    }
    return out
  }

  /**
   * Wait until no earlier place blocks this one at the current generation. Blockers whose ticket
   * is from an older generation are nudged to poll now (and again every `recheckMs`). Rejects as the
   * wait does: 'timeout' at `giveUpAt`, 'aborted' with the signal.
   */
  async wait(
    key: string,
    place: Place,
    generation: () => number,
    giveUpAt: number,
    recheckMs: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const waiting: Waiting = { place, generation }
    for (;;) {
      const blocking = this.blockers(key, place, generation())
      if (blocking.length === 0) return
      if (signal?.aborted) throw new CoordinationUnavailableError('aborted', `wait for ${JSON.stringify(key)} aborted`, { key })
      const left = giveUpAt - monotonicNow()
      if (left <= 0) throw new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} in time`, { key })
      for (const p of blocking) if (p.seenAt !== null) p.nudge()
      const line = this.lines.get(key)!
      const listeners = (line.listeners ??= new Map())
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          listeners.delete(done)
          signal?.removeEventListener('abort', done)
          resolve()
        }
        const timer = setTimeout(done, Math.min(left, recheckMs))
        listeners.set(done, waiting)
        signal?.addEventListener('abort', done, { once: true })
      })
    }
  }

  /**
   * A place got or lost its ticket, or left: wake the waiters that now have something to do — go on
   * (nothing blocks them) or nudge a blocker. The others would only go back to sleep (with a new
   * timer each: on a busy chat that was most of a message's CPU); their recheck timer still runs.
   */
  private changed(key: string): void {
    const line = this.lines.get(key)
    if (!line?.listeners?.size) return
    for (const [wake, w] of [...line.listeners]) if (this.moves(line.places, w)) wake()
  }

  private moves(places: Place[], w: Waiting): boolean {
    const generation = w.generation()
    let blocked = false
    for (const p of places) {
      if (p === w.place) return !blocked
      if (p.seenAt === generation) continue
      if (p.seenAt !== null) return true // a ticket from an older generation: nudge it now
      blocked = true
    }
    return true
  }
}
