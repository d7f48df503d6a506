import { monotonicNow } from '../clock.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'

/** One waiting acquisition's place in its chat's line (this replica's acquisitions, in arrival order). */
export interface Place {
  /** The server generation at which its ticket was last seen in the queue; null while it has none. */
  seenAt: number | null
  /** Ask it to poll now: its ticket may have been lost with a failover. */
  nudge(): void
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
}

/**
 * Per chat, this replica's acquisitions in arrival order. Each takes a ticket — the first one, or
 * again after a failover lost it — only once every earlier acquisition has one seen on the server
 * known now, or has ended. So a replica's messages for a chat queue in the order they came, across
 * outages (retries on independent timers) and lossy failovers (tickets re-taken as each poll finds
 * its own gone).
 */
export class ArrivalLines {
  private readonly lines = new Map<string, Line>()

  join(key: string, nudge: () => void): Place {
    let line = this.lines.get(key)
    if (!line) this.lines.set(key, (line = { places: [], listeners: null }))
    const place: Place = { seenAt: null, nudge }
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
