/** The benchmark's repeated turn scenarios: one row per scenario, medians with their range. */
import { describe, expect, it } from 'vitest'
import { aggregateRuns } from '../../bench/lib/stats.js'

const run = (msgPerS: number, overlaps: number, max: number, p50: number) => ({
  adapter: 'botmesh',
  pattern: 'hot1',
  workMs: 0,
  messages: 100,
  msgPerS,
  redisCpuUsPerMsg: msgPerS / 100,
  overlaps,
  errors: 0,
  acquireMs: { n: 100, p50, p99: p50 * 2, max, mean: p50 },
  errorSamples: [],
})

describe('aggregateRuns', () => {
  it('takes medians, sums the counts, keeps the largest max and the range', () => {
    const a = aggregateRuns([run(300, 0, 9, 1), run(100, 1, 30, 3), run(200, 0, 12, 2)])
    expect(a.repeats).toBe(3)
    expect(a.msgPerS).toBe(200)
    expect(a.redisCpuUsPerMsg).toBe(2)
    expect(a.messages).toBe(300)
    expect(a.overlaps).toBe(1)
    expect(a.acquireMs).toEqual({ n: 100, p50: 2, p99: 4, max: 30, mean: 2 })
    expect(a.range).toMatchObject({ msgPerS: [100, 300], redisCpuUsPerMsg: [1, 3] })
    expect(a.adapter).toBe('botmesh')
    expect(a.runs).toHaveLength(3)
  })

  it('an even number of runs: the mean of the middle two', () => {
    expect(aggregateRuns([run(100, 0, 1, 1), run(400, 0, 1, 1), run(200, 0, 1, 1), run(300, 0, 1, 1)]).msgPerS).toBe(250)
  })

  it('one run is itself', () => {
    const one = run(123, 0, 5, 1)
    expect(aggregateRuns([one])).toEqual({ ...one, repeats: 1 })
  })
})
