import { describe, expect, it } from 'vitest'
import { TurnWakes } from '../../src/coordinator/turn-wakes.js'
import { monotonicNow } from '../../src/clock.js'

describe('TurnWakes.pause', () => {
  it('a pause longer than a timer can wait (a later message sleeping through a 30-day wait) sleeps, and a push ends it', async () => {
    const wakes = new TurnWakes()
    const started = monotonicNow()
    let settled = false
    const pause = wakes
      .pause('chat:1', 7, () => 30 * 24 * 3_600_000, started)
      .then((r) => {
        settled = true
        return r
      })
    await new Promise((r) => setTimeout(r, 50))
    expect(settled).toBe(false) // Node would fire a longer timer at once
    wakes.deliver('chat:1', 7, undefined, false, () => true)
    expect(await pause).toEqual({ woken: true })
  })

  it('reschedule asks the pause how long it lasts again: a sleeper that became keeper polls at its new time', async () => {
    const wakes = new TurnWakes()
    let ms = 60_000
    let asked = 0
    const t0 = monotonicNow()
    const pause = wakes.pause('chat:1', 3, () => (asked++, ms), t0)
    wakes.reschedule('chat:1', 3) // still a minute: sleeps on
    await new Promise((r) => setTimeout(r, 20))
    expect(asked).toBe(2)
    ms = 30
    wakes.reschedule('chat:1', 3)
    expect(await pause).toEqual({ woken: false })
    expect(asked).toBe(3)
    expect(monotonicNow() - t0).toBeGreaterThanOrEqual(45) // 20 ms, then 30 more from the second reschedule
  })

  it('a pause whose time is up when it begins or is rescheduled (the wait ended) ends at once, and is no longer woken', async () => {
    const wakes = new TurnWakes()
    expect(await wakes.pause('chat:1', 4, () => 0, monotonicNow())).toEqual({ woken: false })
    let ms = 60_000
    const pause = wakes.pause('chat:1', 5, () => ms, monotonicNow())
    ms = -1
    wakes.reschedule('chat:1', 5)
    expect(await pause).toEqual({ woken: false })
    const next = wakes.pause('chat:1', 5, () => 60_000, monotonicNow())
    wakes.deliver('chat:1', 5, undefined, false, () => false)
    expect(await next).toEqual({ woken: true }) // the ended pause left nothing behind on that ticket
  })

  it('two acquisitions sleeping on one ticket number (a failed-over server gave it again) are both woken and rescheduled', async () => {
    // The earlier one's ticket went with the failover; the later one took the same number on the new
    // server. A wake-up or a reschedule for that number must reach the earlier one too, or it sleeps
    // until its wait ends (only its own poll learns that its ticket is gone).
    const wakes = new TurnWakes()
    let ms = 60_000
    const earlier = wakes.pause('chat:1', 3, () => ms, monotonicNow())
    const later = wakes.pause('chat:1', 3, () => ms, monotonicNow())
    ms = 0
    wakes.reschedule('chat:1', 3)
    expect(await earlier).toEqual({ woken: false })
    expect(await later).toEqual({ woken: false })
    const again = [wakes.pause('chat:1', 3, () => 60_000, monotonicNow()), wakes.pause('chat:1', 3, () => 60_000, monotonicNow())]
    wakes.deliver('chat:1', 3, undefined, false, () => false)
    expect(await Promise.all(again)).toEqual([{ woken: true }, { woken: true }])
  })
})
