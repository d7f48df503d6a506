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
})
