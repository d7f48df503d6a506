/**
 * Run a test file on a fake clock: vitest fake timers drive the coordinators' monotonic clock
 * (src/clock.ts reads the global `performance`), their timers, and the memory hub's "Redis time"
 * (by default the same global clock). The clock jumps to the next timer whenever the process is
 * idle; the memory hub does no I/O, so idle means every reply was processed — runs take no real time
 * waiting and their order of events is the same every time. Redis runs stay on real time.
 */
import { afterAll, beforeAll, vi } from 'vitest'

export const FAKED = [
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'setImmediate',
  'clearImmediate',
  'performance',
  'Date',
] as const

export function useFakeClock(): void {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: [...FAKED] })
    vi.setTimerTickMode('nextTimerAsync')
  })
  afterAll(() => {
    vi.useRealTimers()
  })
}
