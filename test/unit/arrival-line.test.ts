/**
 * A replica's line for one chat: each acquisition takes its ticket once every earlier one has its
 * own, and waiting for that costs nothing per second whatever the backlog (no timer per waiter per
 * recheck), while a server change is still found and stale blockers nudged.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ArrivalLines, LOST, type Place } from '../../src/coordinator/arrival-line.js'
import { monotonicNow } from '../../src/clock.js'

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms))

function line(n: number) {
  const lines = new ArrivalLines()
  const nudged: number[] = []
  const places = Array.from({ length: n }, (_, i) => {
    const place: Place = { seenAt: null, lostAt: -Infinity, nudge: () => nudged.push(i), reschedule: () => {} }
    lines.join('chat:1', place)
    return place
  })
  return { lines, places, nudged }
}

afterEach(() => vi.restoreAllMocks())

describe('ArrivalLines.wait', () => {
  it('goes on in arrival order: each waiter once the one before it has a ticket at the current generation', async () => {
    const { lines, places } = line(3)
    const generation = 0
    const order: number[] = []
    const far = monotonicNow() + 60_000
    const b = lines.wait('chat:1', places[1]!, () => generation, far, 1000).then(() => order.push(1))
    const c = lines.wait('chat:1', places[2]!, () => generation, far, 1000).then(() => order.push(2))
    await tick(20)
    expect(order).toEqual([])
    lines.mark('chat:1', places[0]!, 0)
    await b
    await tick(20)
    expect(order).toEqual([1]) // c still waits for b's ticket
    lines.mark('chat:1', places[1]!, 0)
    await c
    expect(order).toEqual([1, 2])
  })

  it('500 waiters behind a take in flight for 300 ms: one timer each for the whole wait, not one per recheck', async () => {
    const { lines, places } = line(501)
    const spy = vi.spyOn(globalThis, 'setTimeout')
    const far = monotonicNow() + 60_000
    const waits = places.slice(1).map((p) => lines.wait('chat:1', p, () => 0, far, 10))
    await tick(300)
    const timers = spy.mock.calls.length
    // Before: every waiter re-armed a recheck timer every 10 ms (about 15,000 here).
    expect(timers).toBeLessThan(500 + 50)
    // The line then moves one place at a time, each woken when the one before it has its ticket.
    for (let i = 0; i < places.length; i++) {
      lines.mark('chat:1', places[i]!, 0)
      if (i < waits.length) await waits[i]
    }
    await Promise.all(waits)
  })

  it('a server change (a new generation) is found by the line rescan: the blocker whose ticket is from the old server is nudged', async () => {
    const { lines, places, nudged } = line(3)
    let generation = 0
    lines.mark('chat:1', places[0]!, 0) // its ticket, on this server; place 1's take is in flight
    const far = monotonicNow() + 60_000
    const waiting = lines.wait('chat:1', places[2]!, () => generation, far, 10)
    await tick(30)
    expect(nudged).toEqual([]) // nothing changed: nobody asked to poll
    generation = 1 // the server changed: place 0's ticket may be lost with it
    await tick(60)
    expect(nudged).toContain(0)
    expect(nudged).not.toContain(1) // no ticket to check yet
    lines.mark('chat:1', places[0]!, 1)
    lines.mark('chat:1', places[1]!, 1)
    await waiting
  })

  it('a blocker whose ticket is from an older server is nudged again at every rescan while it stays so, not once', async () => {
    const { lines, places, nudged } = line(2)
    lines.mark('chat:1', places[0]!, 0) // seen on the server of generation 0; the server is now generation 1
    const waiting = lines.wait('chat:1', places[1]!, () => 1, monotonicNow() + 60_000, 10)
    await tick(200)
    expect(nudged.filter((i) => i === 0).length).toBeGreaterThanOrEqual(5)
    lines.mark('chat:1', places[0]!, 1)
    await waiting
  })

  it('ends at giveUpAt with timeout, and with the signal with aborted', async () => {
    const { lines, places } = line(3)
    await expect(lines.wait('chat:1', places[1]!, () => 0, monotonicNow() + 30, 1000)).rejects.toMatchObject({ reason: 'timeout' })
    const ac = new AbortController()
    const w = lines.wait('chat:1', places[2]!, () => 0, monotonicNow() + 60_000, 1000, ac.signal)
    setTimeout(() => ac.abort(), 10)
    await expect(w).rejects.toMatchObject({ reason: 'aborted' })
  })
})

describe('ArrivalLines.lostWith', () => {
  it("marks every other place's ticket lost and nudges it; says whether one was earlier; answers sent before do not undo it", () => {
    const { lines, places, nudged } = line(4)
    for (const p of places.slice(0, 3)) lines.mark('chat:1', p, 0, 10)
    // Place 2 took a ticket and found none of ours: 0, 1 (earlier) and 3 (no ticket yet: untouched).
    expect(lines.lostWith('chat:1', places[2]!, 100)).toBe(true)
    expect(places.map((p) => p.seenAt)).toEqual([LOST, LOST, 0, null])
    expect(nudged).toEqual([0, 1])
    expect(lines.clear('chat:1', places[2]!, 0)).toBe(false) // 2 waits for 0 and 1 to take theirs again
    lines.mark('chat:1', places[0]!, 0, 90) // a 'queued' answer to a poll sent before the loss was found
    expect(places[0]!.seenAt).toBe(LOST)
    lines.mark('chat:1', places[0]!, 0, 110)
    lines.mark('chat:1', places[1]!, 0, 120)
    expect(lines.clear('chat:1', places[2]!, 0)).toBe(true)
    // The first place re-takes alone: only later places are marked, and it need not wait.
    expect(lines.lostWith('chat:1', places[0]!, 200)).toBe(false)
    expect(places.map((p) => p.seenAt)).toEqual([0, LOST, LOST, null])
  })
})

describe('ArrivalLines.lostWith, an earlier place without a ticket', () => {
  it('counts as earlier: its own reply just found its ticket gone, and it takes one again first', () => {
    const { lines, places } = line(2)
    lines.mark('chat:1', places[0]!, null) // between its 'dropped' reply and its new take
    expect(lines.lostWith('chat:1', places[1]!, 100)).toBe(true)
    expect(places[0]!.seenAt).toBe(null)
  })
})

describe('ArrivalLines clocks', () => {
  it('keeps the Redis clock of our calls per chat: a call in one chat is no bound for a grant in another', () => {
    const lines = new ArrivalLines()
    const place = (): Place => ({ seenAt: null, lostAt: -Infinity, nudge: () => {}, reschedule: () => {} })
    lines.join('chat:1', place())
    lines.join('chat:2', place())
    lines.answered('chat:1', 1000, 5_000_000, 0)
    expect(lines.clockOf('chat:1')!.callBefore(5_000_001, 0)).toEqual({ sentAt: 1000, answeredAt: 5_000_000, generation: 0 })
    expect(lines.clockOf('chat:2')!.callBefore(5_000_001, 0)).toBe(null)
    expect(lines.clockOf('chat:3')).toBe(null)
  })
})
