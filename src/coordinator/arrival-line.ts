import { monotonicNow } from '../clock.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { ServerClock } from './pushed-offer.js'

/**
 * How often a chat's keeper polls while pushes work: a sixth of the lease. So a grant offered to it
 * whose push was lost (a subscriber moving to another node, a cluster bus that dropped it) is still
 * taken up — an offer runs at least a third of the lease (lua/includes/turn.lua offer_ms) — and our queued
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
  /**
   * The server generation at which its ticket was last seen in the queue; null while it has none;
   * LOST when another take of ours found it gone with the chat's state (lostWith).
   */
  seenAt: number | null
  /** When that was found (monotonic ms): an answer to a call sent before it does not mark it seen again. */
  lostAt: number
  /** Ask it to poll now: its ticket may have been lost with a failover. */
  nudge(): void
  /** It became its chat's keeper (the first place): it works out when to poll again. */
  reschedule(): void
}

/** A place's seenAt when its ticket went with the chat's state: no server generation is equal to it. */
export const LOST = -1

interface Line {
  places: Place[]
  /** Places waiting in wait(), by place: the wake-up that ends their current sleep. */
  sleepers: Map<Place, () => void>
  /** The server generation as the waiters see it (set by the first one that waits). */
  generation: (() => number) | null
  /** The generation at the last scan of the line, and whether a ticket from an older one blocked a waiter then. */
  scannedAt: number
  stale: boolean
  /** When the last take or poll that kept our queued tickets here alive was sent (monotonic ms). */
  refreshedAt: number
  /** When the chat's holder's lease (or offer) ends unless renewed, as the last reply said (monotonic ms). */
  holderDueAt: number
  /** Our recent calls in this chat that Redis answered with its clock (pushed-offer.ts). */
  clock: ServerClock
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
  /** Lines with waiters in wait(), and the one timer that rescans them after a server change. */
  private readonly waitingLines = new Set<string>()
  private recheck: NodeJS.Timeout | null = null

  /** `place` (a new acquisition: seenAt null, lostAt -Infinity) joins the end of the chat's line. */
  join(key: string, place: Place): void {
    let line = this.lines.get(key)
    if (!line)
      this.lines.set(
        key,
        (line = {
          places: [],
          sleepers: new Map(),
          generation: null,
          scannedAt: -1,
          stale: false,
          refreshedAt: -Infinity,
          holderDueAt: Infinity,
          clock: new ServerClock(),
        }),
      )
    line.places.push(place)
  }

  /** Its ticket was seen at server generation `seenAt` by a call sent at `sentAt`, or is gone (null). */
  mark(key: string, place: Place, seenAt: number | null, sentAt = Infinity): void {
    if (place.seenAt === seenAt || (seenAt !== null && sentAt < place.lostAt)) return
    place.seenAt = seenAt
    this.changed(key)
  }

  /**
   * A take by `place`, sent at `sentAt`, found no other ticket of ours in the chat (or may have: a take
   * sent again cannot tell): every other place that believes its ticket queued there lost it with the
   * chat's state (evicted, flushed). They are marked LOST and told to poll now: each finds its ticket
   * gone and takes one again, in line order. Returns whether any place is earlier than `place` (which
   * must then give its own back and take it again after them).
   */
  lostWith(key: string, place: Place, sentAt: number): boolean {
    const lost: Place[] = []
    let earlier = false
    let before = true
    for (const p of this.lines.get(key)?.places ?? []) {
      if (p === place) before = false
      else {
        // An earlier place without a ticket now (its own reply just found it gone) goes first too.
        earlier ||= before
        if (p.seenAt === null) continue
        p.seenAt = LOST
        p.lostAt = sentAt
        lost.push(p)
      }
    }
    if (lost.length) {
      this.changed(key)
      for (const p of lost) p.nudge()
    }
    return earlier
  }

  /** A call of ours in this chat, sent at `sentAt`, was answered at `answeredAt` on Redis's clock (µs). */
  answered(key: string, sentAt: number, answeredAt: number, generation: number): void {
    this.lines.get(key)?.clock.note(sentAt, answeredAt, generation)
  }

  /** Our recent calls in this chat that Redis answered with its clock (null: no line). */
  clockOf(key: string): ServerClock | null {
    return this.lines.get(key)?.clock ?? null
  }

  /** The acquisition ended (granted, or gave up). */
  leave(key: string, place: Place): void {
    const line = this.lines.get(key)
    if (!line) return
    const i = line.places.indexOf(place)
    if (i >= 0) line.places.splice(i, 1)
    if (line.places.length === 0 && !line.sleepers.size) this.lines.delete(key)
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
   *
   * A waiter sleeps until its line changes in a way that lets it go on or gives it a blocker to
   * nudge (changed()), with one timer for its whole wait: waiting costs nothing per second, whatever
   * the backlog. A server change is found by one timer for all lines (every `recheckMs` while any
   * waits), which rescans only the lines whose scan is older than the generation, or that had a stale
   * blocker.
   */
  async wait(
    key: string,
    place: Place,
    generation: () => number,
    giveUpAt: number,
    recheckMs: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const line = this.lines.get(key)
    if (!line) return
    line.generation ??= generation
    let timer: NodeJS.Timeout | null = null
    try {
      for (;;) {
        const blocking = this.blockers(key, place, generation())
        if (blocking.length === 0) return
        if (signal?.aborted) throw new CoordinationUnavailableError('aborted', `wait for ${JSON.stringify(key)} aborted`, { key })
        const left = giveUpAt - monotonicNow()
        if (left <= 0) throw new CoordinationUnavailableError('timeout', `no turn for ${JSON.stringify(key)} in time`, { key })
        for (const p of blocking) {
          if (p.seenAt === null) continue
          p.nudge()
          line.stale = true // nudged again at every rescan while it stays stale
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            line.sleepers.delete(place)
            signal?.removeEventListener('abort', done)
            resolve()
          }
          line.sleepers.set(place, done)
          timer ??= setTimeout(() => {
            timer = null
            line.sleepers.get(place)?.()
          }, Math.ceil(left)) // whole ms: timers of one duration share Node's list for it
          signal?.addEventListener('abort', done, { once: true })
          this.watch(key, recheckMs)
        })
      }
    } finally {
      if (timer) clearTimeout(timer)
      line.sleepers.delete(place)
    }
  }

  /** Rescan `key`'s line every `recheckMs` while it has waiters (one timer for every line). */
  private watch(key: string, recheckMs: number): void {
    this.waitingLines.add(key)
    if (this.recheck) return
    this.recheck = setInterval(() => {
      for (const k of this.waitingLines) {
        const line = this.lines.get(k)
        if (!line?.sleepers.size) {
          this.waitingLines.delete(k)
          continue
        }
        if (line.stale || line.generation?.() !== line.scannedAt) this.changed(k)
      }
      if (!this.waitingLines.size && this.recheck) {
        clearInterval(this.recheck)
        this.recheck = null
      }
    }, recheckMs)
    this.recheck.unref?.()
  }

  /**
   * A place got or lost its ticket, or left: wake the waiters that now have something to do — go on
   * (no earlier place without a ticket) or nudge a blocker (an earlier ticket from an older
   * generation). One pass over the line; the others sleep on.
   */
  private changed(key: string): void {
    const line = this.lines.get(key)
    if (!line?.sleepers.size) return
    const generation = line.generation!()
    let blocked = false
    let stale = false
    for (const p of line.places) {
      if (!blocked || stale) line.sleepers.get(p)?.()
      if (p.seenAt === generation) continue
      if (p.seenAt !== null) stale = true
      else blocked = true
    }
    line.scannedAt = generation
    line.stale = stale
  }
}
