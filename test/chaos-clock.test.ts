/**
 * The fault campaign's checkers compare events recorded by different processes (replicas, the
 * harness) on one clock, chaos/clock.mjs: "fence A passed assertHeld after fence B was granted" is
 * only true if both processes read the same clock. A per-process origin breaks that: Node's
 * `performance.timeOrigin` is the wall clock sampled once at process start, so a process whose start
 * was pre-empted between that sample and the monotonic one (a loaded machine: measured 5.6 ms in one
 * start out of 150), or that started after the wall clock was stepped, reads every time shifted by
 * that much for its whole life — and the checkers report overlaps that never happened (or miss real
 * ones). The child in the middle below starts with such a shifted origin.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const CLOCK = fileURLToPath(new URL('../chaos/clock.mjs', import.meta.url))

/** now() read by a fresh process whose start-up wall-clock sample is off by `originShiftMs`. */
function readInChild(originShiftMs: number): Promise<number> {
  const src = `
    import { performance } from 'node:perf_hooks'
    Object.defineProperty(performance, 'timeOrigin', { value: performance.timeOrigin + ${originShiftMs}, configurable: true })
    const { now } = await import(${JSON.stringify(CLOCK)})
    process.stdout.write(String(now()))
  `
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', src], { timeout: 20_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(Number(stdout)),
    ),
  )
}

describe('fault campaign clock', () => {
  it('is one machine-wide clock: processes started one after another read it in order, whatever their start-up wall clock', async () => {
    const first = await readInChild(0)
    const late = await readInChild(10_000) // its wall-clock sample at start was 10 s late (or the clock was stepped)
    const early = await readInChild(-10_000)
    const last = await readInChild(0)
    expect(Number.isFinite(first)).toBe(true)
    expect(late).toBeGreaterThan(first)
    expect(early).toBeGreaterThan(late)
    expect(last).toBeGreaterThan(early)
  })
})
