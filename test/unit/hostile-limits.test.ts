/**
 * Limits a hostile or careless input meets before it reaches a timer or the stack: a duration a
 * timer would wait above 2^31-1 ms (Node fires it after 1 ms) is a ConfigurationError, and a
 * checkpoint state nested deeper than a reader accepts is an InvalidCheckpointError, not a RangeError.
 */
import { describe, expect, it } from 'vitest'
import { ConfigurationError, InvalidCheckpointError, MAX_TIMER_MS, timerDuration } from '../../src/index.js'
import { MemoryCoordinationHub, MemoryCoordinator, MemoryStore } from '../../src/testing/index.js'

const nested = (depth: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v }
  return v
}

describe('durations a timer waits', () => {
  it('are refused above 2^31-1 ms, in every option of the coordinator and in waitMs', async () => {
    expect(timerDuration(MAX_TIMER_MS, 'x')).toBe(MAX_TIMER_MS)
    expect(() => timerDuration('25d', 'leaseMs')).toThrow(/leaseMs: 25d is longer than a timer can wait \(at most 2147483647ms/)
    const hub = new MemoryCoordinationHub()
    for (const o of [{ leaseMs: '30d' }, { turnWaitMs: '30d' }, { maxPollMs: MAX_TIMER_MS + 1 }]) {
      expect(() => new MemoryCoordinator({ hub, ...o })).toThrow(ConfigurationError)
    }
    const c = new MemoryCoordinator({ hub, replicaId: 'a' })
    await c.start()
    await expect(c.acquireTurn('chat:1', { waitMs: '30d' })).rejects.toThrow(/waitMs: 30d is longer than a timer can wait/)
    await c.stop()
  })
})

describe('a checkpoint state nested too deep', () => {
  it('is an InvalidCheckpointError naming the limit, 5,000 deep as 64', async () => {
    const store = new MemoryStore({ hub: new MemoryCoordinationHub() })
    for (const depth of [64, 5000, 100_000]) {
      const err = await store
        .setCheckpointIf('chat:1', { flow: 'f', step: 's', state: nested(depth) as never }, null)
        .catch((e: unknown) => e)
      expect(err).toBeInstanceOf(InvalidCheckpointError)
      expect((err as Error).message).toMatch(/state is nested deeper than 63 levels of arrays and objects/)
    }
    expect(await store.setCheckpointIf('chat:1', { flow: 'f', step: 's', state: nested(63) as never }, null)).toBeGreaterThan(0)
  })
})
