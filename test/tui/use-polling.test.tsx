import React from 'react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { render } from 'ink-testing-library'
import { Text } from 'ink'
import { usePolling } from '../../commands/tui/use-polling.js'
import { strip } from './frame.js'

/** Renders the hook's state; `seen` records every render's state (ink throttles its frames). */
function Probe(props: { read: () => Promise<number>; paused?: boolean; intervalMs?: number; seen?: string[] }) {
  const p = usePolling(props.read, { intervalMs: props.intervalMs ?? 1000, paused: props.paused })
  props.seen?.push(`data=${p.data ?? '-'} error=${p.error?.message ?? '-'} failures=${p.failures}`)
  return <Text>{`data=${p.data ?? '-'} error=${p.error?.message ?? '-'} failures=${p.failures}`}</Text>
}

describe('usePolling', () => {
  beforeEach(() => {
    // The polling timers are fake; React's scheduler (setImmediate) stays real so renders happen.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('reads at once, then every interval; pausing stops it; unmounting clears the interval', async () => {
    let n = 0
    const read = vi.fn(async () => ++n)
    const app = render(<Probe read={read} />)
    await vi.advanceTimersByTimeAsync(0)
    expect(read).toHaveBeenCalledTimes(1)
    await vi.advanceTimersByTimeAsync(3000)
    expect(read).toHaveBeenCalledTimes(4)
    expect(strip(app.lastFrame())).toBe('data=4 error=- failures=0')
    app.rerender(<Probe read={read} paused />)
    await vi.advanceTimersByTimeAsync(5000)
    expect(read).toHaveBeenCalledTimes(4)
    app.rerender(<Probe read={read} />) // resuming reads at once
    await vi.advanceTimersByTimeAsync(0)
    expect(read).toHaveBeenCalledTimes(5)
    app.unmount()
    await vi.advanceTimersByTimeAsync(5000)
    expect(read).toHaveBeenCalledTimes(5)
  })

  it('never overlaps reads: a slow read makes the next ticks skip', async () => {
    let release: (v: number) => void = () => {}
    const read = vi.fn(() => new Promise<number>((r) => (release = r)))
    const app = render(<Probe read={read} />)
    await vi.advanceTimersByTimeAsync(4500)
    expect(read).toHaveBeenCalledTimes(1)
    release(7)
    await vi.advanceTimersByTimeAsync(500)
    expect(read).toHaveBeenCalledTimes(2)
    expect(strip(app.lastFrame())).toContain('data=7')
    app.unmount()
  })

  it('keeps the last good value while reads fail, counts the failures, and recovers', async () => {
    let down = false
    const read = vi.fn(async () => {
      if (down) throw new Error('connection refused')
      return 1
    })
    const seen: string[] = []
    const app = render(<Probe read={read} seen={seen} />)
    await vi.advanceTimersByTimeAsync(0)
    down = true
    await vi.advanceTimersByTimeAsync(2000)
    expect(seen.at(-1)).toBe('data=1 error=connection refused failures=2')
    down = false
    await vi.advanceTimersByTimeAsync(1000)
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)) // React's (real) scheduler
    expect(seen.at(-1)).toBe('data=1 error=- failures=0')
    app.unmount()
  })
})
