import { describe, expect, it } from 'vitest'
import { TurnWakes } from '../../src/coordinator/turn-wakes.js'
import { monotonicNow } from '../../src/clock.js'

describe('TurnWakes.pause', () => {
  it('a pause longer than a timer can wait (a later message sleeping through a 30-day wait) sleeps, and a push ends it', async () => {
    const wakes = new TurnWakes()
    const started = monotonicNow()
    let settled = false
    const pause = wakes.pause('chat:1', 7, 30 * 24 * 3_600_000, started).then((r) => {
      settled = true
      return r
    })
    await new Promise((r) => setTimeout(r, 50))
    expect(settled).toBe(false) // Node would fire a longer timer at once
    wakes.deliver('chat:1', 7, undefined, false, () => true)
    expect(await pause).toMatchObject({ woken: true, grant: undefined })
  })

  it('reschedule ends a sleeping pause without a wake-up, so the waiter works out when to poll', async () => {
    const wakes = new TurnWakes()
    const pause = wakes.pause('chat:1', 3, 60_000, monotonicNow())
    wakes.reschedule('chat:1', 3)
    expect(await pause).toEqual({ woken: false, reschedule: true })
  })

  it('two acquisitions sleeping on one ticket number (a failed-over server gave it again) are both woken and rescheduled', async () => {
    // The earlier one's ticket went with the failover; the later one took the same number on the new
    // server. A wake-up or a reschedule for that number must reach the earlier one too, or it sleeps
    // until its wait ends (only its own poll learns that its ticket is gone).
    const wakes = new TurnWakes()
    const earlier = wakes.pause('chat:1', 3, 60_000, monotonicNow())
    const later = wakes.pause('chat:1', 3, 60_000, monotonicNow())
    wakes.reschedule('chat:1', 3)
    expect(await earlier).toEqual({ woken: false, reschedule: true })
    expect(await later).toEqual({ woken: false, reschedule: true })
    const again = [wakes.pause('chat:1', 3, 60_000, monotonicNow()), wakes.pause('chat:1', 3, 60_000, monotonicNow())]
    wakes.deliver('chat:1', 3, undefined, false, () => false)
    expect(await Promise.all(again)).toEqual([
      { woken: true, grant: undefined, handed: false },
      { woken: true, grant: undefined, handed: false },
    ])
  })
})
